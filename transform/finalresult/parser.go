package finalresult

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// Parser parses a final_result reply incrementally. It implements
// transform.Parser; create it with New.
type Parser struct {
	opts   transform.ParserOptions
	tok    jsonstream.Tokenizer
	emit   transform.Emit
	raw    parsekit.RawEcho
	failed bool // a fatal error was reported: input is ignored

	answerOpen bool
	result     result
}

// New returns a Parser with opts (zero fields take their defaults).
func New(opts transform.ParserOptions) *Parser {
	p := &Parser{opts: opts.WithDefaults()}
	p.tok.Init(jsonstream.Config{Paths: paths, Limits: p.opts.Limits, Doc: jsonstream.DocStrict})
	p.result.artifacts = make([]byte, 0, 256)
	p.Reset()
	return p
}

// Reset readies p for a new reply.
func (p *Parser) Reset() {
	p.tok.Reset()
	p.raw.Reset()
	p.failed, p.answerOpen = false, false
	p.result.reset()
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
// (unterminated_json, JO26) and the answer is closed.
func (p *Parser) Close(emit transform.Emit) {
	if p.failed {
		return
	}
	p.emit = emit
	defer func() { p.emit = nil }()
	p.raw.Close(p.emit)
	p.tok.Close((*tokens)(p))
	if !p.failed {
		p.closeAnswer()
	}
}

func (p *Parser) openAnswer() {
	if !p.answerOpen {
		p.answerOpen = true
		p.emit(transform.Event{Kind: transform.KindAnswerStart})
	}
}

func (p *Parser) closeAnswer() {
	if p.answerOpen {
		p.answerOpen = false
		p.emit(transform.Event{Kind: transform.KindAnswerEnd})
	}
}

// answerText emits answer text, opening the answer if needed.
func (p *Parser) answerText(text []byte) {
	p.openAnswer()
	p.emit(transform.Event{Kind: transform.KindAnswerDelta, Text: text})
}

// violation emits a KindViolation.
func (p *Parser) violation(code string, text []byte, off int64) {
	p.emit(transform.Event{Kind: transform.KindViolation, Code: code, Text: text, Offset: off})
}

// fail ends the stream with a fatal error, after closing the answer.
func (p *Parser) fail(code, msg string) {
	p.closeAnswer()
	p.emit(transform.Event{Kind: transform.KindError, Code: code, Text: []byte(msg)})
	p.failed = true
}

var _ transform.Parser = (*Parser)(nil)
