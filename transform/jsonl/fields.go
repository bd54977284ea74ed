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

// block appends text to a held block, bounded by MaxBlockBytes.
func (p *Parser) block(dst, text []byte) []byte {
	if len(dst)+len(text) > p.opts.Limits.MaxBlockBytes {
		p.Fail(transform.CodeBlockTooLong, "jsonl: held text longer than the block limit")
		return dst
	}
	return append(dst, text...)
}
