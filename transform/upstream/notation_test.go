package upstream

import (
	"errors"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/sse"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// formatChunk writes a decoded chunk in a compact notation, leaving out what
// it lacks:
//
//	id=… model=… C"content" R"reasoning" TD[0 id type name "args"] FIN(reason) U{…} STRAY(1) V(code:detail) DONE ERR(type,code,"message")
//
// A tool call delta shows "_" for a missing index, "@2" for a positional
// one at position 2, and "-" for an empty id, type or name.
func formatChunk(c *Chunk) string {
	var parts []string
	add := func(s string) { parts = append(parts, s) }
	q := func(p []byte) string { return strconv.Quote(string(p)) }
	if len(c.ID) > 0 {
		add("id=" + string(c.ID))
	}
	if len(c.Model) > 0 {
		add("model=" + string(c.Model))
	}
	if len(c.Reasoning) > 0 {
		add("R" + q(c.Reasoning))
	}
	if len(c.Content) > 0 {
		add("C" + q(c.Content))
	}
	for _, tc := range c.ToolCalls {
		idx := "_"
		switch {
		case tc.HasIndex:
			idx = strconv.Itoa(tc.Index)
		case tc.Positional:
			idx = "@" + strconv.Itoa(tc.Position)
		}
		add("TD[" + idx + " " + dash(tc.ID) + " " + dash(tc.Type) + " " + dash(tc.Name) + " " + q(tc.Arguments) + "]")
	}
	if c.FinishReason != nil {
		add("FIN(" + string(c.FinishReason) + ")")
	}
	if c.Usage != nil {
		add("U" + string(c.Usage))
	}
	if c.StrayChoice != nil {
		add("STRAY(" + string(c.StrayChoice) + ")")
	}
	for _, v := range c.Violations {
		add("V(" + v.Code + ":" + string(v.Detail) + ")")
	}
	if c.Done {
		add("DONE")
	}
	if c.Err != nil {
		add("ERR(" + string(c.Err.Type) + "," + string(c.Err.Code) + "," + q(c.Err.Message) + ")")
	}
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, " ")
}

func dash(p []byte) string {
	if len(p) == 0 {
		return "-"
	}
	return string(p)
}

// transcript is what a body decodes to, at two levels: the chunks (one line
// each) and the events a minimal router makes of them.
type transcript struct {
	chunks []string
	events []transform.Event
}

// decodeBody runs body, cut into chunks, through the upstream layers the way
// the router will: sse.Framer, ChunkDecoder, ToolCalls. The stand-in router
// turns the chunk's violations and stray choice into KindViolation,
// reasoning into KindReasoningDelta, content into KindAnswerDelta, usage
// into KindUsage, finish_reason into ToolCalls.Finish and KindFinish, and
// an error (in-stream, malformed chunk, framing, assembly) into KindError,
// after which it stops. The events are cloned.
func decodeBody(tc *ToolCalls, chunks ...[]byte) transcript {
	var (
		tr      transcript
		fr      sse.Framer
		dec     ChunkDecoder
		stopped bool
	)
	emit := func(ev transform.Event) { tr.events = append(tr.events, ev.Clone()) }
	fail := func(code string) {
		emit(transform.Event{Kind: transform.KindError, Code: code})
		stopped = true
	}
	event := func(ev sse.Event) {
		if stopped {
			return
		}
		c, err := dec.Decode(ev.Data)
		if err != nil {
			tr.chunks = append(tr.chunks, "malformed")
			fail(transform.CodeUpstreamError)
			return
		}
		tr.chunks = append(tr.chunks, formatChunk(c))
		route(c, tc, emit, fail)
		if c.Done {
			stopped = true
		}
	}
	for _, p := range chunks {
		if err := fr.Feed(p, event); err != nil {
			if !stopped {
				fail(transform.CodeSSELineTooLong)
			}
			return tr
		}
	}
	if err := fr.Close(event); err != nil && !stopped {
		fail(transform.CodeUpstreamError)
	}
	return tr
}

// route is the stand-in router of decodeBody for one decoded chunk.
func route(c *Chunk, tc *ToolCalls, emit transform.Emit, fail func(string)) {
	if c.Err != nil {
		fail(transform.CodeUpstreamError)
		return
	}
	for _, v := range c.Violations {
		emit(transform.Event{Kind: transform.KindViolation, Code: v.Code, Text: v.Detail})
	}
	if c.StrayChoice != nil {
		emit(transform.Event{Kind: transform.KindViolation, Code: CodeStrayChoice, Text: c.StrayChoice})
	}
	if len(c.Reasoning) > 0 {
		emit(transform.Event{Kind: transform.KindReasoningDelta, Text: c.Reasoning})
	}
	if len(c.Content) > 0 {
		emit(transform.Event{Kind: transform.KindAnswerDelta, Text: c.Content})
	}
	for _, d := range c.ToolCalls {
		if err := tc.Add(d, emit); err != nil {
			code := transform.CodeUpstreamError
			if errors.Is(err, ErrTooManyToolCalls) {
				code = transform.CodeTooManyToolCalls
			}
			fail(code)
			return
		}
	}
	if c.FinishReason != nil {
		tc.Finish(emit)
		emit(transform.Event{Kind: transform.KindFinish, Code: string(c.FinishReason)})
	}
	if c.Usage != nil {
		emit(transform.Event{Kind: transform.KindUsage, Text: c.Usage})
	}
}

// formatEvents is the split-invariant notation of the router's events.
func formatEvents(evs []transform.Event) string {
	norm, _ := transformtest.Normalize(evs)
	return transformtest.Format(norm)
}
