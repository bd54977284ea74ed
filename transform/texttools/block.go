package texttools

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// The watched members of a BodyObject; a member's index is its path id.
const (
	fRoot = iota
	fName
	fArguments
	fParameters
	fFuncName
	fFuncArguments
)

// paths watches the name and the arguments. Arguments that are an object
// pass through raw (byte for byte, no re-serialization: PARSING.md JO17);
// a JSON string is decoded, so that its content is the arguments.
var paths = jsonstream.MustCompile(
	jsonstream.Watch{Path: ""},
	jsonstream.Watch{Path: "name", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "arguments", Mode: jsonstream.Raw | jsonstream.Text},
	jsonstream.Watch{Path: "parameters", Mode: jsonstream.Raw | jsonstream.Text},
	jsonstream.Watch{Path: "function.name", Mode: jsonstream.Text},
	jsonstream.Watch{Path: "function.arguments", Mode: jsonstream.Raw | jsonstream.Text},
)

// call is the tool call a block is writing.
type call struct {
	started bool // KindToolCallStart was sent
	index   int
	nameOn  bool // a string name is being read
	name    []byte
	nameStr string
	args    []byte
	sent    int  // bytes of args sent
	argsOn  bool // an arguments value is being read
	hasArgs bool // an arguments value was read; a second is ignored
}

// beginBlock starts a block whose object begins at reply offset bodyOff,
// right after the opening marker. The blanks held before the marker stay
// held: they are text if the block turns out not to be a call.
func (t *Parser) beginBlock(bodyOff int64) {
	t.block = append(t.block[:0], t.open...)
	if t.calls >= t.lim.MaxToolCalls {
		t.st = stBody
		t.fail(transform.CodeTooManyToolCalls, "texttools: more tool calls than the limit of "+strconv.Itoa(t.lim.MaxToolCalls))
		return
	}
	t.blockOff = bodyOff - int64(len(t.open))
	t.call = call{name: t.call.name[:0], args: t.call.args[:0]}
	t.broken = false
	t.tok.ResetAt(bodyOff)
	t.st = stBody
}

// body feeds the block's object to the tokenizer from p[i], no more than
// the block limit allows, so that the limit trips at the same byte however
// the reply was split.
func (t *Parser) body(p []byte, i int, base int64) int {
	q := p[i:]
	if room := t.lim.MaxBlockBytes - len(t.block); len(q) > room {
		q = q[:room]
	}
	if len(q) == 0 {
		t.tooLong()
		return len(p)
	}
	n := t.tok.Feed(q, (*tokens)(t))
	t.block = append(t.block, q[:n]...)
	if t.limit != "" {
		t.fail(t.limit, "texttools: "+t.limitMsg)
		return len(p)
	}
	i += n
	switch {
	case t.tok.Done():
		if !t.call.started {
			t.breakBlock(CodeBadToolCall, "the tool call object has no string name")
			return i
		}
		t.st = stTrail
	case t.tok.Stopped() || t.broken || n < len(q):
		code := t.broke.Code
		if code == "" {
			code = jsonstream.CodeBadJSON
		}
		t.breakBlock(CodeBadToolCall, "the tool call block is not one JSON object: "+code)
	}
	return i
}

// trail reads what follows the object: blanks, then the closing marker
// (or, for a convention without one, nothing but blanks to the end).
func (t *Parser) trail(p []byte, i int, base int64) int {
	for i < len(p) {
		c := p[i]
		switch {
		case len(t.close) > 0 && (t.np > 0 || c == t.close[0]):
			if t.np == 0 {
				t.pendOff = base + int64(i)
			}
			if c != t.close[t.np] {
				// Not the closing marker: the block is text, and the held
				// bytes (the marker's first np) are scanned as text again:
				// they may open a block.
				held := t.close[:t.np]
				t.np = 0
				t.breakBlock(CodeBadToolCall, "text follows the tool call object")
				t.scan(held, t.pendOff, false)
				return i
			}
			t.np++
			i++
			if t.np == len(t.close) {
				t.np = 0
				t.endBlock()
				return i
			}
		case isBlank(c):
			if !t.keep(p[i : i+1]) {
				return len(p)
			}
			i++
		default:
			t.breakBlock(CodeBadToolCall, "text follows the tool call object")
			return i
		}
	}
	return i
}

// keep adds b to the held block, within Limits.MaxBlockBytes.
func (t *Parser) keep(b []byte) bool {
	if len(t.block)+len(b) > t.lim.MaxBlockBytes {
		t.tooLong()
		return false
	}
	t.block = append(t.block, b...)
	return true
}

// tooLong ends the reply at a block that outgrew Limits.MaxBlockBytes.
func (t *Parser) tooLong() {
	t.block = t.block[:len(t.block)-parsekit.IncompleteSuffix(t.block)]
	t.fail(transform.CodeBlockTooLong, "texttools: a "+t.conv.Name+" tool call block is longer than the block limit ("+
		strconv.Itoa(t.lim.MaxBlockBytes)+" bytes)")
}

// endBlock ends a block that is a call: the call ends, and the blanks
// around the block are not text.
func (t *Parser) endBlock() {
	t.endCall()
	t.blanks = t.blanks[:0]
	t.block = t.block[:0]
	t.skip = true
	t.st = stText
}

// breakBlock ends a block that is not a call: reported, its started call
// ended with what it got, its text delivered as written.
func (t *Parser) breakBlock(code, detail string) {
	t.violation(code, t.blockOff, detail)
	if t.call.started {
		t.endCall()
	}
	t.st = stText
	t.skip = false
	t.flushBlanks()
	t.text(t.block)
	t.block = t.block[:0]
}

// startCall sends KindToolCallStart once the name is complete, and the
// arguments held until then. The id is the pipeline's to assign.
func (t *Parser) startCall() {
	c := &t.call
	if c.started || t.st == stDead {
		return
	}
	c.started = true
	c.index = t.calls
	t.calls++
	// Calls repeat their names: the last one is kept, so that a stream of
	// calls to one tool allocates its name once.
	if string(c.name) != t.lastName {
		t.lastName = string(c.name)
	}
	c.nameStr = t.lastName
	t.emit(transform.Event{Kind: transform.KindToolCallStart, Index: c.index, Name: c.nameStr})
	t.sendArgs()
}

// sendArgs sends the arguments not sent yet.
func (t *Parser) sendArgs() {
	c := &t.call
	if c.sent < len(c.args) {
		t.emit(transform.Event{Kind: transform.KindToolArgsDelta, Index: c.index, Text: c.args[c.sent:]})
		c.sent = len(c.args)
	}
}

// endCall sends KindToolCallEnd with the whole arguments ("{}" for none,
// PARSING.md OA12).
func (t *Parser) endCall() {
	c := &t.call
	args := c.args
	if len(trimBlank(args)) == 0 {
		args = emptyArgs
	}
	t.emit(transform.Event{Kind: transform.KindToolCallEnd, Index: c.index, Name: c.nameStr, Text: args})
	c.started = false
}

var emptyArgs = []byte("{}")

func trimBlank(b []byte) []byte {
	for len(b) > 0 && isBlank(b[0]) {
		b = b[1:]
	}
	return b
}

// tokens receives the tokenizer's reports for the Parser.
type tokens Parser

// HandleToken takes a report on the block's object.
func (h *tokens) HandleToken(tk *jsonstream.Token) {
	t := (*Parser)(h)
	if t.st == stDead {
		return
	}
	c := &t.call
	switch tk.Kind {
	case jsonstream.TokenStart:
		switch tk.Path {
		case fName, fFuncName:
			if !c.started {
				c.name = c.name[:0] // the last name before the call starts wins
				c.nameOn = tk.Type == jsonstream.TypeString
			}
		case fArguments, fParameters, fFuncArguments:
			switch {
			case tk.Type == jsonstream.TypeNull:
			case c.hasArgs:
				// Two arguments values: the first, maybe streamed, stands.
				t.violation(jsonstream.CodeDuplicateKey, tk.Offset, "a second arguments value is ignored")
			default:
				c.hasArgs, c.argsOn = true, true
			}
		}
	case jsonstream.TokenText, jsonstream.TokenRaw:
		switch tk.Path {
		case fName, fFuncName:
			if c.nameOn && !c.started && len(c.name)+len(tk.Text) <= t.lim.MaxBlockBytes {
				c.name = append(c.name, tk.Text...)
			}
		case fArguments, fParameters, fFuncArguments:
			if c.argsOn {
				c.args = append(c.args, tk.Text...)
				if c.started {
					t.sendArgs()
				}
			}
		}
	case jsonstream.TokenEnd:
		switch tk.Path {
		case fName, fFuncName:
			if c.nameOn {
				c.nameOn = false
				t.startCall()
			}
		case fArguments, fParameters, fFuncArguments:
			c.argsOn = false
		}
	case jsonstream.TokenViolation:
		t.emit(transform.Event{Kind: transform.KindViolation, Code: tk.Code, Offset: tk.Offset, Text: tk.Text})
	case jsonstream.TokenInvalid:
		t.broken = true
		t.broke = jsonstream.Token{Kind: tk.Kind, Code: tk.Code, Offset: tk.Offset}
	case jsonstream.TokenLimit:
		// Ended after the Feed, once the block holds what was consumed.
		t.limit, t.limitMsg = tk.Code, string(tk.Text)
	}
}
