package aiplan

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// The watched fields; a field's index in paths is its jsonstream path id.
// Models that imitate OpenAI write "arguments" for "args", or wrap the call
// in "function": {"name", "arguments"}; all are accepted.
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
)

var paths = jsonstream.MustCompile(
	jsonstream.Watch{Path: ""},
	jsonstream.Watch{Path: "thought", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "response_mode", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "direct_response", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "tool_calls"},
	jsonstream.Watch{Path: "tool_calls[*]"},
	jsonstream.Watch{Path: "tool_calls[*].name", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "tool_calls[*].args", Mode: jsonstream.Raw | jsonstream.Text},
	jsonstream.Watch{Path: "tool_calls[*].arguments", Mode: jsonstream.Raw | jsonstream.Text},
	jsonstream.Watch{Path: "tool_calls[*].function.name", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "tool_calls[*].function.arguments", Mode: jsonstream.Raw | jsonstream.Text},
)

// The four fields of specs/003, as named in violations.
var fieldNames = [...][]byte{
	fThought: []byte("thought"),
	fMode:    []byte("response_mode"),
	fDirect:  []byte("direct_response"),
	fTools:   []byte("tool_calls"),
}

// plan is what the object said, for the validation at its end.
type plan struct {
	seen       [fTools + 1]bool
	types      [fTools + 1]jsonstream.Type
	thoughtLen int
	directLen  int
	mode       jsonstream.Keyword
	calls      int // tool calls in this object
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
	case jsonstream.TokenViolation:
		p.violation(tk.Code, tk.Text, tk.Offset)
	case jsonstream.TokenInvalid:
		code := tk.Code
		if code == jsonstream.CodeExpectedObject {
			code = CodeNotJSONObject
		}
		p.violation(code, tk.Text, tk.Offset)
		p.settle(true, tk.Offset)
	case jsonstream.TokenLimit:
		p.fail(tk.Code, string(tk.Text))
	}
}

// fieldStart handles the start of a watched value.
func (p *Parser) fieldStart(tk *jsonstream.Token) {
	f := tk.Path
	if f >= fThought && f <= fTools {
		p.plan.seen[f] = true
		p.plan.types[f] = tk.Type
	}
	switch f {
	case fMode:
		p.plan.mode.Reset() // JO19: the last value wins
	case fCall:
		if tk.Type == jsonstream.TypeObject {
			p.beginCall()
		}
	case fName, fFuncName:
		p.call.beginName()
	case fArgs, fArguments, fFuncArgs:
		p.beginArgs(f, tk)
	}
}

// fieldText handles a delta of a watched value.
func (p *Parser) fieldText(f int, text []byte) {
	switch f {
	case fThought:
		p.plan.thoughtLen += len(text)
		p.openThinking()
		p.emit(transform.Event{Kind: transform.KindPhaseDelta, Index: 1, Text: text})
	case fDirect:
		p.plan.directLen += len(text)
		p.openAnswer()
		p.answered = true
		p.emit(transform.Event{Kind: transform.KindAnswerDelta, Text: text})
	case fMode:
		p.plan.mode.Append(text)
	case fName, fFuncName:
		p.nameText(text)
	case fArgs, fArguments, fFuncArgs:
		p.argsText(text)
	}
}

// fieldEnd handles the end of a watched value.
func (p *Parser) fieldEnd(tk *jsonstream.Token) {
	switch tk.Path {
	case fThought:
		p.closeThinking()
		p.checkType(tk, jsonstream.TypeString, jsonstream.TypeString)
	case fDirect:
		p.closeAnswer()
		p.checkType(tk, jsonstream.TypeString, jsonstream.TypeNull)
	case fMode:
		p.checkType(tk, jsonstream.TypeString, jsonstream.TypeString)
	case fTools:
		p.checkType(tk, jsonstream.TypeArray, jsonstream.TypeArray)
	case fCall:
		if tk.Type == jsonstream.TypeObject {
			p.endCall(tk.Offset, false)
		} else {
			p.violation(CodeWrongType, fieldNames[fTools], tk.Offset)
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

// checkType reports a field whose type is neither a nor b.
func (p *Parser) checkType(tk *jsonstream.Token, a, b jsonstream.Type) {
	if tk.Type != a && tk.Type != b {
		p.violation(CodeWrongType, fieldNames[tk.Path], tk.Offset)
	}
}

// openThinking opens the reasoning section: "thought" is one phase
// (CONTRACT.md §4, "How each format's parts map"). It opens lazily, at the
// first text, so that an empty thought opens nothing.
func (p *Parser) openThinking() {
	if !p.thinkingOpen {
		p.thinkingOpen = true
		p.emit(transform.Event{Kind: transform.KindThinkingStart})
		p.emit(transform.Event{Kind: transform.KindPhaseStart, Index: 1, Text: p.title})
	}
}

func (p *Parser) closeThinking() {
	if p.thinkingOpen {
		p.thinkingOpen = false
		p.emit(transform.Event{Kind: transform.KindPhaseEnd, Index: 1})
		p.emit(transform.Event{Kind: transform.KindThinkingEnd})
	}
}

// openAnswer opens the answer. direct_response opens it lazily, at its
// first text, so that an empty direct_response leaves room for the
// fallback answer instead of an empty one.
func (p *Parser) openAnswer() {
	if !p.answerOpen {
		p.answerOpen = true
		p.emit(transform.Event{Kind: transform.KindAnswerStart})
	}
}

func (p *Parser) closeAnswer() {
	if p.answerOpen {
		p.answerOpen = false
		p.emit(transform.Event{Kind: transform.KindAnswerEnd})
	}
}
