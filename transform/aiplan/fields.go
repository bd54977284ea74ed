package aiplan

import (
	"github.com/llmstream/llmstream/transform/jsonformat"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// The fields of an aiplan reply, bound to their paths in watched. Models
// that imitate OpenAI write "arguments" for "args", or wrap the call in
// "function": {"name", "arguments"}; all are accepted.
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
	jsonformat.Field{ID: fThought, Path: "thought", Mode: jsonstream.Text},
	jsonformat.Field{ID: fMode, Path: "response_mode", Mode: jsonstream.Text},
	jsonformat.Field{ID: fDirect, Path: "direct_response", Mode: jsonstream.Text},
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
	calls      int // tool calls in this object
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
	case fMode:
		p.plan.mode.Reset() // JO19: the last value wins
	case fCall:
		if tk.Type == jsonstream.TypeObject {
			p.beginCall()
		}
	case fName, fFuncName:
		p.call.beginName()
	case fArgs, fArguments, fFuncArgs:
		p.beginArgs(id, tk)
	}
}

// FieldText handles a piece of a field's value.
func (h *fields) FieldText(id int, text []byte) {
	p := (*Parser)(h)
	switch id {
	case fThought:
		p.plan.thoughtLen += len(text)
		p.openThinking()
		p.PhaseText(text)
	case fDirect:
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
	case fCall:
		if tk.Type == jsonstream.TypeObject {
			p.endCall(tk.Offset, false)
		} else {
			p.Violation(CodeWrongType, fieldNames[fTools], tk.Offset)
		}
	case fName, fFuncName:
		p.endName(tk)
	case fArgs, fArguments, fFuncArgs:
		p.call.argsOn = false
	case fRoot:
		p.validate(tk.Offset)
		p.settle(false, tk.Offset)
	}
}

// Broken handles a reply that is not, or stopped being, a JSON object: it
// is reported, and the reply is settled as one that is not a usable plan.
func (h *fields) Broken(tk *jsonstream.Token) {
	p := (*Parser)(h)
	code := tk.Code
	if code == jsonstream.CodeExpectedObject {
		code = CodeNotJSONObject
	}
	p.Violation(code, tk.Text, tk.Offset)
	p.settle(true, tk.Offset)
}

// Finish settles a reply that ended without its object's end.
func (h *fields) Finish() { (*Parser)(h).settle(true, -1) }

// checkType reports field id, whose value's end is tk, if its type is
// neither a nor b.
func (p *Parser) checkType(id int, tk *jsonstream.Token, a, b jsonstream.Type) {
	if tk.Type != a && tk.Type != b {
		p.Violation(CodeWrongType, fieldNames[id], tk.Offset)
	}
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
