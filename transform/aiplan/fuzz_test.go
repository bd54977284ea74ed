package aiplan

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

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

// FuzzAIPlanDirectValue checks CONTRACT.md §7 for a direct_response that
// is any JSON value, cut anywhere, as FuzzJSONLTextValue does for jsonl: a
// string is the answer, decoded as encoding/json decodes it; null is no
// answer (the fallback); any other value is reported as wrong_type and
// its JSON text, byte for byte, is the answer.
func FuzzAIPlanDirectValue(f *testing.F) {
	for _, v := range []string{`"a\nb"`, `123`, `-0.5e+7`, `true`, `null`, ` [1, "x", {"y": null}] `,
		`{"k":"\u4f60\ud83d\ude00"}`, `"\ud83d"`, `[]`, `{}`, `""`} {
		f.Add([]byte(v), []byte{5, 9, 1})
	}
	f.Fuzz(func(t *testing.T, value, cuts []byte) {
		// encoding/json replaces invalid UTF-8, which the parser keeps.
		if !json.Valid(value) || !utf8.Valid(value) {
			return
		}
		input := []byte(`{"thought":"t","response_mode":"KNOWLEDGE_QA","direct_response":` + string(value) + `,"tool_calls":[]}`)
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
		case json.Unmarshal(value, &s) == nil && s != "":
			if string(answer) != s || wrongType != 0 {
				t.Fatalf("string %s: answer %q, want %q; %d wrong_type", value, answer, s, wrongType)
			}
		case json.Unmarshal(value, &s) == nil, string(trimmed) == "null":
			// No answer: the fallback.
			if want := transform.DefaultFallbackText; string(answer) != want || wrongType != 0 {
				t.Fatalf("%s: answer %q, want the fallback; %d wrong_type", value, answer, wrongType)
			}
		case !bytes.Equal(answer, trimmed) || wrongType != 1:
			t.Fatalf("value %s: answer %q, want its JSON text; %d wrong_type, want 1", value, answer, wrongType)
		}
	})
}
