package aiplan

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// toolCall is the tool call object being read (specs/003 tool_calls[i]).
// Its ToolCallStart waits for the name; arguments that come first are held
// (bounded by MaxBlockBytes) and released when it is sent (PARSING.md §5.7:
// a call never opens without a name). The whole arguments are kept for
// ToolCallEnd.
type toolCall struct {
	open    bool // inside the call object
	started bool // ToolCallStart was sent
	index   int
	name    []byte
	nameStr string // name, once the call started
	args    []byte
	sent    int  // bytes of args sent as ToolArgsDelta
	argsOn  bool // an arguments value is being read
	hasArgs bool // an arguments value was read (a second one is ignored)
}

func (c *toolCall) reset(index int) {
	*c = toolCall{index: index, name: c.name[:0], args: c.args[:0]}
}

// beginCall opens a tool call object.
func (p *Parser) beginCall() {
	if p.calls >= p.opts.Limits.MaxToolCalls {
		p.Fail(transform.CodeTooManyToolCalls, "aiplan: more tool calls than the limit of "+strconv.Itoa(p.opts.Limits.MaxToolCalls))
		return
	}
	p.call.reset(p.calls)
	p.call.open = true
	p.calls++
	p.plan.calls++
}

// beginName starts a name value; once the call started, its name is fixed.
func (c *toolCall) beginName() {
	if c.open && !c.started {
		c.name = c.name[:0] // JO19: the last name before the call starts wins
	}
}

func (p *Parser) nameText(text []byte) {
	c := &p.call
	if !c.open || c.started {
		return
	}
	if len(c.name)+len(text) > p.opts.Limits.MaxBlockBytes {
		p.Fail(transform.CodeBlockTooLong, "aiplan: tool name longer than the block limit")
		return
	}
	c.name = append(c.name, text...)
}

// endName starts the call once its name is known.
func (p *Parser) endName(tk *jsonstream.Token) {
	if tk.Type != jsonstream.TypeString {
		p.Violation(CodeWrongType, nameField, tk.Offset)
		return
	}
	p.startCall()
}

// startCall sends ToolCallStart and the arguments held so far. The ID is
// left empty: the router assigns ids.
func (p *Parser) startCall() {
	c := &p.call
	if !c.open || c.started {
		return
	}
	c.started = true
	c.nameStr = string(c.name)
	p.Emit(transform.Event{Kind: transform.KindToolCallStart, Index: c.index, Name: c.nameStr})
	p.sendArgs()
}

// beginArgs starts an arguments value. An object (or any other JSON value)
// passes through raw; a string (OpenAI's function.arguments convention) is
// decoded and its content is the arguments; null means none.
func (p *Parser) beginArgs(id int, tk *jsonstream.Token) {
	c := &p.call
	if !c.open || tk.Type == jsonstream.TypeNull {
		return
	}
	if c.hasArgs {
		// "args" and "arguments" both given: the first, maybe already
		// streamed, stands.
		p.Violation(jsonstream.CodeDuplicateKey, argNames[id], tk.Offset)
		return
	}
	c.hasArgs, c.argsOn = true, true
}

// argNames name the arguments fields in violations.
var argNames = [numFields][]byte{
	fArgs:      []byte("args"),
	fArguments: []byte("arguments"),
	fFuncArgs:  []byte("function.arguments"),
}

// argsText takes a fragment of the arguments.
func (p *Parser) argsText(text []byte) {
	c := &p.call
	if !c.argsOn {
		return
	}
	room := p.opts.Limits.MaxBlockBytes - len(c.args)
	if len(text) <= room {
		c.args = append(c.args, text...)
		if c.started {
			p.Emit(transform.Event{Kind: transform.KindToolArgsDelta, Index: c.index, Text: text})
			c.sent = len(c.args)
		}
		return
	}
	// Over the limit. A started call first gets the arguments up to the
	// limit, cut on a rune boundary, so that what is sent before the error
	// does not depend on how the reply was split.
	c.args = append(c.args, text[:room]...)
	c.args = c.args[:len(c.args)-parsekit.IncompleteSuffix(c.args)]
	if c.started {
		p.sendArgs()
	}
	p.Fail(transform.CodeBlockTooLong, "aiplan: tool arguments longer than the block limit")
}

// sendArgs sends the held arguments.
func (p *Parser) sendArgs() {
	c := &p.call
	if c.sent < len(c.args) {
		p.Emit(transform.Event{Kind: transform.KindToolArgsDelta, Index: c.index, Text: c.args[c.sent:]})
		c.sent = len(c.args)
	}
}

// endCall closes the call object, whose end is at off: a call without a
// name is reported and still sent, with an empty name, so that its
// arguments are not lost. When the reply broke inside the call, a call
// that never started is dropped (nothing of it was sent) and a started one
// ends with the arguments it got.
func (p *Parser) endCall(off int64, broken bool) {
	c := &p.call
	if !c.open {
		return
	}
	if !c.started {
		if broken {
			c.open = false
			return
		}
		p.Violation(CodeMissingField, nameField, off)
		p.startCall()
	}
	args := c.args
	if len(trimBlank(args)) == 0 {
		args = emptyArgs // OA12: no arguments are "{}"
	}
	p.Emit(transform.Event{Kind: transform.KindToolCallEnd, Index: c.index, Name: c.nameStr, Text: args})
	c.open = false
}

var (
	nameField = []byte("tool_calls[].name")
	emptyArgs = []byte("{}")
)

func trimBlank(b []byte) []byte {
	for len(b) > 0 && (b[0] == ' ' || b[0] == '\t' || b[0] == '\n' || b[0] == '\r') {
		b = b[1:]
	}
	return b
}
