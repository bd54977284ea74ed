package jsonl

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzJSONL checks, for any reply and any split of it: no panic,
// well-formed events, the same normalized events as the one-shot parse,
// the raw text equal to the input (a prefix of it after a fatal error,
// past which a parser ignores its input), and wrong_type violations that
// name one of the fields.
func FuzzJSONL(f *testing.F) {
	inputs := make([]string, len(cases))
	for i, tc := range cases {
		inputs[i] = strings.Join(tc.chunks, "")
	}
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16}}
	newParser := func(opts transform.ParserOptions) transform.Parser { return New(opts) }
	transformtest.FuzzCuts(f, inputs, "testdata/*.jsonl", tight, newParser, func(t *testing.T, whole []transform.Event) {
		for _, ev := range whole {
			if ev.Kind == transform.KindViolation && ev.Code == CodeWrongType && !knownField(ev.Text) {
				t.Fatalf("wrong_type names no field: %q", ev.Text)
			}
		}
	})
}

func knownField(name []byte) bool {
	for _, n := range fieldNames {
		if n != nil && bytes.Equal(n, name) {
			return true
		}
	}
	return false
}

// FuzzJSONLTextValue checks CONTRACT.md §7 for a final_delta whose "text"
// is any JSON value, cut anywhere: a string is the answer, decoded as
// encoding/json decodes it; null is no text; any other value is reported
// as wrong_type and its JSON text, byte for byte, is the answer.
func FuzzJSONLTextValue(f *testing.F) {
	for _, v := range []string{`"a\nb"`, `123`, `-0.5e+7`, `true`, `null`, ` [1, "x", {"y": null}] `,
		`{"k":"\u4f60\ud83d\ude00"}`, `"\ud83d"`, `[]`, `{}`, `"` + strings.Repeat("长", 40) + `"`} {
		f.Add([]byte(v), []byte{5, 9, 1})
	}
	f.Fuzz(func(t *testing.T, value, cuts []byte) {
		// The value must be one JSON value on one line; encoding/json
		// replaces invalid UTF-8, which the parser keeps, so it is left out.
		if !json.Valid(value) || bytes.ContainsAny(value, "\n\r") || !utf8.Valid(value) {
			return
		}
		head := lThinkStart + lThinkEnd + `{"event":"final_delta","text":`
		input := []byte(head + string(value) + "}\n" + lFinalEnd)
		whole, err := transformtest.CheckCuts(newParser, input, cuts)
		if err != nil {
			t.Fatal(err)
		}
		var answer []byte
		wrongType := 0
		for _, ev := range whole {
			switch {
			case ev.Kind == transform.KindAnswerDelta:
				answer = append(answer, ev.Text...)
			case ev.Kind == transform.KindViolation && ev.Code == CodeWrongType:
				wrongType++
			}
		}
		var s string
		trimmed := bytes.Trim(value, " \t")
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
