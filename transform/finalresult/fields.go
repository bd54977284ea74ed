package finalresult

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonformat"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// The fields of a final_result reply, bound to their paths in watched.
// The fields shown to the user ("message", the clarify's question, hint
// and options) are Raw as well as Text, so that a value of the wrong type
// still arrives, as its JSON text (CodeWrongType).
const (
	fRoot = iota
	fStatus
	fMessage
	fArtifacts
	fClarify
	fQuestion
	fOption
	fHint
	numFields
)

var watched = jsonformat.MustCompile(
	jsonformat.Field{ID: fRoot, Path: ""},
	jsonformat.Field{ID: fStatus, Path: "status", Mode: jsonstream.Text},
	jsonformat.Field{ID: fMessage, Path: "message", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fArtifacts, Path: "artifacts", Mode: jsonstream.Raw},
	jsonformat.Field{ID: fClarify, Path: "clarify", Mode: jsonstream.Text},
	jsonformat.Field{ID: fQuestion, Path: "clarify.question", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fOption, Path: "clarify.options[*]", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fHint, Path: "clarify.hint", Mode: jsonstream.Raw | jsonstream.Text},
)

// fieldNames name the fields in violations.
var fieldNames = [numFields][]byte{
	fStatus:    []byte("status"),
	fMessage:   []byte("message"),
	fArtifacts: []byte("artifacts"),
	fClarify:   []byte("clarify"),
	fQuestion:  []byte("clarify.question"),
	fOption:    []byte("clarify.options[]"),
	fHint:      []byte("clarify.hint"),
}

// result is what the object said, held for its end.
type result struct {
	status     jsonstream.Keyword
	seen       [numFields]bool
	statusType jsonstream.Type
	// messageType is the type of the last "message" value; ended says the
	// object was read to its closing brace (Outcome).
	messageType jsonstream.Type
	ended       bool

	artifacts    []byte // the raw array being read, bounded by MaxBlockBytes
	hasArtifacts bool   // a non-empty artifacts array was sent

	clarify   bool // a clarify object (or a question in its place) was read
	null      bool // the value being read is null: no value
	question  []byte
	hint      []byte
	option    []byte
	options   []string
	heldBytes int // clarify bytes held, bounded by MaxBlockBytes
}

func (r *result) reset() {
	art, q, h, o := r.artifacts[:0], r.question[:0], r.hint[:0], r.option[:0]
	*r = result{artifacts: art, question: q, hint: h, option: o}
}

// fields is the Parser as its jsonformat.Base sees it: the meaning of the
// final_result fields.
type fields Parser

// FieldStart handles the start of a field's value.
func (h *fields) FieldStart(id int, tk *jsonstream.Token) {
	p := (*Parser)(h)
	r := &p.result
	r.seen[id] = true
	// A null is no value: the raw "null" of a Raw field is not its text.
	r.null = tk.Type == jsonstream.TypeNull
	switch id {
	case fStatus:
		r.status.Reset() // the last status wins
		r.statusType = tk.Type
	case fMessage:
		r.messageType = tk.Type
		if tk.Type == jsonstream.TypeString {
			p.OpenAnswer() // an empty message is an empty answer (JO22)
		}
	case fArtifacts:
		r.artifacts = r.artifacts[:0]
	case fClarify:
		// A clarify that is a string is its question (reported as
		// wrong_type): the user is shown what the model asked.
		r.clarify = tk.Type == jsonstream.TypeObject || tk.Type == jsonstream.TypeString
		r.question, r.hint, r.options = r.question[:0], r.hint[:0], r.options[:0]
		r.heldBytes = 0
	case fQuestion:
		r.question = r.question[:0]
	case fHint:
		r.hint = r.hint[:0]
	case fOption:
		r.option = r.option[:0]
	}
}

// FieldText handles a piece of a field's value.
func (h *fields) FieldText(id int, text []byte) {
	p := (*Parser)(h)
	r := &p.result
	if r.null {
		return
	}
	switch id {
	case fStatus:
		r.status.Append(text)
	case fMessage:
		p.AnswerText(text)
	case fArtifacts:
		r.artifacts = p.hold(r.artifacts, text, len(r.artifacts))
	case fQuestion, fClarify:
		r.question = p.holdClarify(r.question, text)
	case fHint:
		r.hint = p.holdClarify(r.hint, text)
	case fOption:
		r.option = p.holdClarify(r.option, text)
	}
}

// hold appends text to a held block, failing when the block, whose size
// counts toward the limit, outgrows MaxBlockBytes.
func (p *Parser) hold(dst, text []byte, size int) []byte {
	if size+len(text) > p.opts.Limits.MaxBlockBytes {
		p.Fail(transform.CodeBlockTooLong, "final_result: held value longer than the block limit")
		return dst
	}
	return append(dst, text...)
}

// holdClarify holds clarify text; the clarify object counts as one block.
func (p *Parser) holdClarify(dst, text []byte) []byte {
	dst = p.hold(dst, text, p.result.heldBytes)
	p.result.heldBytes += len(text)
	return dst
}

// FieldEnd handles the end of a field's value.
func (h *fields) FieldEnd(id int, tk *jsonstream.Token) {
	p := (*Parser)(h)
	r := &p.result
	switch id {
	case fMessage:
		p.CloseAnswer()
		p.checkType(id, tk, jsonstream.TypeString)
	case fStatus:
		p.checkType(id, tk, jsonstream.TypeString)
	case fArtifacts:
		p.endArtifacts(tk)
	case fClarify:
		p.checkType(id, tk, jsonstream.TypeObject)
	case fQuestion, fHint:
		p.checkType(id, tk, jsonstream.TypeString)
	case fOption:
		p.checkType(id, tk, jsonstream.TypeString)
		if tk.Type != jsonstream.TypeNull && !p.Failed() {
			// An option costs its string header too, so that a list of
			// empty strings is bounded by max_block like other clarify
			// text.
			if r.heldBytes += optionCost; r.heldBytes > p.opts.Limits.MaxBlockBytes {
				p.Fail(transform.CodeBlockTooLong, "final_result: held value longer than the block limit")
			} else {
				r.options = append(r.options, string(r.option))
			}
		}
	case fRoot:
		p.endResult(tk.Offset)
	}
}

// checkType reports field id, whose value's end is tk, if its type is
// neither t nor null (CodeWrongType).
func (p *Parser) checkType(id int, tk *jsonstream.Token, t jsonstream.Type) {
	if tk.Type != t && tk.Type != jsonstream.TypeNull {
		p.Violation(CodeWrongType, fieldNames[id], tk.Offset)
	}
}

// Broken handles a reply that is not, or stopped being, a JSON object (it
// broke, or outgrew max_key or max_depth): it is reported and the answer
// is closed. The rest of the reply follows as answer text (Base).
func (h *fields) Broken(tk *jsonstream.Token) {
	p := (*Parser)(h)
	code := tk.Code
	if code == jsonstream.CodeExpectedObject {
		code = CodeNotJSONObject
	}
	p.Violation(code, tk.Text, tk.Offset)
	// A clarify question read before the object broke would otherwise
	// never be sent (the form goes out only with the complete object):
	// it is the model's text for the user, so it is answer text, after a
	// blank line if the message came first (CONTRACT.md §7).
	if r := &p.result; !r.ended && len(r.question) > 0 {
		if p.Answered() {
			p.AnswerText(paragraph)
		}
		p.AnswerText(r.question)
		r.question = r.question[:0]
	}
	p.CloseAnswer()
}

// optionCost is what an option counts toward max_block beyond its text:
// the size of the string header that holds it.
const optionCost = 16

// paragraph separates a broken result's clarify question from its message.
var paragraph = []byte("\n\n")

// Finish has nothing to add at the reply's end: Base closes the answer.
func (h *fields) Finish() {}

// endArtifacts sends a complete, non-empty artifacts array, raw.
func (p *Parser) endArtifacts(tk *jsonstream.Token) {
	r := &p.result
	switch tk.Type {
	case jsonstream.TypeNull:
		return
	case jsonstream.TypeArray:
	default:
		p.Violation(CodeWrongType, fieldNames[fArtifacts], tk.Offset)
		return
	}
	if emptyArray(r.artifacts) {
		return // "artifacts": [] says there are none (specs/004 §7.2 default)
	}
	r.hasArtifacts = true
	p.Emit(transform.Event{Kind: transform.KindArtifacts, Text: r.artifacts})
}

// emptyArray reports whether raw, a JSON array, has no element.
func emptyArray(raw []byte) bool {
	for _, c := range raw {
		if c != '[' && c != ']' && c != ' ' && c != '\t' && c != '\n' && c != '\r' {
			return false
		}
	}
	return true
}
