package aiplan

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzAIPlan checks, for any reply and any split of it: no panic,
// well-formed events, the same normalized events as the one-shot parse,
// the raw text equal to the input (a prefix after a fatal error), and an
// answer or a tool call for the user whatever the reply (the safe
// fallback, specs/003).
func FuzzAIPlan(f *testing.F) {
	inputs := make([]string, len(cases))
	for i, tc := range cases {
		inputs[i] = strings.Join(tc.chunks, "")
	}
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16, MaxToolCalls: 2}}
	newParser := func(opts transform.ParserOptions) transform.Parser { return New(opts) }
	transformtest.FuzzCuts(f, inputs, "testdata/*.txt", tight, newParser, func(t *testing.T, whole []transform.Event) {
		if wn, _ := transformtest.Normalize(whole); !transformtest.Failed(whole) && !answersUser(wn) {
			t.Fatalf("the user got no answer and no tool call: %s", transformtest.Format(wn))
		}
	})
}

// answersUser reports whether evs hold answer text or a tool call.
func answersUser(evs []transform.Event) bool {
	for _, ev := range evs {
		if ev.Kind == transform.KindAnswerDelta || ev.Kind == transform.KindToolCallStart {
			return true
		}
	}
	return false
}
