package jsonl

import (
	"bytes"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonformat"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// Parser parses a jsonl reply incrementally. It implements
// transform.Parser; create it with New. The skeleton every JSON format
// shares (tokenizer, raw echo, fatal errors, section pairing) is its
// jsonformat.Base; the Parser splits the reply into lines and hands each
// line's object to the tokenizer (jsonformat.Input).
type Parser struct {
	jsonformat.Base
	opts  transform.ParserOptions
	title []byte // opts.ReasoningTitle

	line lineState
	obj  object
	seq  sequence
}

// New returns a Parser with opts (zero fields take their defaults).
func New(opts transform.ParserOptions) *Parser {
	p := &Parser{opts: opts.WithDefaults()}
	p.title = []byte(p.opts.ReasoningTitle)
	p.obj.hold = make([]byte, 0, 256)
	p.Init((*fields)(p), watched, jsonstream.DocBare, p.opts.Limits)
	p.Reset()
	return p
}

// Reset readies p for a new reply.
func (p *Parser) Reset() {
	p.Base.Reset()
	p.line = lineState{}
	p.obj.reset(-1)
	p.seq = sequence{}
}

// FeedInput reads the next bytes of the reply line by line.
func (h *fields) FeedInput(b []byte) {
	p := (*Parser)(h)
	i := p.resumeLine(b)
	for i < len(b) && !p.Failed() {
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
	if !p.Failed() {
		p.suspendLine(b)
	}
}

// CloseInput ends the last line: it parses a last line without a newline
// (JL02).
func (h *fields) CloseInput() { (*Parser)(h).closeLine() }

// Finish reports what the reply lacked; Base then closes every open
// section.
func (h *fields) Finish() {
	p := (*Parser)(h)
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
	n := p.FeedTokens(b[i:j])
	i += n
	switch tok := p.Tokenizer(); {
	case p.Failed():
		return len(b)
	case tok.Done():
		p.line.st = lineAfter
	case tok.Stopped():
		// The object broke at b[i] (JL06): bad_line was reported, and the
		// rest of the line is the model's text.
		p.breakObject()
		p.obj.reset(-1)
		p.line.st = lineText
		p.line.start = i
	case i == j && j < len(b):
		// The line ended inside the object.
		p.Violation(CodeBadLine, textUnterminated, p.Offset()+int64(j))
		if p.breakObject() {
			// A raw newline inside the answer's string (a model that
			// did not escape it): it is the model's line break.
			p.AnswerText(newline)
		}
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
		p.holdSep(newline)
		p.endLine()
		return i + 1
	case c == ' ' || c == '\t' || c == '\r':
		p.holdSep(b[i : i+1])
		return i + 1
	case c == '{':
		// JL09, lenient: a second object on the line is the next event.
		p.Violation(CodeMultipleValues, nil, p.Offset()+int64(i))
		p.startObject(i)
		return i
	}
	p.Violation(CodeBadLine, textTrailing, p.Offset()+int64(i))
	p.releaseSep()
	p.line.st = lineText
	p.line.start = i
	return i
}

// startObject hands the '{' at b[i] and what follows to the tokenizer.
func (p *Parser) startObject(i int) {
	p.line.nsep = 0 // blanks between lines
	p.Tokenizer().ResetAt(p.Offset() + int64(i))
	p.obj.reset(p.Offset() + int64(i))
	p.line.st = lineJSON
}

var _ transform.Parser = (*Parser)(nil)
