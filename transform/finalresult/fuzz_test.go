package finalresult

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzFinalResult checks, for any reply and any split of it: no panic,
// well-formed events, the same normalized events as the one-shot parse,
// and the raw text equal to the input (a prefix after a fatal error).
func FuzzFinalResult(f *testing.F) {
	inputs := make([]string, len(cases))
	for i, tc := range cases {
		inputs[i] = strings.Join(tc.chunks, "")
	}
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16}}
	newParser := func(opts transform.ParserOptions) transform.Parser { return New(opts) }
	transformtest.FuzzCuts(f, inputs, "testdata/*.txt", tight, newParser, nil)
}
