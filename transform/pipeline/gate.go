package pipeline

import "github.com/llmstream/llmstream/transform"

// gate holds the events of a reply until the reply is validated
// (CONTRACT.md §10): a client must not be shown a result that a retry
// then replaces. The events are kept with their text copied into one
// buffer, adjacent deltas of the same kind and index merged, so that
// holding costs no allocation per event once the buffers have grown.
//
// The raw reply (KindRaw) is kept apart, whole, and released first as one
// event: an encoder writes either the raw reply (gymbro) or the parsed
// events (every other protocol), never both, so the order between the two
// means nothing, and interleaved they would not merge.
type gate struct {
	events []heldEvent
	text   []byte
	raw    []byte
}

// heldEvent is an event whose Text is text[start:end] of its gate.
type heldEvent struct {
	ev         transform.Event
	start, end int
}

// maxKeptGate is the largest text buffer a gate keeps for the next
// stream of a pooled pipeline.
const maxKeptGate = 1 << 20

// hold keeps ev; its Text is copied.
func (g *gate) hold(ev transform.Event) {
	if ev.Kind == transform.KindRaw {
		g.raw = append(g.raw, ev.Text...)
		return
	}
	if n := len(g.events); n > 0 && ev.Kind.IsDelta() {
		last := &g.events[n-1]
		if last.ev.Kind == ev.Kind && last.ev.Index == ev.Index && last.end == len(g.text) {
			g.text = append(g.text, ev.Text...)
			last.end = len(g.text)
			return
		}
	}
	start := len(g.text)
	g.text = append(g.text, ev.Text...)
	ev.Text = nil
	g.events = append(g.events, heldEvent{ev: ev, start: start, end: len(g.text)})
}

// empty reports whether nothing is held.
func (g *gate) empty() bool { return len(g.events) == 0 && len(g.raw) == 0 }

// release passes every held event to deliver, in order, and forgets
// them. An event's Text is valid only during its call, as for any
// emitted event.
func (g *gate) release(deliver func(transform.Event)) {
	if len(g.raw) > 0 {
		deliver(transform.Event{Kind: transform.KindRaw, Text: g.raw})
	}
	for i := range g.events {
		h := g.events[i]
		if h.end > h.start {
			h.ev.Text = g.text[h.start:h.end]
		}
		deliver(h.ev)
	}
	g.discard()
}

// discard forgets every held event.
func (g *gate) discard() {
	clear(g.events) // the Clarify and List they hold
	g.events = g.events[:0]
	if cap(g.text) > maxKeptGate {
		g.text = nil
	}
	if cap(g.raw) > maxKeptGate {
		g.raw = nil
	}
	g.text, g.raw = g.text[:0], g.raw[:0]
}
