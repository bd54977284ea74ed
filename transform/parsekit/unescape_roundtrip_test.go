package parsekit

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// TestAppendUnescapedRoundTrip: what the encoders' JSON writer makes of a
// string decodes back to it (the conversation store reads the skillpet
// events it captured so).
func TestAppendUnescapedRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", "引号\"和\\反斜杠/", "\b\f\n\r\t", "\x00\x1f\u2028\u2029", "😀 emoji", "<&>"} {
		enc := jsonout.AppendStringS(nil, s)
		if got := string(AppendUnescaped(nil, enc[1:len(enc)-1])); got != s {
			t.Errorf("%q: got %q", s, got)
		}
	}
	for raw, want := range map[string]string{`\ud83d\ude00`: "😀", `\ud83d`: "\uFFFD", `\ude00x`: "\uFFFDx", `\ud83dx`: "\uFFFDx", `\q`: `\q`, `\u12g4`: `\u12g4`, `a\`: `a\`} {
		if got := string(AppendUnescaped(nil, []byte(raw))); got != want {
			t.Errorf("%q: got %q, want %q", raw, got, want)
		}
	}
}

// FuzzAppendUnescaped: for any string, what the encoders' JSON writer
// makes of it decodes back to what encoding/json reads.
func FuzzAppendUnescaped(f *testing.F) {
	f.Add("a\"b\\c\n\u2028😀\x00")
	f.Add("\xff\xfe")
	f.Fuzz(func(t *testing.T, s string) {
		enc := jsonout.AppendStringS(nil, s)
		var want string
		if err := json.Unmarshal(enc, &want); err != nil {
			t.Fatalf("jsonout wrote invalid JSON %q: %v", enc, err)
		}
		got := AppendUnescaped(nil, enc[1:len(enc)-1])
		if string(got) != want || !utf8.Valid(got) && utf8.ValidString(want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	})
}
