package texttools

import (
	"bytes"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// The violation codes of this package.
const (
	// CodeBadToolCall: a block is not one JSON object with a name, or text
	// follows the object inside it; the block is delivered as text.
	CodeBadToolCall = "bad_tool_call"
	// CodeUnterminatedToolCall: the reply ended inside a block. Its text is
	// delivered and no call is made, unless its object was complete, which
	// is then a call.
	CodeUnterminatedToolCall = "unterminated_tool_call"
	// CodeTooManyToolCalls: a block beyond Limits.MaxToolCalls; it is
	// delivered as text, as aiplan delivers such a call.
	CodeTooManyToolCalls = transform.CodeTooManyToolCalls
	// CodeInvalidUTF8: the reply ended inside a UTF-8 sequence (PARSING.md
	// TM34); the cut bytes are still delivered. The text format reports it
	// alike.
	CodeInvalidUTF8 = "invalid_utf8"
)

// maxBlank bounds the blanks held after text until what follows shows
// whether they end the answer: a longer run is text up to its last
// maxBlank bytes.
const maxBlank = 64

// state is the parser's position in the reply.
type state uint8

const (
	stText  state = iota // answer text, scanning for the opening marker
	stBody               // inside a block's JSON object
	stTrail              // after the object: blanks, then the closing marker
	stDead               // after a fatal error: input is ignored
)

// Parser parses a text reply in which the model writes tool calls by a
// Convention. It implements transform.Parser. The zero value is not usable:
// call New.
type Parser struct {
	conv        *Convention
	open, close []byte
	lim         transform.Limits
	tok         jsonstream.Tokenizer
	emit        transform.Emit

	st  state
	off int64 // reply offset of the next Feed's first byte
	raw parsekit.RawEcho

	// np counts the bytes of a marker candidate matched (the opening
	// marker in stText, the closing one in stTrail), which starts at reply
	// offset pendOff.
	np      int
	pendOff int64

	// The answer. Blanks next to a block are the answer's, except at its
	// edges (see the package comment): edge says a call's block was
	// removed since the last answer text, so that blanks now stand between
	// a block and either the answer's first text or the reply's end.
	answer bool               // KindAnswerStart was sent
	carry  parsekit.RuneCarry // a rune cut at the end of a Feed
	blanks []byte             // trailing blanks of the text, held
	edge   bool

	// The block.
	block    []byte // verbatim, from its opening marker
	blockOff int64
	call     call
	calls    int    // calls started
	lastName string // the name of the last call, reused when the next has it
	broke    jsonstream.Token
	broken   bool // the tokenizer found the object broken or outgrew a limit

	// sentBlock, when set (tests only), is told the reply offset and
	// length of every block sent as a call.
	sentBlock func(off int64, n int)
}

// New returns a parser for text replies with tool calls written by conv.
func New(conv *Convention, opts transform.ParserOptions) *Parser {
	opts = opts.WithDefaults()
	if len(conv.Open) == 0 || len(conv.Open) > maxMarker || len(conv.Close) > maxMarker {
		panic("texttools: convention " + conv.Name + ": a marker is empty or longer than maxMarker")
	}
	t := &Parser{conv: conv, open: []byte(conv.Open), close: []byte(conv.Close), lim: opts.Limits}
	t.tok.Init(jsonstream.Config{Paths: paths, Limits: opts.Limits, Doc: jsonstream.DocBare})
	t.blanks = make([]byte, 0, maxBlank)
	t.block = make([]byte, 0, 256)
	return t
}

// Reset readies t for a new reply, keeping its buffers.
func (t *Parser) Reset() {
	t.tok.Reset()
	*t = Parser{
		conv: t.conv, open: t.open, close: t.close, lim: t.lim, tok: t.tok,
		blanks: t.blanks[:0], block: t.block[:0],
		call:     call{name: t.call.name[:0], args: t.call.args[:0]},
		lastName: t.lastName, sentBlock: t.sentBlock,
	}
}

// Feed consumes the next bytes of the reply. b is not retained; the Text of
// every event is borrowed and valid only until emit returns.
func (t *Parser) Feed(b []byte, emit transform.Emit) {
	if t.st == stDead || len(b) == 0 {
		return
	}
	t.emit = emit
	t.raw.Feed(b, emit)
	i := 0
	if t.carry.Pending() {
		out, rest := t.carry.Resume(b)
		i = len(b) - len(rest)
		t.text(out)
	}
	t.scan(b[i:], t.off+int64(i), true)
	t.off += int64(len(b))
	t.emit = nil
}

// scan runs over p, whose first byte is at reply offset base. end says p
// runs to the end of the Feed, where a cut rune is held.
func (t *Parser) scan(p []byte, base int64, end bool) {
	i := 0
	for i < len(p) && t.st != stDead {
		switch {
		case t.st == stText && t.np > 0:
			i = t.openStep(p, i, base)
		case t.st == stText:
			j := bytes.IndexByte(p[i:], t.open[0])
			if j < 0 {
				seg := p[i:]
				if end {
					seg = t.carry.Hold(seg)
				}
				t.text(seg)
				return
			}
			t.text(p[i : i+j])
			i += j
			t.pendOff = base + int64(i)
			t.np = 0
			i = t.openStep(p, i, base)
		case t.st == stBody:
			i = t.body(p, i, base)
		default:
			i = t.trail(p, i, base)
		}
	}
}

// openStep matches the opening marker from p[i] and returns where it
// stopped. A candidate that turns out to be text is text, and the bytes
// after its first are scanned again, since one of them may start the
// marker (PARSING.md §4.1, TM15).
func (t *Parser) openStep(p []byte, i int, base int64) int {
	for i < len(p) && t.np < len(t.open) {
		if p[i] != t.open[t.np] {
			// The held bytes are the marker's first np bytes: they are
			// read from the marker itself, which nothing overwrites.
			held := t.open[:t.np]
			t.np = 0
			t.text(held[:1])
			t.scan(held[1:], t.pendOff+1, false)
			return i
		}
		t.np++
		i++
	}
	if t.np == len(t.open) {
		t.np = 0
		t.beginBlock(base + int64(i))
	}
	return i
}

// text sends b as answer text. Its trailing blanks are held until what
// follows shows whether they end the answer; blanks that start the answer
// after a block are dropped (see the package comment).
func (t *Parser) text(b []byte) {
	k := len(b)
	for k > 0 && isBlank(b[k-1]) {
		k--
	}
	if k > 0 {
		if t.edge && !t.answer {
			// The answer's first text: the blanks before it stand between
			// a block and the answer's start.
			t.blanks = t.blanks[:0]
			for k > 0 && isBlank(b[0]) {
				b, k = b[1:], k-1
			}
		}
		t.edge = false
		t.flushBlanks()
		t.answerDelta(b[:k])
	}
	if t.edge && !t.answer {
		return // blanks before the answer's start
	}
	for b = b[k:]; len(b) > 0; {
		room := maxBlank - len(t.blanks)
		if room == 0 {
			t.flushBlanks()
			room = maxBlank
		}
		n := min(room, len(b))
		t.blanks = append(t.blanks, b[:n]...)
		b = b[n:]
	}
}

// endBlanks settles the held blanks at the end of the reply: after a
// block they end the answer and are dropped; otherwise they are the
// text's, as in the text format.
func (t *Parser) endBlanks() {
	if t.edge {
		t.blanks = t.blanks[:0]
		return
	}
	t.flushBlanks()
}

// flushBlanks sends the held blanks as answer text.
func (t *Parser) flushBlanks() {
	if len(t.blanks) > 0 {
		t.answerDelta(t.blanks)
		t.blanks = t.blanks[:0]
	}
}

func (t *Parser) answerDelta(b []byte) {
	if !t.answer {
		t.answer = true
		t.emit(transform.Event{Kind: transform.KindAnswerStart})
	}
	t.emit(transform.Event{Kind: transform.KindAnswerDelta, Text: b})
}

// Close ends the reply: a held marker candidate and held blanks are text,
// a block cut off is ended (see the package comment), and the answer is
// closed.
func (t *Parser) Close(emit transform.Emit) {
	if t.st == stDead {
		return
	}
	t.emit = emit
	switch t.st {
	case stBody:
		t.tok.Close((*tokens)(t))
		t.breakBlock(CodeUnterminatedToolCall, "the reply ended inside the tool call block")
	case stTrail:
		// A closing marker cut off is the block's.
		t.block = append(t.block, t.close[:t.np]...)
		t.np = 0
		if len(t.close) > 0 {
			t.violation(CodeUnterminatedToolCall, t.blockOff,
				"the reply ended before the block's closing marker; its call is complete and was kept")
		}
		t.endBlock(false)
	}
	if t.st == stText && t.np > 0 {
		t.text(t.open[:t.np])
		t.np = 0
	}
	if t.carry.Pending() {
		out := t.carry.Flush()
		t.violation(CodeInvalidUTF8, t.off-int64(len(out)), "")
		t.text(out)
	}
	t.raw.Close(emit)
	if t.st != stDead {
		t.endBlanks()
		t.closeAnswer()
	}
	t.st = stDead
	t.emit = nil
}

// closeAnswer ends the answer section if one was opened.
func (t *Parser) closeAnswer() {
	if t.answer {
		t.answer = false
		t.emit(transform.Event{Kind: transform.KindAnswerEnd})
	}
}

// violation reports an anomaly at reply offset off.
func (t *Parser) violation(code string, off int64, detail string) {
	ev := transform.Event{Kind: transform.KindViolation, Code: code, Offset: off}
	if detail != "" {
		ev.Text = []byte(detail)
	}
	t.emit(ev)
}

// fail ends the reply with a fatal error: the text of the block being
// read is delivered first (no call was started from it: a call is sent
// whole at its block's end), then the answer closes.
func (t *Parser) fail(code, msg string) {
	if t.st == stDead {
		return
	}
	if t.st != stText {
		t.text(t.block)
	}
	t.endBlanks()
	t.closeAnswer()
	t.st = stDead
	t.emit(transform.Event{Kind: transform.KindError, Code: code, Text: []byte(msg)})
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
