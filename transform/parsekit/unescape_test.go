package parsekit

import "testing"

func TestAppendUnescaped(t *testing.T) {
	tests := []struct {
		name, raw, want string
	}{
		{"plain", `hello`, "hello"},
		{"empty", ``, ""},
		{"simple escapes", `a\"b\\c\/d\be\ff\ng\rh\ti`, "a\"b\\c/d\be\ff\ng\rh\ti"},
		{"unicode escape", `caf\u00e9 \u4F60`, "café 你"},
		{"NUL escape", `a\u0000b`, "a\x00b"},
		{"surrogate pair", `\ud83d\ude00!`, "😀!"},
		{"JO08 lone high surrogate", `\ud83dx`, "\uFFFDx"},
		{"lone low surrogate", `\ude00x`, "\uFFFDx"},
		{"high then high surrogate", `\ud83d\ud83d\ude00`, "\uFFFD😀"},
		{"high surrogate then a plain escape", `\ud83d\n`, "\uFFFD\n"},
		{"high surrogate at the end", `\ud83d`, "\uFFFD"},
		{"JO09 invalid escape kept", `use App\Http`, `use App\Http`},
		{"short unicode escape kept", `\u12G4`, `\u12G4`},
		{"unicode escape cut at the end kept", `ab\u12`, `ab\u12`},
		{"lone trailing backslash kept", `ab\`, `ab\`},
		{"invalid escape before a valid one", `\q\n`, "\\q\n"},
		{"raw invalid UTF-8 passes through", "\xff\xc3(", "\xff\xc3("},
		{"raw control bytes pass through", "a\nb\tc", "a\nb\tc"},
		{"raw multibyte", "你好🌍", "你好🌍"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AppendUnescaped([]byte("x"), []byte(tt.raw))); got != "x"+tt.want {
				t.Errorf("AppendUnescaped(%q) = %q, want %q", tt.raw, got[1:], tt.want)
			}
		})
	}
}
