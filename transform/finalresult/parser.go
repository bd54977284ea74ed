package finalresult

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonformat"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// Parser parses a final_result reply incrementally. It implements
// transform.Parser; create it with New. The skeleton every JSON format
// shares (tokenizer, raw echo, fatal errors, section pairing) is its
// jsonformat.Base; a reply that is not JSON reaches it as prose, which
// becomes the answer.
type Parser struct {
	jsonformat.Base
	opts   transform.ParserOptions
	result result
}

// New returns a Parser with opts (zero fields take their defaults).
func New(opts transform.ParserOptions) *Parser {
	p := &Parser{opts: opts.WithDefaults()}
	p.result.artifacts = make([]byte, 0, 256)
	p.Init((*fields)(p), watched, jsonstream.DocStrict, p.opts.Limits)
	p.Reset()
	return p
}

// Reset readies p for a new reply.
func (p *Parser) Reset() {
	p.Base.Reset()
	p.result.reset()
}

var _ transform.Parser = (*Parser)(nil)
