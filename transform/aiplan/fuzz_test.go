package aiplan

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzAIPlan checks, for any reply and any split of it: no panic,
// well-formed events, the same normalized events as the one-shot parse,
// the raw text equal to the input (a prefix after a fatal error), an
// answer or a tool call for the user whatever the reply (the safe
// fallback, specs/003), a reply that holds no object answered with its
// own text (CONTRACT.md §7), and no tool call without a name (issue 9:
// clients reject one).
func FuzzAIPlan(f *testing.F) {
	inputs := make([]string, len(cases))
	for i, tc := range cases {
		inputs[i] = strings.Join(tc.chunks, "")
	}
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16, MaxToolCalls: 2}}
	newParser := func(opts transform.ParserOptions) transform.Parser { return New(opts) }
	transformtest.FuzzCuts(f, inputs, "testdata/*.txt", tight, newParser, func(t *testing.T, whole []transform.Event) {
		wn, raw := transformtest.Normalize(whole)
		if !transformtest.Failed(whole) && !answersUser(wn) {
			t.Fatalf("the user got no answer and no tool call: %s", transformtest.Format(wn))
		}
		if want, ok := transformtest.ProseAnswer(raw); ok && len(want) > 0 && !transformtest.Failed(whole) {
			if got := transformtest.Answer(whole); !bytes.Equal(got, want) {
				t.Fatalf("a reply without an object answered %q, want its text %q", got, want)
			}
		}
		for _, ev := range whole {
			if ev.Kind == transform.KindToolCallStart && ev.Name == "" {
				t.Fatalf("a tool call without a name: %s", transformtest.Format(wn))
			}
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
