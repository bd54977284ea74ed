// Package format is the registry of the reply formats llmstream parses:
// one row per format with its parser, how auto detection recognises it, and
// whether it owns <think>. The pipeline and the configuration read only the
// table, so adding a format is its package and one row. The plain text
// parser and the auto detector live here too; each structured format lives
// in its own package (thinkingml, jsonl, aiplan, finalresult).
package format

import (
	"fmt"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/aiplan"
	"github.com/llmstream/llmstream/transform/finalresult"
	"github.com/llmstream/llmstream/transform/jsonl"
	"github.com/llmstream/llmstream/transform/texttools"
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

// Format is one row of the format table.
type Format struct {
	// Name is the format option's value.
	Name Name
	// New returns a parser for one reply at a time (Reset readies it for
	// the next).
	New func(transform.ParserOptions) transform.Parser
	// DetectTag makes auto choose this format for a reply whose first
	// non-blank byte is '<' (CONTRACT §4). One row at most sets it.
	DetectTag bool
	// DetectKeys are the top-level keys by which auto recognises a JSON
	// object reply of this format: the first known key decides.
	DetectKeys []string
	// OwnsThink says the format's grammar handles a <think> block itself:
	// the pipeline's think_tags stage (transform/thinktags) then reads
	// only reasoning a prefilled <think> left open, and the format reads
	// the rest. For the other formats the stage also reads a leading
	// <think> block, and drops the tags a provider echoed into the
	// content of a natively reasoned reply.
	OwnsThink bool
}

// formats is the format table, in the order messages list the names.
// Text is also what auto falls back to.
var formats = []*Format{
	{Name: ThinkingML, New: func(o transform.ParserOptions) transform.Parser { return thinkingml.New(o) },
		DetectTag: true, OwnsThink: true},
	{Name: JSONL, New: func(o transform.ParserOptions) transform.Parser { return jsonl.New(o) },
		DetectKeys: []string{"event"}},
	{Name: AIPlan, New: func(o transform.ParserOptions) transform.Parser { return aiplan.New(o) },
		DetectKeys: []string{"thought", "response_mode", "direct_response", "tool_calls"}},
	{Name: FinalResult, New: func(o transform.ParserOptions) transform.Parser { return finalresult.New(o) },
		DetectKeys: []string{"status", "message", "clarify", "artifacts"}},
	{Name: Text, New: newTextFormat},
	{Name: Auto, New: func(o transform.ParserOptions) transform.Parser { return NewAuto(o) }},
}

// newTextFormat returns the text parser: with tool calls written as text when
// the options name a text_tools convention (CONTRACT.md §8), plain
// otherwise.
func newTextFormat(o transform.ParserOptions) transform.Parser {
	if conv, ok := texttools.Lookup(o.TextTools); ok {
		return texttools.New(conv, o)
	}
	return NewText()
}

// Formats returns the format table's rows, in order. The rows are shared
// and must not be modified.
func Formats() []*Format { return formats }

// Lookup returns the row named name.
func Lookup(name Name) (*Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}

// New returns a parser for the named format.
func New(name Name, opts transform.ParserOptions) (transform.Parser, error) {
	if f, ok := Lookup(name); ok {
		return f.New(opts), nil
	}
	names := make([]string, len(formats))
	for i, f := range formats {
		names[i] = string(f.Name)
	}
	return nil, fmt.Errorf("unknown format %q (want %s)", name, strings.Join(names, ", "))
}
