package aiplan

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// Parser parses an aiplan reply incrementally. It implements
// transform.Parser; create it with New.
type Parser struct {
	opts     transform.ParserOptions
	title    []byte // opts.ReasoningTitle
	fallback []byte // opts.FallbackText
	tok      jsonstream.Tokenizer
	emit     transform.Emit
	raw      parsekit.RawEcho
	failed   bool // a fatal error was reported: input is ignored

	thinkingOpen bool
	answerOpen   bool
	answered     bool // answer text was sent (the fallback's condition)
	settled      bool // the reply ended or broke: validation and fallback are done
	calls        int  // tool calls opened in the stream: the next call's Index

	plan plan
	call toolCall
}

// New returns a Parser with opts (zero fields take their defaults).
func New(opts transform.ParserOptions) *Parser {
	p := &Parser{opts: opts.WithDefaults()}
	p.title = []byte(p.opts.ReasoningTitle)
	p.fallback = []byte(p.opts.FallbackText)
	p.tok.Init(jsonstream.Config{Paths: paths, Limits: p.opts.Limits, Doc: jsonstream.DocLenient})
	p.call.args = make([]byte, 0, 256)
	p.Reset()
	return p
}

// Reset readies p for a new reply.
func (p *Parser) Reset() {
	p.tok.Reset()
	p.raw.Reset()
	p.failed, p.thinkingOpen, p.answerOpen, p.answered, p.settled = false, false, false, false, false
	p.calls = 0
	p.plan = plan{}
	p.call.reset(0)
	p.emit = nil
}

// Feed consumes the next bytes of the reply.
func (p *Parser) Feed(b []byte, emit transform.Emit) {
	if p.failed {
		return
	}
	p.emit = emit
	p.raw.Feed(b, p.emit)
	p.tok.Feed(b, (*tokens)(p))
	p.emit = nil
}

// Close ends the reply: a reply cut off inside the object is reported
// (unterminated_json, JO26), every open section is closed, and a reply
// that gave no answer and no tool call gets the fallback answer.
func (p *Parser) Close(emit transform.Emit) {
	if p.failed {
		return
	}
	p.emit = emit
	defer func() { p.emit = nil }()
	p.raw.Close(p.emit)
	p.tok.Close((*tokens)(p))
	if !p.failed {
		p.settle(true, -1)
	}
}

// settle closes every open section once the reply ended or broke, and
// sends the safe fallback answer if the user got neither an answer nor a
// tool call (specs/003 错误处理标准, CONTRACT.md §4). broken says the
// reply is not a usable plan, which needs the fallback even after tool
// calls. off is where the reply ended or broke.
func (p *Parser) settle(broken bool, off int64) {
	if p.settled {
		return
	}
	p.settled = true
	p.closeThinking()
	p.closeAnswer()
	p.endCall(off, broken)
	if !p.answered && (broken || p.calls == 0) {
		p.openAnswer()
		p.emit(transform.Event{Kind: transform.KindAnswerDelta, Text: p.fallback})
		p.answered = true
		p.closeAnswer()
	}
}

// violation emits a KindViolation.
func (p *Parser) violation(code string, text []byte, off int64) {
	p.emit(transform.Event{Kind: transform.KindViolation, Code: code, Text: text, Offset: off})
}

// fail ends the stream with a fatal error, after closing what is open. A
// tool call whose arguments the error cut off stays open, so that they are
// never presented as complete.
func (p *Parser) fail(code, msg string) {
	p.closeThinking()
	p.closeAnswer()
	p.emit(transform.Event{Kind: transform.KindError, Code: code, Text: []byte(msg)})
	p.failed = true
}

var _ transform.Parser = (*Parser)(nil)
