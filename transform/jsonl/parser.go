package jsonl

import (
	"bytes"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// Parser parses a jsonl reply incrementally. It implements
// transform.Parser; create it with New.
type Parser struct {
	opts  transform.ParserOptions
	title []byte // opts.ReasoningTitle
	tok   jsonstream.Tokenizer
	emit  transform.Emit

	off    int64 // reply offset of the current chunk's first byte
	raw    parsekit.RawEcho
	failed bool // a fatal error was reported: input is ignored

	line lineState
	obj  object
	seq  sequence
}

// New returns a Parser with opts (zero fields take their defaults).
func New(opts transform.ParserOptions) *Parser {
	p := &Parser{opts: opts.WithDefaults()}
	p.title = []byte(p.opts.ReasoningTitle)
	p.tok.Init(jsonstream.Config{Paths: paths, Limits: p.opts.Limits, Doc: jsonstream.DocBare})
	p.obj.hold = make([]byte, 0, 256)
	p.Reset()
	return p
}

// Reset readies p for a new reply.
func (p *Parser) Reset() {
	p.tok.Reset()
	p.off = 0
	p.raw.Reset()
	p.failed = false
	p.line = lineState{}
	p.obj.reset(-1)
	p.seq = sequence{}
	p.emit = nil
}

// Feed consumes the next bytes of the reply.
func (p *Parser) Feed(b []byte, emit transform.Emit) {
	if p.failed {
		return
	}
	p.emit = emit
	p.raw.Feed(b, p.emit)
	i := p.resumeLine(b)
	for i < len(b) && !p.failed {
		switch p.line.st {
		case lineJSON:
			i = p.feedObject(b, i)
		case lineAfter:
			i = p.stepAfterObject(b, i)
		case lineText:
			i = p.stepText(b, i)
		case lineFence:
			i = p.stepFence(b, i)
		default:
			i = p.stepLineStart(b, i)
		}
	}
	if !p.failed {
		p.suspendLine(b)
	}
	p.off += int64(len(b))
	p.emit = nil
}

// Close ends the reply: it parses a last line without a newline (JL02),
// closes every open section and reports what the reply lacked.
func (p *Parser) Close(emit transform.Emit) {
	if p.failed {
		return
	}
	p.emit = emit
	defer func() { p.emit = nil }()
	p.raw.Close(p.emit)
	p.closeLine()
	if p.failed {
		return
	}
	p.seq.finish(p)
}

// feedObject hands the line's bytes up to the newline to the tokenizer.
func (p *Parser) feedObject(b []byte, i int) int {
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		j = len(b)
	} else {
		j += i
	}
	n := p.tok.Feed(b[i:j], (*tokens)(p))
	i += n
	switch {
	case p.failed:
		return len(b)
	case p.tok.Done():
		p.line.st = lineAfter
	case p.tok.Stopped():
		// The object broke at b[i] (JL06): bad_line was reported, and the
		// rest of the line is the model's text.
		p.obj.reset(-1)
		p.line.st = lineText
		p.line.start = i
	case i == j && j < len(b):
		// The line ended inside the object.
		p.violation(CodeBadLine, textUnterminated, p.off+int64(j))
		p.obj.reset(-1)
		p.endLine()
		return j + 1
	}
	return i
}

// stepAfterObject handles the bytes after an object on its line.
func (p *Parser) stepAfterObject(b []byte, i int) int {
	switch c := b[i]; {
	case c == '\n':
		p.endLine()
		return i + 1
	case c == ' ' || c == '\t' || c == '\r':
		return i + 1
	case c == '{':
		// JL09, lenient: a second object on the line is the next event.
		p.violation(CodeMultipleValues, nil, p.off+int64(i))
		p.startObject(i)
		return i
	}
	p.violation(CodeBadLine, textTrailing, p.off+int64(i))
	p.line.st = lineText
	p.line.start = i
	return i
}

// startObject hands the '{' at b[i] and what follows to the tokenizer.
func (p *Parser) startObject(i int) {
	p.tok.ResetAt(p.off + int64(i))
	p.obj.reset(p.off + int64(i))
	p.line.st = lineJSON
}

// violation emits a KindViolation.
func (p *Parser) violation(code string, text []byte, off int64) {
	p.emit(transform.Event{Kind: transform.KindViolation, Code: code, Text: text, Offset: off})
}

// fail ends the stream with a fatal error, after closing what is open.
func (p *Parser) fail(code, msg string) {
	p.seq.closeAll(p)
	p.emit(transform.Event{Kind: transform.KindError, Code: code, Text: []byte(msg)})
	p.failed = true
}

var _ transform.Parser = (*Parser)(nil)
