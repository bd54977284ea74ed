package finalresult

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzFinalResult checks, for any reply and any split of it: no panic,
// well-formed events, the same normalized events as the one-shot parse,
// the raw text equal to the input (a prefix after a fatal error), and a
// reply that holds no object answered with its own text (CONTRACT.md §7).
func FuzzFinalResult(f *testing.F) {
	inputs := make([]string, len(cases))
	for i, tc := range cases {
		inputs[i] = strings.Join(tc.chunks, "")
	}
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16}}
	newParser := func(opts transform.ParserOptions) transform.Parser { return New(opts) }
	transformtest.FuzzCuts(f, inputs, "testdata/*.txt", tight, newParser, func(t *testing.T, whole []transform.Event) {
		checkProse(t, whole)
	})
}

// checkProse checks that a reply without an object is answered with its
// own text. The reply is the raw text of the events.
func checkProse(t *testing.T, whole []transform.Event) {
	t.Helper()
	_, raw := transformtest.Normalize(whole)
	if want, ok := transformtest.ProseAnswer(raw); ok && !transformtest.Failed(whole) {
		if got := transformtest.Answer(whole); !bytes.Equal(got, want) {
			t.Fatalf("a reply without an object answered %q, want its text %q", got, want)
		}
	}
}
