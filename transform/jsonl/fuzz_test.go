package jsonl

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzJSONL checks, for any reply and any split of it: no panic,
// well-formed events, the same normalized events as the one-shot parse,
// and the raw text equal to the input (a prefix of it after a fatal
// error, past which a parser ignores its input).
func FuzzJSONL(f *testing.F) {
	inputs := make([]string, len(cases))
	for i, tc := range cases {
		inputs[i] = strings.Join(tc.chunks, "")
	}
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16}}
	newParser := func(opts transform.ParserOptions) transform.Parser { return New(opts) }
	transformtest.FuzzCuts(f, inputs, "testdata/*.jsonl", tight, newParser, nil)
}
