package jsonl

import "github.com/llmstream/llmstream/transform/jsonstream"

// event is a JSONSeq event type (specs/001 §1).
type event uint8

const (
	evNone event = iota // the object has no "event" (yet)
	evUnknown
	evSerpSummary
	evThinkingStart
	evPhaseStart
	evPhaseDelta
	evThinkingEnd
	evFinalDelta
	evSerpQueries
	evFinalEnd
)

var eventNames = [...][]byte{
	evSerpSummary:   []byte("serp_summary"),
	evThinkingStart: []byte("thinking_start"),
	evPhaseStart:    []byte("phase_start"),
	evPhaseDelta:    []byte("phase_delta"),
	evThinkingEnd:   []byte("thinking_end"),
	evFinalDelta:    []byte("final_delta"),
	evSerpQueries:   []byte("serp_queries"),
	evFinalEnd:      []byte("final_end"),
}

// eventNamed returns the event called name.
func eventNamed(name []byte) event {
	for ev := evSerpSummary; ev <= evFinalEnd; ev++ {
		if string(name) == string(eventNames[ev]) {
			return ev
		}
	}
	return evUnknown
}

// object is the state of the current line's object.
type object struct {
	off   int64 // offset of its '{'
	ev    event
	named bool               // the "event" value ended
	name  jsonstream.Keyword // the "event" value

	id     int
	idSet  bool // an "id" value ended
	idOK   bool // … and was a positive integer
	idBuf  [20]byte
	nidBuf int

	// open is true once the event's order was checked and its section
	// opened, so that its text streams (phase_delta, final_delta).
	open bool
	// hold keeps text that arrived before the object said what it is (its
	// "event" or, for phase_delta, its "id"), and serp_summary's text;
	// bounded by MaxBlockBytes.
	hold    []byte
	title   []byte
	query   []byte
	queries []string
	null    bool // the field value being read is null
}

func (o *object) reset(off int64) {
	hold, title, query, queries := o.hold[:0], o.title[:0], o.query[:0], o.queries[:0]
	*o = object{off: off, hold: hold, title: title, query: query, queries: queries}
}

// tryOpen opens a streaming event's section as soon as the object says
// what it is, so that its text streams before the line ends; it then
// releases the text held until now.
func (p *Parser) tryOpen() {
	o := &p.obj
	if o.open || !o.named {
		return
	}
	switch {
	case o.ev == evFinalDelta:
	case o.ev == evPhaseDelta && o.idSet:
	default:
		return
	}
	p.seq.open(p, o)
	o.open = true
	if len(o.hold) > 0 {
		p.eventText(o.hold)
		o.hold = o.hold[:0]
	}
}

// eventText handles text of the "text" field.
func (p *Parser) eventText(text []byte) {
	o := &p.obj
	switch {
	case o.open && o.ev == evFinalDelta:
		p.AnswerText(text)
	case o.open:
		p.PhaseText(text)
	case !o.named || o.ev == evPhaseDelta || o.ev == evSerpSummary:
		o.hold = p.block(o.hold, text)
	}
	// Text of any other event means nothing in JSONSeq and is dropped.
}

// breakObject handles a line's object that broke before it said what it
// is: the text it held is the model's, and is answer text ahead of the
// rest of the line (CONTRACT.md §7). Text held for a named event stays
// where that event would have put it: a phase_delta's reasoning without
// its id cannot be placed and is left out, as reasoning may be. It
// reports whether the line's text so far went to the answer (the held
// text, or a final_delta's streamed text).
func (p *Parser) breakObject() bool {
	o := &p.obj
	if !o.named && len(o.hold) > 0 {
		p.AnswerText(o.hold)
		o.hold = o.hold[:0]
		return true
	}
	return o.open && o.ev == evFinalDelta
}

// endObject completes the line's event at its object's '}'.
func (p *Parser) endObject() {
	o := &p.obj
	switch {
	case !o.named || o.ev == evUnknown:
		// JL07: dropped, with its name.
		p.Violation(CodeUnknownEvent, o.name.Bytes(), o.off)
	case o.open:
	case o.ev == evPhaseDelta || o.ev == evFinalDelta:
		p.seq.open(p, o)
		o.open = true
		p.eventText(o.hold)
	default:
		p.seq.event(p, o)
	}
	o.reset(-1)
}
