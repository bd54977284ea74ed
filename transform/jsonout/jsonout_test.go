package jsonout_test

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

func TestAppendJSONString(t *testing.T) {
	tests := []struct{ in, want string }{
		{"", `""`},
		{"plain text", `"plain text"`},
		{"say \"hi\" \\ back", `"say \"hi\" \\ back"`},
		{"line\nfeed\rreturn\ttab", `"line\nfeed\rreturn\ttab"`},
		{"\x00\x01\x1f\x7f", `"\u0000\u0001\u001f` + "\x7f" + `"`},
		{"<a href='x'>&amp;</a>", `"<a href='x'>&amp;</a>"`},
		{"你好🌍", `"你好🌍"`},
		{"\u2028\u2029", `"\u2028\u2029"`},
		{"bad \xff\xfe end", `"bad \ufffd\ufffd end"`},
		{"cut \xe4\xbd", `"cut \ufffd\ufffd"`},
	}
	for _, tt := range tests {
		if got := string(jsonout.AppendString([]byte("x"), []byte(tt.in))); got != "x"+tt.want {
			t.Errorf("AppendString(%q) = %s, want %s", tt.in, got[1:], tt.want)
		}
		if got := string(jsonout.AppendStringS(nil, tt.in)); got != tt.want {
			t.Errorf("AppendStringS(%q) = %s, want %s", tt.in, got, tt.want)
		}
		body := tt.want[1 : len(tt.want)-1]
		if got := string(jsonout.AppendStringBody([]byte("x"), []byte(tt.in))); got != "x"+body {
			t.Errorf("AppendStringBody(%q) = %s, want %s", tt.in, got[1:], body)
		}
		if got := string(jsonout.AppendStringBodyS(nil, tt.in)); got != body {
			t.Errorf("AppendStringBodyS(%q) = %s, want %s", tt.in, got, body)
		}
	}
}

func TestAppendJSONStrings(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{nil, `[]`},
		{[]string{}, `[]`},
		{[]string{""}, `[""]`},
		{[]string{"a", "b\"c", "三"}, `["a","b\"c","三"]`},
	}
	for _, tt := range tests {
		if got := string(jsonout.AppendStrings(nil, tt.in)); got != tt.want {
			t.Errorf("AppendStrings(%q) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

func TestAppendClarifyFields(t *testing.T) {
	tests := []struct {
		in   transform.Clarify
		want string
	}{
		{transform.Clarify{Question: "Which class?", Options: []string{"7A", "7B"}, Hint: "needClassId"},
			`"question":"Which class?","options":["7A","7B"],"hint":"needClassId"`},
		{transform.Clarify{Question: "Q\"?"}, `"question":"Q\"?","options":[],"hint":null`},
	}
	for _, tt := range tests {
		if got := string(jsonout.AppendClarifyFields([]byte("{"), &tt.in)); got != "{"+tt.want {
			t.Errorf("AppendClarifyFields(%+v) = %s, want {%s", tt.in, got, tt.want)
		}
	}
}

func TestAppendCompactJSON(t *testing.T) {
	tests := []struct {
		in, want string // want "" means rejected
		object   bool
	}{
		{`{"a":1}`, `{"a":1}`, true},
		{"{\n  \"a\": [1, 2],\n\t\"b\" : {\"c\": \"x y\\n\"}\r\n}", `{"a":[1,2],"b":{"c":"x y\n"}}`, true},
		{" [ 1 , \"two\" ] ", `[1,"two"]`, false},
		{` "text" `, `"text"`, false},
		{`12.5e3`, `12.5e3`, false},
		{`null`, `null`, false},
		{`{"html":"<&>","sep":"` + "\u2028" + `"}`, `{"html":"<&>","sep":"` + "\u2028" + `"}`, true},
		{`{"esc":"\u00e9\/"}`, `{"esc":"\u00e9\/"}`, true},
		{``, ``, false},
		{`   `, ``, false},
		{`{"a":`, ``, false},
		{`{"a":1}}`, ``, false},
		{`{"a":1} {"b":2}`, ``, false},
		{`["a"]]`, ``, false},
		{"{\"a\":\"\xff\"}", ``, false},
		{"\"\xe4\xbd\"", ``, false},
	}
	for _, tt := range tests {
		dst := []byte("x")
		got, ok := jsonout.AppendCompact(dst, []byte(tt.in))
		if ok != (tt.want != "") || string(got) != "x"+tt.want {
			t.Errorf("AppendCompact(%q) = %q, %v; want %q, %v", tt.in, got, ok, "x"+tt.want, tt.want != "")
		}
		got, ok = jsonout.AppendCompactObject(dst, []byte(tt.in))
		want := ""
		if tt.object {
			want = tt.want
		}
		if ok != tt.object || string(got) != "x"+want {
			t.Errorf("AppendCompactObject(%q) = %q, %v; want %q, %v", tt.in, got, ok, "x"+want, tt.object)
		}
		want = tt.want
		if want == "" {
			want = string(jsonout.AppendString(nil, []byte(tt.in)))
		}
		if got := string(jsonout.AppendOrString(dst, []byte(tt.in))); got != "x"+want {
			t.Errorf("AppendOrString(%q) = %s, want %s", tt.in, got, "x"+want)
		}
	}
}

// TestAppendCompactJSONKeepsSpareCapacity checks that a rejected value
// leaves dst's length alone even where compaction wrote into its spare
// capacity, so that callers can append something else instead.
func TestAppendCompactJSONKeepsSpareCapacity(t *testing.T) {
	dst := make([]byte, 1, 64)
	dst[0] = 'x'
	out, ok := jsonout.AppendCompactObject(dst, []byte(`[1, 2]`))
	if ok || len(out) != 1 {
		t.Fatalf("got %q, %v", out, ok)
	}
	out = jsonout.AppendOrString(out, []byte(`{"a": [`))
	if string(out) != `x"{\"a\": ["` {
		t.Errorf("got %s", out)
	}
}

func TestViolationList(t *testing.T) {
	var l jsonout.ViolationList
	if got := string(l.AppendJSON(nil)); got != `[]` || l.Len() != 0 {
		t.Errorf("empty list: %s, Len %d", got, l.Len())
	}
	text := []byte("x\"y\nz")
	l.Note(transform.Event{Kind: transform.KindViolation, Code: "unknown_tag", Offset: 10, Text: text})
	copy(text, "#####") // Text is borrowed: the list must have copied it
	l.Note(transform.Event{Kind: transform.KindViolation, Code: "phase_order", Offset: 40})
	want := `[{"code":"unknown_tag","offset":10,"detail":"x\"y\nz"},{"code":"phase_order","offset":40,"detail":""}]`
	if got := string(l.AppendJSON([]byte("v:"))); got != "v:"+want || l.Len() != 2 {
		t.Errorf("got %s (Len %d), want v:%s (Len 2)", got, l.Len(), want)
	}
	for range 2 * jsonout.MaxListedViolations {
		l.Note(transform.Event{Kind: transform.KindViolation, Code: "c"})
	}
	var got []any
	if err := json.Unmarshal(l.AppendJSON(nil), &got); err != nil || len(got) != jsonout.MaxListedViolations || l.Len() != len(got) {
		t.Errorf("full list: %d objects (Len %d, err %v), want %d", len(got), l.Len(), err, jsonout.MaxListedViolations)
	}
}

// raceEnabled is set by race_test.go when the race detector is on.
var raceEnabled bool

// TestZeroAllocs checks that the helpers allocate nothing when dst has
// room: the encoders call them per delta.
func TestZeroAllocs(t *testing.T) {
	text := []byte("some text, \"quoted\" \\ 你好 \xff \u2028\n")
	raw := []byte("{\n  \"a\": [1, 2, {\"b\": \"x y\"}]\n}")
	list := []string{"q1", "q\"2"}
	buf := make([]byte, 0, 4096)
	tests := []struct {
		name string
		f    func()
	}{
		{"AppendString", func() { buf = jsonout.AppendString(buf[:0], text) }},
		{"AppendStringS", func() { buf = jsonout.AppendStringS(buf[:0], "text \"q\"") }},
		{"AppendStringBody", func() { buf = jsonout.AppendStringBody(buf[:0], text) }},
		{"AppendStringBodyS", func() { buf = jsonout.AppendStringBodyS(buf[:0], "text \"q\"") }},
		{"AppendStrings", func() { buf = jsonout.AppendStrings(buf[:0], list) }},
		{"AppendCompact", func() { buf, _ = jsonout.AppendCompact(buf[:0], raw) }},
		{"AppendCompactObject", func() { buf, _ = jsonout.AppendCompactObject(buf[:0], raw) }},
		{"AppendOrString", func() { buf = jsonout.AppendOrString(buf[:0], text) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if raceEnabled && strings.Contains(tt.name, "Compact") {
				t.Skip("encoding/json's pooled scanner allocates under the race detector")
			}
			if n := testing.AllocsPerRun(1000, tt.f); n != 0 {
				t.Errorf("%v allocations per call, want 0", n)
			}
		})
	}
}

// FuzzAppendJSONString checks that encoding/json decodes the output of
// AppendString to s, with each invalid UTF-8 byte replaced by U+FFFD as
// a range loop over the string reads it, and that the output holds no raw
// line terminator, neither JSON's nor JavaScript's.
func FuzzAppendJSONString(f *testing.F) {
	f.Add("plain")
	f.Add("say \"hi\"\\\n\ttab \x00\x1f\x7f")
	f.Add("你好🌍 \u2028\u2029 </script>")
	f.Add("bad \xff\xfe \xe4\xbd \xed\xa0\x80 \xf4\x90\x80\x80")
	f.Fuzz(func(t *testing.T, s string) {
		out := jsonout.AppendStringS(nil, s)
		var got string
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("%q encodes as %s, which does not decode: %v", s, out, err)
		}
		if want := string([]rune(s)); got != want {
			t.Errorf("%q encodes as %s, which decodes to %q, want %q", s, out, got, want)
		}
		if !utf8.Valid(out) || bytes.ContainsAny(out, "\n\r\u2028\u2029") {
			t.Errorf("%q encodes as %q: invalid UTF-8 or a raw line terminator", s, out)
		}
		body := jsonout.AppendStringBodyS(nil, s)
		if !bytes.Equal(out, append(append([]byte{'"'}, body...), '"')) {
			t.Errorf("%q: body %s is not the string %s without quotes", s, body, out)
		}
	})
}

// FuzzAppendCompactJSON checks AppendCompact against encoding/json: it
// accepts exactly the valid UTF-8 that json.Valid accepts, and its output
// is json.Compact's, one line that decodes to the same value. Whatever it
// rejects, AppendOrString sends as a string that decodes to the text.
func FuzzAppendCompactJSON(f *testing.F) {
	f.Add(`{"a": [1, 2.5e3, true, null], "b": {"c": "x\ny"}}`)
	f.Add("[\n  \"file-ready:pptx\",\n  \"quiz:42\"\n]")
	f.Add(`  "s" `)
	f.Add(`{"a":`)
	f.Add("{\"a\":\"\xff\"}")
	f.Add(`{"a":1} {"b":2}`)
	f.Fuzz(func(t *testing.T, raw string) {
		out, ok := jsonout.AppendCompact([]byte("x"), []byte(raw))
		if want := utf8.ValidString(raw) && json.Valid([]byte(raw)); ok != want {
			t.Fatalf("AppendCompact(%q) reports %v, want %v", raw, ok, want)
		}
		if !ok {
			if string(out) != "x" {
				t.Fatalf("AppendCompact(%q) rejected it but appended %q", raw, out[1:])
			}
			var got string
			s := jsonout.AppendOrString(nil, []byte(raw))
			if err := json.Unmarshal(s, &got); err != nil || got != string([]rune(raw)) {
				t.Fatalf("AppendOrString(%q) = %s, decoding to %q (%v)", raw, s, got, err)
			}
			return
		}
		out = out[1:]
		var want bytes.Buffer
		if err := json.Compact(&want, []byte(raw)); err != nil || !bytes.Equal(out, want.Bytes()) {
			t.Fatalf("AppendCompact(%q) = %s, json.Compact gives %s (%v)", raw, out, want.Bytes(), err)
		}
		if strings.ContainsAny(string(out), "\n\r") {
			t.Fatalf("AppendCompact(%q) = %q spans lines", raw, out)
		}
		var a, b any
		if err := json.Unmarshal([]byte(raw), &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil || !reflect.DeepEqual(a, b) {
			t.Fatalf("AppendCompact(%q) = %s, which decodes to %v (%v), want %v", raw, out, b, err, a)
		}
		if obj, ok := jsonout.AppendCompactObject(nil, []byte(raw)); ok != (out[0] == '{') || (ok && !bytes.Equal(obj, out)) {
			t.Fatalf("AppendCompactObject(%q) = %s, %v", raw, obj, ok)
		}
	})
}
