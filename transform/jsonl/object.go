package jsonl

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonformat"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// The fields of a line's object, bound to their paths in watched: flat
// or nested under "data" (specs/001 §1 names them data.*; models write
// both), which is the same field.
const (
	fRoot = iota
	fEvent
	fID
	fText
	fTitle
	fQuery
)

var watched = jsonformat.MustCompile(
	jsonformat.Field{ID: fRoot, Path: ""},
	jsonformat.Field{ID: fEvent, Path: "event", Mode: jsonstream.Text},
	jsonformat.Field{ID: fID, Path: "id", Mode: jsonstream.Text},
	jsonformat.Field{ID: fText, Path: "text", Mode: jsonstream.Text},
	jsonformat.Field{ID: fTitle, Path: "title", Mode: jsonstream.Text},
	jsonformat.Field{ID: fQuery, Path: "queries[*]", Mode: jsonstream.Text},
	jsonformat.Field{ID: fID, Path: "data.id", Mode: jsonstream.Text},
	jsonformat.Field{ID: fText, Path: "data.text", Mode: jsonstream.Text},
	jsonformat.Field{ID: fTitle, Path: "data.title", Mode: jsonstream.Text},
	jsonformat.Field{ID: fQuery, Path: "data.queries[*]", Mode: jsonstream.Text},
)

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
}

func (o *object) reset(off int64) {
	hold, title, query, queries := o.hold[:0], o.title[:0], o.query[:0], o.queries[:0]
	*o = object{off: off, hold: hold, title: title, query: query, queries: queries}
}

// fields is the Parser as its jsonformat.Base sees it: the meaning of the
// fields of a line's object.
type fields Parser

// FieldStart handles the start of a field's value.
func (h *fields) FieldStart(id int, tk *jsonstream.Token) {
	p := (*Parser)(h)
	if id == fQuery {
		p.obj.query = p.obj.query[:0]
	}
}

// FieldText handles a piece of a string field.
func (h *fields) FieldText(id int, text []byte) {
	p := (*Parser)(h)
	o := &p.obj
	switch id {
	case fEvent:
		o.name.Append(text)
	case fID:
		if o.nidBuf+len(text) <= len(o.idBuf) {
			o.nidBuf += copy(o.idBuf[o.nidBuf:], text)
		} else {
			o.nidBuf = len(o.idBuf) + 1
		}
	case fTitle:
		o.title = p.block(o.title, text)
	case fQuery:
		o.query = p.block(o.query, text)
	case fText:
		p.eventText(text)
	}
}

// block appends text to a held block, bounded by MaxBlockBytes.
func (p *Parser) block(dst, text []byte) []byte {
	if len(dst)+len(text) > p.opts.Limits.MaxBlockBytes {
		p.Fail(transform.CodeBlockTooLong, "jsonl: held text longer than the block limit")
		return dst
	}
	return append(dst, text...)
}

// FieldEnd handles the end of a field's value.
func (h *fields) FieldEnd(id int, tk *jsonstream.Token) {
	p := (*Parser)(h)
	o := &p.obj
	switch id {
	case fEvent:
		if o.named {
			return // a repeated "event" (duplicate_key): the first has been acted on
		}
		o.named = true
		o.ev = evUnknown
		if tk.Type == jsonstream.TypeString && !o.name.TooLong() {
			o.ev = eventNamed(o.name.Bytes())
		}
		p.tryOpen()
	case fID:
		o.idSet = true
		o.id, o.idOK = 0, false
		switch tk.Type {
		case jsonstream.TypeNumber:
			o.id, o.idOK = parsekit.ParsePhaseID(tk.Text)
		case jsonstream.TypeString:
			if o.nidBuf <= len(o.idBuf) {
				o.id, o.idOK = parsekit.ParsePhaseID(o.idBuf[:o.nidBuf])
			}
		}
		o.nidBuf = 0
		p.tryOpen()
	case fQuery:
		if tk.Type == jsonstream.TypeString {
			o.queries = append(o.queries, string(o.query))
		}
	case fRoot:
		p.endObject()
	}
}

// Broken handles a line whose object broke or was cut off.
func (h *fields) Broken(tk *jsonstream.Token) {
	p := (*Parser)(h)
	if tk.Code == jsonstream.CodeUnterminated {
		p.Violation(CodeTruncatedLine, nil, tk.Offset)
	} else {
		p.Violation(CodeBadLine, []byte(tk.Code), tk.Offset)
	}
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
