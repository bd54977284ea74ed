package aiplan

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonformat"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// Parser parses an aiplan reply incrementally. It implements
// transform.Parser; create it with New. The skeleton every JSON format
// shares (tokenizer, raw echo, fatal errors, section pairing) is its
// jsonformat.Base.
type Parser struct {
	jsonformat.Base
	opts     transform.ParserOptions
	title    []byte // opts.ReasoningTitle
	fallback []byte // opts.FallbackText

	settled bool // the reply ended or broke: validation and fallback are done
	calls   int  // tool calls opened in the stream: the next call's Index

	plan plan
	call toolCall
}

// New returns a Parser with opts (zero fields take their defaults).
func New(opts transform.ParserOptions) *Parser {
	p := &Parser{opts: opts.WithDefaults()}
	p.title = []byte(p.opts.ReasoningTitle)
	p.fallback = []byte(p.opts.FallbackText)
	p.call.args = make([]byte, 0, 256)
	p.Init((*fields)(p), watched, jsonstream.DocLenient, p.opts.Limits)
	p.Reset()
	return p
}

// Reset readies p for a new reply.
func (p *Parser) Reset() {
	p.Base.Reset()
	p.settled = false
	p.calls = 0
	p.plan = plan{}
	p.call.reset(0)
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
	p.CloseThinking()
	p.CloseAnswer()
	p.endCall(off, broken)
	if !p.Answered() && (broken || p.calls == 0) {
		p.AnswerText(p.fallback)
		p.CloseAnswer()
	}
}

var _ transform.Parser = (*Parser)(nil)
