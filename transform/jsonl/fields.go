package jsonl

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonformat"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// The fields of a line's object, bound to their paths in watched: flat
// or nested under "data" (specs/001 §1 names them data.*; models write
// both), which is the same field. The fields shown to the user ("text",
// "title", the queries) are Raw as well as Text, so that a value of the
// wrong type still arrives, as its JSON text (CodeWrongType).
const (
	fRoot = iota
	fEvent
	fID
	fText
	fTitle
	fQueries // the serp_queries list
	fQuery   // one of its queries
	fData
	numFields
)

var watched = jsonformat.MustCompile(
	jsonformat.Field{ID: fRoot, Path: ""},
	jsonformat.Field{ID: fEvent, Path: "event", Mode: jsonstream.Text},
	jsonformat.Field{ID: fID, Path: "id", Mode: jsonstream.Text},
	jsonformat.Field{ID: fText, Path: "text", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fTitle, Path: "title", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fQueries, Path: "queries", Mode: jsonstream.Text},
	jsonformat.Field{ID: fQuery, Path: "queries[*]", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fData, Path: "data"},
	jsonformat.Field{ID: fID, Path: "data.id", Mode: jsonstream.Text},
	jsonformat.Field{ID: fText, Path: "data.text", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fTitle, Path: "data.title", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fQueries, Path: "data.queries", Mode: jsonstream.Text},
	jsonformat.Field{ID: fQuery, Path: "data.queries[*]", Mode: jsonstream.Raw | jsonstream.Text},
)

// fieldNames name the fields in wrong_type violations.
var fieldNames = [numFields][]byte{
	fID:      []byte("id"),
	fText:    []byte("text"),
	fTitle:   []byte("title"),
	fQueries: []byte("queries"),
	fQuery:   []byte("queries[]"),
	fData:    []byte("data"),
}

// fields is the Parser as its jsonformat.Base sees it: the meaning of the
// fields of a line's object.
type fields Parser

// FieldStart handles the start of a field's value.
func (h *fields) FieldStart(id int, tk *jsonstream.Token) {
	p := (*Parser)(h)
	o := &p.obj
	// A null is no value: the raw "null" of a Raw field is not its text.
	o.null = tk.Type == jsonstream.TypeNull
	switch id {
	case fQuery, fQueries:
		o.query = o.query[:0]
	}
}

// FieldText handles a piece of a field's value: decoded string content,
// or the JSON text of a value of the wrong type (Raw).
func (h *fields) FieldText(id int, text []byte) {
	p := (*Parser)(h)
	o := &p.obj
	if o.null {
		return
	}
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
	case fQuery, fQueries:
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
		// An "event" that is not a string names no event: unknown_event
		// (JL07), not wrong_type.
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
		default:
			p.checkType(id, tk, jsonstream.TypeNumber)
		}
		o.nidBuf = 0
		p.tryOpen()
	case fText, fTitle:
		p.checkType(id, tk, jsonstream.TypeString)
	case fQuery:
		p.checkType(id, tk, jsonstream.TypeString)
		// Cleaning keeps at most 5 queries; 64 leave room for the
		// duplicates and sensitive ones it drops, and bound what a list of
		// empty strings, which the block limit does not count, can hold.
		if tk.Type != jsonstream.TypeNull && len(o.queries) < maxHeldQueries {
			o.queries = append(o.queries, string(o.query))
		}
	case fQueries:
		p.endQueries(tk)
	case fData:
		p.checkType(id, tk, jsonstream.TypeObject)
	case fRoot:
		p.endObject()
	}
}

// endQueries ends a "queries" value. A list that is a string, a number or
// a literal is one query, reported; an object, which has no text to show,
// is only reported.
func (p *Parser) endQueries(tk *jsonstream.Token) {
	o := &p.obj
	switch tk.Type {
	case jsonstream.TypeArray, jsonstream.TypeNull:
		return
	case jsonstream.TypeNumber, jsonstream.TypeBool:
		o.query = p.block(o.query, tk.Text)
	}
	p.checkType(fQueries, tk, jsonstream.TypeArray)
	if tk.Type != jsonstream.TypeObject && !p.Failed() && len(o.queries) < maxHeldQueries {
		o.queries = append(o.queries, string(o.query))
	}
}

// maxHeldQueries bounds the queries an event holds (see FieldEnd).
const maxHeldQueries = 64

// checkType reports field id, whose value's end is tk, if its type is
// neither want nor null (CodeWrongType).
func (p *Parser) checkType(id int, tk *jsonstream.Token, want jsonstream.Type) {
	if tk.Type != want && tk.Type != jsonstream.TypeNull {
		p.Violation(CodeWrongType, fieldNames[id], tk.Offset)
	}
}

// Broken handles a line whose object broke, was cut off or outgrew
// max_key or max_depth. A limit is reported with its own code, as the
// other JSON formats report it; the rest of the line is the model's text,
// as a broken line's is (a key too long from its opening quote).
func (h *fields) Broken(tk *jsonstream.Token) {
	p := (*Parser)(h)
	switch {
	case tk.Kind == jsonstream.TokenLimit:
		p.Violation(tk.Code, nil, tk.Offset)
	case tk.Code == jsonstream.CodeUnterminated:
		p.Violation(CodeTruncatedLine, nil, tk.Offset)
	default:
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
