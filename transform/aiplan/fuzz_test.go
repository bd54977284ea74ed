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
	for _, tc := range cases {
		f.Add([]byte(strings.Join(tc.chunks, "")), []byte{3, 17, 1})
	}
	transformtest.SeedFiles(f, "testdata/*.txt", []byte{40, 2, 250, 9})
	small := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16, MaxToolCalls: 2}}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		opts := transform.ParserOptions{}
		if len(cuts) > 0 && cuts[0]%4 == 0 {
			opts = small
		}
		newP := func() transform.Parser { return New(opts) }
		whole, err := transformtest.CheckCuts(newP, data, cuts)
		if err != nil {
			t.Fatal(err)
		}
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
