package aiplan

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// toolCall is the tool call object being read (specs/003 tool_calls[i]).
// Its ToolCallStart waits for the name; arguments that come first are held
// (bounded by MaxBlockBytes) and released when it is sent (PARSING.md §5.7:
// a call never opens without a name). The whole arguments are kept for
// ToolCallEnd.
//
// A call object that ends without a usable name, or one beyond
// MaxToolCalls, is no call: clients reject a call without a name (the
// OpenAI SDKs do), and a call beyond the limit would not be made. It is
// reported, and its text, as the model wrote it, is answer text
// (CONTRACT.md §7): the object's text is held (jsonformat.Base.Record)
// until its name starts the call.
type toolCall struct {
	open    bool // inside the call object
	started bool // ToolCallStart was sent
	over    bool // beyond MaxToolCalls: held as text
	badName bool // a name of the wrong type was reported
	index   int
	name    []byte
	nameStr string // name, once the call started
	args    []byte
	sent    int  // bytes of args sent as ToolArgsDelta
	argsOn  bool // an arguments value is being read
	hasArgs bool // an arguments value was read (a second one is ignored)
}

func (c *toolCall) reset() {
	*c = toolCall{name: c.name[:0], args: c.args[:0]}
}

// beginCall opens a tool call object whose '{' is at off.
func (p *Parser) beginCall(off int64) {
	c := &p.call
	c.reset()
	c.open = true
	p.Record(off)
	if p.calls >= p.opts.Limits.MaxToolCalls {
		c.over = true
		p.Violation(CodeTooManyToolCalls, nil, off)
		return
	}
	p.calls++
}

// beginName starts a name value; once the call started, its name is fixed.
func (c *toolCall) beginName() {
	if c.open && !c.started {
		c.name = c.name[:0] // JO19: the last name before the call starts wins
	}
}

func (p *Parser) nameText(text []byte) {
	c := &p.call
	if !c.open || c.started || c.over {
		return
	}
	if len(c.name)+len(text) > p.opts.Limits.MaxBlockBytes {
		p.Fail(transform.CodeBlockTooLong, "aiplan: tool name longer than the block limit")
		return
	}
	c.name = append(c.name, text...)
}

// endName starts the call once its name is known. A null is no name; a
// name of another type, or an empty one, is no usable name.
func (p *Parser) endName(tk *jsonstream.Token) {
	c := &p.call
	switch {
	case !c.open || c.started || c.over || tk.Type == jsonstream.TypeNull:
		return
	case tk.Type != jsonstream.TypeString:
		p.Violation(CodeWrongType, nameField, tk.Offset)
		c.badName = true
		return
	case len(c.name) == 0:
		return // reported as missing at the call's end
	}
	p.startCall()
}

// startCall sends ToolCallStart and the arguments held so far, and stops
// holding the call's text. The ID is left empty: the router assigns ids.
func (p *Parser) startCall() {
	c := &p.call
	c.started = true
	c.index = p.started
	p.started++
	p.plan.calls++
	p.StopRecording()
	c.nameStr = string(c.name)
	p.Emit(transform.Event{Kind: transform.KindToolCallStart, Index: c.index, Name: c.nameStr})
	p.sendArgs()
}

// beginArgs starts an arguments value. An object (or any other JSON value)
// passes through raw; a string (OpenAI's function.arguments convention) is
// decoded and its content is the arguments; null means none.
func (p *Parser) beginArgs(id int, tk *jsonstream.Token) {
	c := &p.call
	if !c.open || c.over || tk.Type == jsonstream.TypeNull {
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

// endCall closes the call object, whose last byte read is at end: its
// '}', or the byte before where the reply broke. A started call ends with
// the arguments it got. A call that never started is no call (see
// toolCall): a call object that ended without a name is reported
// (missing_field), and the text of every such call is answer text.
func (p *Parser) endCall(end int64) {
	c := &p.call
	if !c.open {
		return
	}
	c.open = false
	if !c.started {
		if !c.over && !c.badName && !p.broken {
			p.Violation(CodeMissingField, nameField, end)
		}
		p.deliver(end, "aiplan: a tool call without a name is longer than the block limit")
		return
	}
	args := c.args
	if len(trimBlank(args)) == 0 {
		args = emptyArgs // OA12: no arguments are "{}"
	}
	p.Emit(transform.Event{Kind: transform.KindToolCallEnd, Index: c.index, Name: c.nameStr, Text: args})
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
