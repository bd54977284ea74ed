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

// call is the tool call a block is writing. Nothing of it is sent before
// the block ends: a block cut off, or one that turns out not to be a call,
// is text, and a call already sent could not be taken back (CONTRACT.md
// §7, §8).
type call struct {
	nameOn  bool // a string name is being read
	named   bool // a string name was read; a later one is ignored
	name    []byte
	args    []byte
	argsOn  bool // an arguments value is being read
	hasArgs bool // an arguments value was read; a second is ignored
}

// beginBlock starts a block whose object begins at reply offset bodyOff,
// right after the opening marker. The blanks held before the marker stay
// held: they are text if the block turns out not to be a call.
func (t *Parser) beginBlock(bodyOff int64) {
	t.block = append(t.block[:0], t.open...)
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
	i += n
	switch {
	case t.tok.Done() && !t.broken:
		if !t.call.named {
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
				t.endBlock(true)
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

// endBlock ends a block whose object is a call, at its closing marker if
// closed says so (else at the end of the reply): beyond
// Limits.MaxToolCalls it is text, as aiplan's calls are; otherwise the
// call is sent whole. Blanks held before the block wait for what follows
// it, unless no answer text came before: then they stand at the answer's
// start, with the block, and are dropped.
func (t *Parser) endBlock(closed bool) {
	if closed {
		t.block = append(t.block, t.close...)
	}
	if t.calls >= t.lim.MaxToolCalls {
		t.breakBlock(CodeTooManyToolCalls, "more tool calls than the limit of "+strconv.Itoa(t.lim.MaxToolCalls))
		return
	}
	t.sendCall()
	if t.sentBlock != nil {
		t.sentBlock(t.blockOff, len(t.block))
	}
	if !t.answer {
		t.blanks = t.blanks[:0]
	}
	t.edge = true
	t.block = t.block[:0]
	t.st = stText
}

// breakBlock ends a block that is not a call: reported, its text
// delivered as written.
func (t *Parser) breakBlock(code, detail string) {
	t.violation(code, t.blockOff, detail)
	t.st = stText
	t.text(t.block)
	t.block = t.block[:0]
}

// sendCall sends the block's call whole: KindToolCallStart,
// KindToolArgsDelta with the arguments, KindToolCallEnd with them again
// ("{}" for none, PARSING.md OA12). The id is the pipeline's to assign.
func (t *Parser) sendCall() {
	c := &t.call
	index := t.calls
	t.calls++
	// Calls repeat their names: the last one is kept, so that a stream of
	// calls to one tool allocates its name once.
	if string(c.name) != t.lastName {
		t.lastName = string(c.name)
	}
	t.emit(transform.Event{Kind: transform.KindToolCallStart, Index: index, Name: t.lastName})
	args := c.args
	if len(trimBlank(args)) == 0 {
		args = emptyArgs
	} else {
		t.emit(transform.Event{Kind: transform.KindToolArgsDelta, Index: index, Text: args})
	}
	t.emit(transform.Event{Kind: transform.KindToolCallEnd, Index: index, Name: t.lastName, Text: args})
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
			if !c.named {
				c.name = c.name[:0]
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
			if c.nameOn && len(c.name)+len(tk.Text) <= t.lim.MaxBlockBytes {
				c.name = append(c.name, tk.Text...)
			}
		case fArguments, fParameters, fFuncArguments:
			if c.argsOn {
				c.args = append(c.args, tk.Text...)
			}
		}
	case jsonstream.TokenEnd:
		switch tk.Path {
		case fName, fFuncName:
			if c.nameOn {
				// The first string name is the call's, as the first
				// arguments value is.
				c.nameOn, c.named = false, true
			}
		case fArguments, fParameters, fFuncArguments:
			c.argsOn = false
		}
	case jsonstream.TokenViolation:
		t.emit(transform.Event{Kind: transform.KindViolation, Code: tk.Code, Offset: tk.Offset, Text: tk.Text})
	case jsonstream.TokenInvalid, jsonstream.TokenLimit:
		// A limit of the tokenizer (max_key, max_depth) breaks the block
		// as broken JSON does: it is text (CONTRACT.md §7: only the limits
		// that protect a stream's memory end it).
		t.broken = true
		t.broke = jsonstream.Token{Kind: tk.Kind, Code: tk.Code, Offset: tk.Offset}
	}
}
