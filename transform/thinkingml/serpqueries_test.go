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

func TestCleanQueries(t *testing.T) {
	long := ""
	for range 9 {
		long += "一二三四五六七八九十"
	}
	tests := []struct {
		name   string
		in     []string
		want   []string
		broken []int
	}{
		{"clean", []string{"a", "b"}, []string{"a", "b"}, nil},
		{"none", nil, []string{}, nil},
		{"too_many", []string{"1", "2", "3", "4", "5", "6"}, []string{"1", "2", "3", "4", "5"}, []int{ruleTooMany}},
		{"duplicate", []string{"a", "a", " a "}, []string{"a"}, []int{ruleDuplicate}},
		{"too_long", []string{long}, []string{long[:len(long)/9*8]}, []int{ruleTooLong}},
		{"duplicate_after_cut", []string{long, long + "x"}, []string{long[:len(long)/9*8]}, []int{ruleTooLong, ruleDuplicate}},
		{"sensitive", []string{"mail me@x.org", "ok", "call 13812345678", "host 10.0.0.1"}, []string{"ok"}, []int{ruleSensitive}},
		{"empty", []string{"", "  ", "a"}, []string{"a"}, []int{ruleEmpty}},
		{"sensitive_not_counted", []string{"a@b.co", "1", "2", "3", "4", "5"}, []string{"1", "2", "3", "4", "5"}, []int{ruleSensitive}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, broken := cleanQueries(tt.in)
			if got == nil || !slices.Equal(got, tt.want) {
				t.Errorf("cleanQueries(%q) = %q, want %q", tt.in, got, tt.want)
			}
			var want uint8
			for _, r := range tt.broken {
				want |= 1 << r
			}
			if broken != want {
				t.Errorf("broken = %05b, want %05b", broken, want)
			}
		})
	}
}

func TestSensitive(t *testing.T) {
	tests := []struct {
		q    string
		want bool
	}{
		{"联系 zhang.san@example.com 获取", true},
		{"me@x.org.", true},
		{"@mention only", false},
		{"a@b", false},
		{"user@host.c0m", false},
		{"13812345678", true},
		{"电话 138-1234-5678", true},
		{"+86 138 1234 5678", true},
		{"(555) 123-4567", true},
		{"010-12345678", true},
		{"+44 20 7946", true},
		{"2023 2024 2025 对比", false},
		{"2024-01-15", false},
		{"iPhone 15 Pro 256GB", false},
		{"三分化训练计划 3 天", false},
		{"192.168.1.1", true},
		{"服务器192.168.1.1怎么连", true},
		{"IP 8.8.8.8.", true},
		{"2001:db8::1", true},
		{"::1", true},
		{"版本 1.2.3", false},
		{"3.14159", false},
		{"10:30:00 开会", false},
		{"300.1.1.1", false},
		{"deadbeef", false},
	}
	for _, tt := range tests {
		t.Run(tt.q, func(t *testing.T) {
			if got := sensitive(tt.q); got != tt.want {
				t.Errorf("sensitive(%q) = %v, want %v", tt.q, got, tt.want)
			}
		})
	}
}
