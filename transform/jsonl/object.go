package jsonl

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// The watched fields of a line's object, flat or nested under "data"
// (specs/001 §1 names them data.*; models write both). A field's index in
// paths is its jsonstream path id.
const (
	fRoot = iota
	fEvent
	fID
	fText
	fTitle
	fQuery
	fDataID
	fDataText
	fDataTitle
	fDataQuery
)

var paths = jsonstream.MustCompile(
	jsonstream.Watch{Path: ""},
	jsonstream.Watch{Path: "event", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "id", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "text", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "title", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "queries[*]", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "data.id", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "data.text", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "data.title", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "data.queries[*]", Mode: jsonstream.Text},
)

// field folds a data.* path onto its flat twin.
func field(path int) int {
	if path >= fDataID {
		return path - fDataID + fID
	}
	return path
}

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

// tokens receives the tokenizer's reports for the Parser.
type tokens Parser

// HandleToken dispatches a token of the line's object.
func (h *tokens) HandleToken(tk *jsonstream.Token) {
	p := (*Parser)(h)
	if p.failed {
		return
	}
	switch tk.Kind {
	case jsonstream.TokenText:
		p.fieldText(field(tk.Path), tk.Text)
	case jsonstream.TokenStart:
		if f := field(tk.Path); f == fQuery {
			p.obj.query = p.obj.query[:0]
		}
	case jsonstream.TokenEnd:
		p.fieldEnd(field(tk.Path), tk)
	case jsonstream.TokenViolation:
		p.violation(tk.Code, tk.Text, tk.Offset)
	case jsonstream.TokenInvalid:
		if tk.Code == jsonstream.CodeUnterminated {
			p.violation(CodeTruncatedLine, nil, tk.Offset)
		} else {
			p.violation(CodeBadLine, []byte(tk.Code), tk.Offset)
		}
	case jsonstream.TokenLimit:
		p.fail(tk.Code, string(tk.Text))
	}
}

// fieldText handles a delta of a string field.
func (p *Parser) fieldText(f int, text []byte) {
	o := &p.obj
	switch f {
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
		p.fail(transform.CodeBlockTooLong, "jsonl: held text longer than the block limit")
		return dst
	}
	return append(dst, text...)
}

// fieldEnd handles the end of a field's value.
func (p *Parser) fieldEnd(f int, tk *jsonstream.Token) {
	o := &p.obj
	switch f {
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
		p.answerText(text)
	case o.open:
		p.emit(transform.Event{Kind: transform.KindPhaseDelta, Index: p.seq.phase, Text: text})
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
		p.violation(CodeUnknownEvent, o.name.Bytes(), o.off)
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
