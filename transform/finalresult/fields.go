package finalresult

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// The watched fields; a field's index in paths is its jsonstream path id.
const (
	fRoot = iota
	fStatus
	fMessage
	fArtifacts
	fClarify
	fQuestion
	fOption
	fHint
)

var paths = jsonstream.MustCompile(
	jsonstream.Watch{Path: ""},
	jsonstream.Watch{Path: "status", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "message", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "artifacts", Mode: jsonstream.Raw},
	jsonstream.Watch{Path: "clarify"},
	jsonstream.Watch{Path: "clarify.question", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "clarify.options[*]", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "clarify.hint", Mode: jsonstream.Text},
)

var fieldNames = [...][]byte{
	fStatus:    []byte("status"),
	fMessage:   []byte("message"),
	fArtifacts: []byte("artifacts"),
	fClarify:   []byte("clarify"),
	fQuestion:  []byte("clarify.question"),
	fOption:    []byte("clarify.options"),
	fHint:      []byte("clarify.hint"),
}

// result is what the object said, held for its end.
type result struct {
	status     jsonstream.Keyword
	seen       [fClarify + 1]bool
	statusType jsonstream.Type
	// messageType is the type of the last "message" value; ended says the
	// object was read to its closing brace (Outcome).
	messageType jsonstream.Type
	ended       bool

	artifacts    []byte // the raw array being read, bounded by MaxBlockBytes
	hasArtifacts bool   // a non-empty artifacts array was sent

	clarify   bool // a clarify object was read
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

// tokens receives the tokenizer's reports for the Parser.
type tokens Parser

// HandleToken dispatches a token of the reply.
func (h *tokens) HandleToken(tk *jsonstream.Token) {
	p := (*Parser)(h)
	if p.failed {
		return
	}
	switch tk.Kind {
	case jsonstream.TokenStart:
		p.fieldStart(tk)
	case jsonstream.TokenText, jsonstream.TokenRaw:
		p.fieldText(tk.Path, tk.Text)
	case jsonstream.TokenEnd:
		p.fieldEnd(tk)
	case jsonstream.TokenProse:
		p.answerText(tk.Text)
	case jsonstream.TokenViolation:
		p.violation(tk.Code, tk.Text, tk.Offset)
	case jsonstream.TokenInvalid:
		code := tk.Code
		if code == jsonstream.CodeExpectedObject {
			code = CodeNotJSONObject
		}
		p.violation(code, tk.Text, tk.Offset)
		p.closeAnswer()
	case jsonstream.TokenLimit:
		p.fail(tk.Code, string(tk.Text))
	}
}

// fieldStart handles the start of a watched value.
func (p *Parser) fieldStart(tk *jsonstream.Token) {
	r := &p.result
	if tk.Path <= fClarify {
		r.seen[tk.Path] = true
	}
	switch tk.Path {
	case fStatus:
		r.status.Reset() // the last status wins
		r.statusType = tk.Type
	case fMessage:
		r.messageType = tk.Type
		if tk.Type == jsonstream.TypeString {
			p.openAnswer() // an empty message is an empty answer (JO22)
		}
	case fArtifacts:
		r.artifacts = r.artifacts[:0]
	case fClarify:
		r.clarify = tk.Type == jsonstream.TypeObject
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

// fieldText handles a delta of a watched value.
func (p *Parser) fieldText(f int, text []byte) {
	r := &p.result
	switch f {
	case fStatus:
		r.status.Append(text)
	case fMessage:
		p.answerText(text)
	case fArtifacts:
		r.artifacts = p.hold(r.artifacts, text, len(r.artifacts))
	case fQuestion:
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
		p.fail(transform.CodeBlockTooLong, "final_result: held value longer than the block limit")
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

// fieldEnd handles the end of a watched value.
func (p *Parser) fieldEnd(tk *jsonstream.Token) {
	r := &p.result
	switch tk.Path {
	case fMessage:
		p.closeAnswer()
		p.checkType(tk, jsonstream.TypeString)
	case fStatus:
		p.checkType(tk, jsonstream.TypeString)
	case fArtifacts:
		p.endArtifacts(tk)
	case fClarify:
		p.checkType(tk, jsonstream.TypeObject)
	case fQuestion, fHint:
		p.checkType(tk, jsonstream.TypeString)
	case fOption:
		if tk.Type == jsonstream.TypeString {
			r.options = append(r.options, string(r.option))
		}
	case fRoot:
		p.endResult(tk.Offset)
	}
}

// checkType reports a field that is neither of type t nor null.
func (p *Parser) checkType(tk *jsonstream.Token, t jsonstream.Type) {
	if tk.Type != t && tk.Type != jsonstream.TypeNull {
		p.violation(CodeWrongType, fieldNames[tk.Path], tk.Offset)
	}
}

// endArtifacts sends a complete, non-empty artifacts array, raw.
func (p *Parser) endArtifacts(tk *jsonstream.Token) {
	r := &p.result
	switch tk.Type {
	case jsonstream.TypeNull:
		return
	case jsonstream.TypeArray:
	default:
		p.violation(CodeWrongType, fieldNames[fArtifacts], tk.Offset)
		return
	}
	if emptyArray(r.artifacts) {
		return // "artifacts": [] says there are none (specs/004 §7.2 default)
	}
	r.hasArtifacts = true
	p.emit(transform.Event{Kind: transform.KindArtifacts, Text: r.artifacts})
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
