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
	for _, tc := range cases {
		f.Add([]byte(strings.Join(tc.chunks, "")), []byte{3, 17, 1})
	}
	transformtest.SeedFiles(f, "testdata/*.jsonl", []byte{40, 2, 250, 9})
	small := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16}}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		opts := transform.ParserOptions{}
		if len(cuts) > 0 && cuts[0]%4 == 0 {
			opts = small
		}
		newP := func() transform.Parser { return New(opts) }
		if _, err := transformtest.CheckCuts(newP, data, cuts); err != nil {
			t.Fatal(err)
		}
	})
}
