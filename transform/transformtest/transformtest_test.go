package transformtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
)

func TestToken(t *testing.T) {
	tests := []struct {
		ev   transform.Event
		want string
	}{
		{transform.Event{Kind: transform.KindViolation, Code: "phase_order", Offset: 12}, `V(phase_order@12)`},
		{transform.Event{Kind: transform.KindViolation, Code: "event_order", Offset: 3, Text: []byte("final_end")}, `V(event_order@3:final_end)`},
		{transform.Event{Kind: transform.KindViolation, Code: "c", Offset: 0, Text: []byte("two words")}, `V(c@0:two words)`},
		// A detail that would break a golden file's line, or is not
		// UTF-8, is quoted.
		{transform.Event{Kind: transform.KindViolation, Code: "c", Offset: 1, Text: []byte("a\nb")}, `V(c@1:"a\nb")`},
		{transform.Event{Kind: transform.KindViolation, Code: "c", Offset: 1, Text: []byte("\xff")}, `V(c@1:"\xff")`},
		{transform.Event{Kind: transform.KindError, Code: "block_too_long", Text: []byte("message")}, `E(block_too_long)`},
		{transform.Event{Kind: transform.KindAnswerDelta, Text: []byte(`a"b`)}, `F"a\"b"`},
	}
	for _, tt := range tests {
		if got := Token(tt.ev); got != tt.want {
			t.Errorf("Token(%v) = %s, want %s", tt.ev, got, tt.want)
		}
	}
}

// limitParser echoes its input as raw text until more than limit bytes
// were fed, checked per Feed, then fails: where it fails depends on the
// cuts, as a real parser's limits do.
type limitParser struct {
	limit, n int
	failed   bool
	// badRaw makes the raw text not the input; dropFirst drops each
	// chunk's first byte from it, so that it depends on the cuts.
	badRaw, dropFirst bool
}

func (p *limitParser) Feed(b []byte, emit transform.Emit) {
	if p.failed {
		return
	}
	if p.n += len(b); p.n > p.limit {
		emit(transform.Event{Kind: transform.KindError, Code: "too_long"})
		p.failed = true
		return
	}
	if p.badRaw {
		b = []byte(strings.ToUpper(string(b)))
	}
	if p.dropFirst && len(b) > 0 {
		b = b[1:]
	}
	emit(transform.Event{Kind: transform.KindRaw, Text: b})
}

func (p *limitParser) Close(emit transform.Emit) {}
func (p *limitParser) Reset() {
	*p = limitParser{limit: p.limit, badRaw: p.badRaw, dropFirst: p.dropFirst}
}

func TestSplitInvariantAfterFatalError(t *testing.T) {
	input := []byte("abcdefghij")
	ok := func() transform.Parser { return &limitParser{limit: 4} }
	if err := SplitInvariant(ok, input, 1, 20); err != nil {
		t.Errorf("raw text cut at a fatal error: %v", err)
	}
	bad := func() transform.Parser { return &limitParser{limit: 4, badRaw: true} }
	if err := SplitInvariant(bad, input, 1, 20); err == nil {
		t.Error("raw text that is not a prefix of the input passed")
	}
	// Without a fatal error the raw text must be the one-shot's for every
	// split: a parser whose raw text depends on the cuts fails.
	cutRaw := func() transform.Parser { return &limitParser{limit: 100, dropFirst: true} }
	if err := SplitInvariant(cutRaw, input, 1, 20); err == nil {
		t.Error("raw text that depends on the cuts passed")
	}
}

func TestCheckStream(t *testing.T) {
	input := []byte("abcdefghij")
	tests := []struct {
		name   string
		p      transform.Parser
		chunks [][]byte
		ok     bool
	}{
		{"echo", &limitParser{limit: 100}, [][]byte{input[:3], input[3:]}, true},
		{"prefix_after_error", &limitParser{limit: 4}, [][]byte{input[:3], input[3:]}, true},
		{"not_the_input", &limitParser{limit: 100, badRaw: true}, [][]byte{input}, false},
		{"prefix_without_error", &limitParser{limit: 100}, [][]byte{input[:3]}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckStream(Run(tt.p, tt.chunks...), input)
			if (err == nil) != tt.ok {
				t.Errorf("CheckStream: %v, want ok %v", err, tt.ok)
			}
		})
	}
	unpaired := []transform.Event{{Kind: transform.KindAnswerStart}, {Kind: transform.KindRaw, Text: input}}
	if err := CheckStream(unpaired, input); err == nil {
		t.Error("an answer left open passed")
	}
}

func TestCheckGolden(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	evs := []transform.Event{
		{Kind: transform.KindAnswerStart},
		{Kind: transform.KindAnswerDelta, Text: []byte("a")},
		{Kind: transform.KindRaw, Text: []byte("a")},
		{Kind: transform.KindAnswerDelta, Text: []byte("b")},
		{Kind: transform.KindViolation, Code: "c", Offset: 2, Text: []byte("d")},
		{Kind: transform.KindAnswerEnd},
	}
	if err := CheckGolden(path, evs, false); err == nil || !strings.Contains(err.Error(), "-update") {
		t.Errorf("missing golden file: %v", err)
	}
	if err := CheckGolden(path, evs, true); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if want := "F{\nF\"ab\"\nV(c@2:d)\nF}\n"; string(b) != want {
		t.Errorf("golden file %q, want %q", b, want)
	}
	if err := CheckGolden(path, evs, false); err != nil {
		t.Error(err)
	}
	evs[4].Offset = 3
	err = CheckGolden(path, evs, false)
	if err == nil || !strings.Contains(err.Error(), "line 3") || !strings.Contains(err.Error(), "V(c@3:d)") {
		t.Errorf("changed event: %v, want line 3 named", err)
	}
}

// TestWholeRunes checks the check behind issue 9's first bug: a text
// event that cuts a character the parser was fed whole fails, one fed
// cut, or invalid, is not checked.
func TestWholeRunes(t *testing.T) {
	cut := []transform.Event{
		{Kind: transform.KindAnswerStart},
		{Kind: transform.KindAnswerDelta, Text: []byte("\xef")},
		{Kind: transform.KindAnswerDelta, Text: []byte("\xbf\xbd")},
		{Kind: transform.KindAnswerEnd},
	}
	whole := []transform.Event{
		{Kind: transform.KindAnswerStart},
		{Kind: transform.KindAnswerDelta, Text: []byte("\ufffd")},
		{Kind: transform.KindAnswerEnd},
	}
	tests := []struct {
		name   string
		evs    []transform.Event
		chunks []string
		ok     bool
	}{
		{"cut_text", cut, []string{"\ufffd"}, false},
		{"whole_text", whole, []string{"\ufffd"}, true},
		{"fed_cut", cut, []string{"\xef", "\xbf\xbd"}, true},
		{"invalid_input", cut, []string{"\xef"}, true},
		{"cut_tool_args", []transform.Event{{Kind: transform.KindToolArgsDelta, Text: []byte("\xe4\xbd")}}, []string{"你"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			chunks := make([][]byte, len(tt.chunks))
			for i, c := range tt.chunks {
				chunks[i] = []byte(c)
			}
			if err := WholeRunes(tt.evs, chunks...); (err == nil) != tt.ok {
				t.Errorf("WholeRunes: %v, want ok %v", err, tt.ok)
			}
		})
	}
}

func TestProseAnswer(t *testing.T) {
	tests := []struct {
		reply, want string
		ok          bool
	}{
		{"\xef\xbb\xbf \n``` x", "``` x", true},
		{"\xef\xbbx", "\xef\xbbx", true},
		{"  ", "", true},
		{"a {", "", false},
	}
	for _, tt := range tests {
		got, ok := ProseAnswer([]byte(tt.reply))
		if string(got) != tt.want || ok != tt.ok {
			t.Errorf("ProseAnswer(%q) = %q, %v; want %q, %v", tt.reply, got, ok, tt.want, tt.ok)
		}
	}
}
