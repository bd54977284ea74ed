package conversation

import (
	"encoding/json"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform/jsonout"
)

func TestAppendUnquoted(t *testing.T) {
	for _, s := range []string{"", "plain", "引号\"和\\反斜杠/", "\b\f\n\r\t", "\x00\x1f\u2028\u2029", "😀 emoji", "<&>"} {
		enc := jsonout.AppendStringS(nil, s)
		if got := string(appendUnquoted(nil, enc[1:len(enc)-1])); got != s {
			t.Errorf("%q: got %q", s, got)
		}
	}
	for raw, want := range map[string]string{`\ud83d\ude00`: "😀", `\ud83d`: "\uFFFD", `\ude00x`: "\uFFFDx", `\ud83dx`: "\uFFFDx", `\q`: `\q`, `\u12g4`: `\u12g4`, `a\`: `a\`} {
		if got := string(appendUnquoted(nil, []byte(raw))); got != want {
			t.Errorf("%q: got %q, want %q", raw, got, want)
		}
	}
}

// FuzzAppendUnquoted: for any string, what the skillpet encoder's JSON
// writer makes of it decodes back to what encoding/json reads.
func FuzzAppendUnquoted(f *testing.F) {
	f.Add("a\"b\\c\n\u2028😀\x00")
	f.Add("\xff\xfe")
	f.Fuzz(func(t *testing.T, s string) {
		enc := jsonout.AppendStringS(nil, s)
		var want string
		if err := json.Unmarshal(enc, &want); err != nil {
			t.Fatalf("jsonout wrote invalid JSON %q: %v", enc, err)
		}
		got := appendUnquoted(nil, enc[1:len(enc)-1])
		if string(got) != want || !utf8.Valid(got) && utf8.ValidString(want) {
			t.Fatalf("%q: got %q, want %q", s, got, want)
		}
	})
}
