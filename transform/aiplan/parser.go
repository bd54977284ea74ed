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

	settled bool // the object ended or the reply broke: validation is done
	broken  bool // the reply is not a usable plan: it needs the fallback
	calls   int  // tool call objects begun, bounded by MaxToolCalls
	started int  // tool calls started: the next call's Index
	null    bool // the thought or direct_response being read is null
	text    bool // a tool_calls value is held to be delivered as text

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
	p.settled, p.broken = false, false
	p.calls, p.started = 0, 0
	p.null, p.text = false, false
	p.plan = plan{}
	p.call.reset()
}

// settle closes every open section once the object ended or the reply
// broke, whose last byte read is at end: a tool call in progress ends
// (endCall), and a value held as text is delivered. The fallback waits for
// the reply's end (Finish), where it shows whether the model's text
// answered.
func (p *Parser) settle(end int64) {
	if p.settled {
		return
	}
	p.settled = true
	p.CloseThinking()
	p.CloseAnswer()
	p.endCall(end)
	p.endText(end)
}

var _ transform.Parser = (*Parser)(nil)
