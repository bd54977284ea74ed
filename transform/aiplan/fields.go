package aiplan

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonformat"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// The fields of an aiplan reply, bound to their paths in watched. Models
// that imitate OpenAI write "arguments" for "args", or wrap the call in
// "function": {"name", "arguments"}; all are accepted. The fields shown to
// the user ("thought", "direct_response") are Raw as well as Text, so that
// a value of the wrong type still arrives, as its JSON text (CodeWrongType).
const (
	fRoot = iota
	fThought
	fMode
	fDirect
	fTools
	fCall
	fName
	fArgs
	fArguments
	fFuncName
	fFuncArgs
	numFields
)

var watched = jsonformat.MustCompile(
	jsonformat.Field{ID: fRoot, Path: ""},
	jsonformat.Field{ID: fThought, Path: "thought", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fMode, Path: "response_mode", Mode: jsonstream.Text},
	jsonformat.Field{ID: fDirect, Path: "direct_response", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fTools, Path: "tool_calls"},
	jsonformat.Field{ID: fCall, Path: "tool_calls[*]"},
	jsonformat.Field{ID: fName, Path: "tool_calls[*].name", Mode: jsonstream.Text},
	jsonformat.Field{ID: fArgs, Path: "tool_calls[*].args", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fArguments, Path: "tool_calls[*].arguments", Mode: jsonstream.Raw | jsonstream.Text},
	jsonformat.Field{ID: fFuncName, Path: "tool_calls[*].function.name", Mode: jsonstream.Text},
	jsonformat.Field{ID: fFuncArgs, Path: "tool_calls[*].function.arguments", Mode: jsonstream.Raw | jsonstream.Text},
)

// required are the four fields of specs/003 (必填字段验证).
var required = [...]int{fThought, fMode, fDirect, fTools}

// fieldNames name the fields in violations.
var fieldNames = [numFields][]byte{
	fThought: []byte("thought"),
	fMode:    []byte("response_mode"),
	fDirect:  []byte("direct_response"),
	fTools:   []byte("tool_calls"),
}

// plan is what the object said, for the validation at its end.
type plan struct {
	seen       [numFields]bool
	types      [numFields]jsonstream.Type
	thoughtLen int
	directLen  int
	mode       jsonstream.Keyword
	calls      int // tool calls started from this object
}

// fields is the Parser as its jsonformat.Base sees it: the meaning of the
// aiplan fields.
type fields Parser

// FieldStart handles the start of a field's value.
func (h *fields) FieldStart(id int, tk *jsonstream.Token) {
	p := (*Parser)(h)
	p.plan.seen[id] = true
	p.plan.types[id] = tk.Type
	switch id {
	case fThought, fDirect:
		// A null is no value: the raw "null" of a Raw field is not its
		// text.
		p.null = tk.Type == jsonstream.TypeNull
	case fMode:
		p.plan.mode.Reset() // JO19: the last value wins
	case fTools:
		if tk.Type != jsonstream.TypeArray && tk.Type != jsonstream.TypeNull {
			p.beginText(tk.Offset)
		}
	case fCall:
		switch tk.Type {
		case jsonstream.TypeObject:
			p.beginCall(tk.Offset)
		case jsonstream.TypeNull:
		default:
			p.beginText(tk.Offset)
		}
	case fName, fFuncName:
		p.call.beginName()
	case fArgs, fArguments, fFuncArgs:
		p.beginArgs(id, tk)
	}
}

// FieldText handles a piece of a field's value: decoded string content,
// or the JSON text of a value of the wrong type (Raw).
func (h *fields) FieldText(id int, text []byte) {
	p := (*Parser)(h)
	switch id {
	case fThought:
		if p.null {
			return
		}
		p.plan.thoughtLen += len(text)
		p.openThinking()
		p.PhaseText(text)
	case fDirect:
		if p.null {
			return
		}
		p.plan.directLen += len(text)
		// direct_response opens the answer lazily, at its first text, so
		// that an empty direct_response leaves room for the fallback
		// answer instead of an empty one.
		p.AnswerText(text)
	case fMode:
		p.plan.mode.Append(text)
	case fName, fFuncName:
		p.nameText(text)
	case fArgs, fArguments, fFuncArgs:
		p.argsText(text)
	}
}

// FieldEnd handles the end of a field's value.
func (h *fields) FieldEnd(id int, tk *jsonstream.Token) {
	p := (*Parser)(h)
	switch id {
	case fThought:
		p.CloseThinking()
		p.checkType(id, tk, jsonstream.TypeString, jsonstream.TypeString)
	case fDirect:
		p.CloseAnswer()
		p.checkType(id, tk, jsonstream.TypeString, jsonstream.TypeNull)
	case fMode:
		p.checkType(id, tk, jsonstream.TypeString, jsonstream.TypeString)
	case fTools:
		p.checkType(id, tk, jsonstream.TypeArray, jsonstream.TypeArray)
		p.endText(tk.Offset)
	case fCall:
		switch tk.Type {
		case jsonstream.TypeObject:
			p.endCall(tk.Offset)
		case jsonstream.TypeNull:
		default:
			p.Violation(CodeWrongType, fieldNames[fTools], tk.Offset)
			p.endText(tk.Offset)
		}
	case fName, fFuncName:
		p.endName(tk)
	case fArgs, fArguments, fFuncArgs:
		p.call.argsOn = false
	case fRoot:
		p.validate(tk.Offset)
		p.settle(tk.Offset)
	}
}

// Broken handles a reply that is not, or stopped being, a JSON object (it
// broke, or outgrew max_key or max_depth): it is reported, and the reply
// is settled as one that is not a usable plan. The rest of the reply
// follows as answer text (jsonformat.Base); the text of a tool call cut
// off before its name comes first, so that the model's text arrives as it
// wrote it.
func (h *fields) Broken(tk *jsonstream.Token) {
	p := (*Parser)(h)
	code := tk.Code
	if code == jsonstream.CodeExpectedObject {
		code = CodeNotJSONObject
	}
	p.Violation(code, tk.Text, tk.Offset)
	p.broken = true
	p.settle(tk.Offset - 1)
}

// Finish settles a reply that ended without its object's end, and sends
// the safe fallback answer if the user got neither an answer nor a tool
// call (specs/003 错误处理标准, CONTRACT.md §4): the model's own text, such
// as prose instead of the object, is an answer, so the fallback comes only
// when there is none. A reply that is not a usable plan needs the fallback
// even after tool calls.
func (h *fields) Finish() {
	p := (*Parser)(h)
	p.settle(p.Offset() - 1)
	if !p.Answered() && (p.broken || p.started == 0) {
		p.AnswerText(p.fallback)
		p.CloseAnswer()
	}
}

// checkType reports field id, whose value's end is tk, if its type is
// neither a nor b.
func (p *Parser) checkType(id int, tk *jsonstream.Token, a, b jsonstream.Type) {
	if tk.Type != a && tk.Type != b {
		p.Violation(CodeWrongType, fieldNames[id], tk.Offset)
	}
}

// beginText starts holding the text of a value that cannot be what its
// field wants (a tool_calls that is not an array, an element of it that is
// not an object), to deliver it as answer text at its end (endText).
func (p *Parser) beginText(off int64) {
	p.Record(off)
	p.text = true
}

// endText delivers the text held since beginText, whose last byte is at
// end, as answer text (CONTRACT.md §7).
func (p *Parser) endText(end int64) {
	if !p.text {
		return
	}
	p.text = false
	p.deliver(end, "aiplan: a tool_calls value held as text is longer than the block limit")
}

// deliver sends the text recorded up to end as answer text, or, when it
// outgrew MaxBlockBytes and was not kept, ends the stream with
// block_too_long, so that it does not vanish unreported.
func (p *Parser) deliver(end int64, msg string) {
	text, ok := p.Recorded(end)
	if !ok {
		p.Fail(transform.CodeBlockTooLong, msg)
		return
	}
	p.AnswerText(text)
	p.CloseAnswer()
}

// openThinking opens the reasoning section: "thought" is one phase
// (CONTRACT.md §4, "How each format's parts map"). It opens lazily, at the
// first text, so that an empty thought opens nothing.
func (p *Parser) openThinking() {
	if !p.ThinkingOpen() {
		p.OpenThinking()
		p.OpenPhase(1, p.title)
	}
}
