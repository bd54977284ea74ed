package thinkingml

import (
	"slices"
	"testing"
)

func TestDecodeQueries(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
		ok   bool
	}{
		{"empty", `[]`, []string{}, true},
		{"spaced", " [ \"a\" ,\n\"b\" ] ", []string{"a", "b"}, true},
		{"unicode_escape", `["caf\u00e9"]`, []string{"café"}, true},
		{"surrogate_pair", `["\ud83d\ude00"]`, []string{"😀"}, true},
		{"lone_surrogate", `["\ud83dx"]`, []string{"\uFFFDx"}, true},
		{"escapes", `["a\"b\\c\/d\n"]`, []string{"a\"b\\c/d\n"}, true},
		{"raw_utf8", `["三分化"]`, []string{"三分化"}, true},
		{"trailing_comma", `["q1",]`, nil, false},
		{"single_quotes", `['q1']`, nil, false},
		{"null_element", `[null]`, nil, false},
		{"number", `["a", 1]`, nil, false},
		{"object", `{"a":"b"}`, nil, false},
		{"null", `null`, nil, false},
		{"trailing_text", `["a"] x`, nil, false},
		{"unterminated", `["a`, nil, false},
		{"control_char", "[\"a\tb\"]", nil, false},
		{"bad_escape", `["\x"]`, nil, false},
		{"short_unicode", `["\u00e"]`, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := decodeQueries([]byte(tt.in))
			if ok != tt.ok || !slices.Equal(got, tt.want) {
				t.Errorf("decodeQueries(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}
