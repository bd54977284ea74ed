package finalresult

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

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

// FuzzMessageValue checks CONTRACT.md §7 for a message that is any JSON
// value, cut anywhere, as FuzzJSONLTextValue does for jsonl: a string is
// the answer, decoded as encoding/json decodes it; null is no answer; any
// other value is reported as wrong_type and its JSON text, byte for byte,
// is the answer.
func FuzzMessageValue(f *testing.F) {
	for _, v := range []string{`"a\nb"`, `42`, `-0.5e+7`, `false`, `null`, ` [1, "x", {"y": null}] `,
		`{"k":"\u4f60\ud83d\ude00"}`, `"\ud83d"`, `[]`, `{}`, `""`} {
		f.Add([]byte(v), []byte{5, 9, 1})
	}
	newParser := func() transform.Parser { return New(transform.ParserOptions{}) }
	f.Fuzz(func(t *testing.T, value, cuts []byte) {
		// encoding/json replaces invalid UTF-8, which the parser keeps.
		if !json.Valid(value) || !utf8.Valid(value) {
			return
		}
		input := []byte(`{"status":"answer_ready","message":` + string(value) + `}`)
		whole, err := transformtest.CheckCuts(newParser, input, cuts)
		if err != nil {
			t.Fatal(err)
		}
		answer, wrongType := transformtest.Answer(whole), 0
		for _, ev := range whole {
			if ev.Kind == transform.KindViolation && ev.Code == CodeWrongType {
				wrongType++
			}
		}
		var s string
		trimmed := bytes.Trim(value, " \t\r\n")
		switch {
		case json.Unmarshal(value, &s) == nil:
			if string(answer) != s || wrongType != 0 {
				t.Fatalf("string %s: answer %q, want %q; %d wrong_type", value, answer, s, wrongType)
			}
		case string(trimmed) == "null":
			if len(answer) != 0 || wrongType != 0 {
				t.Fatalf("null: answer %q; %d wrong_type", answer, wrongType)
			}
		case !bytes.Equal(answer, trimmed) || wrongType != 1:
			t.Fatalf("value %s: answer %q, want its JSON text; %d wrong_type, want 1", value, answer, wrongType)
		}
	})
}
