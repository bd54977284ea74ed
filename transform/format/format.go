// Package format names the reply formats llmstream parses and builds their
// parsers: the registry the pipeline and the configuration share, the plain
// text parser, and the auto detector. Each structured format lives in its
// own package (thinkingml, jsonl, aiplan, finalresult).
package format

import (
	"fmt"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/aiplan"
	"github.com/llmstream/llmstream/transform/finalresult"
	"github.com/llmstream/llmstream/transform/jsonl"
	"github.com/llmstream/llmstream/transform/thinkingml"
)

// Name is a reply format as the Caddyfile's format option spells it.
type Name string

// The formats (CONTRACT §4).
const (
	ThinkingML  Name = "thinkingml"
	JSONL       Name = "jsonl"
	AIPlan      Name = "aiplan"
	FinalResult Name = "final_result"
	Text        Name = "text"
	Auto        Name = "auto"
)

// Names lists every format, for validation messages.
var Names = []Name{ThinkingML, JSONL, AIPlan, FinalResult, Text, Auto}

// New returns a parser for the named format.
func New(name Name, opts transform.ParserOptions) (transform.Parser, error) {
	switch name {
	case ThinkingML:
		return thinkingml.New(opts), nil
	case JSONL:
		return jsonl.New(opts), nil
	case AIPlan:
		return aiplan.New(opts), nil
	case FinalResult:
		return finalresult.New(opts), nil
	case Text:
		return NewText(), nil
	case Auto:
		return NewAuto(opts), nil
	}
	return nil, fmt.Errorf("unknown format %q (want thinkingml, jsonl, aiplan, final_result, text or auto)", name)
}
