package format

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

func newText() transform.Parser { return NewText() }

// textCases are plain-text replies: chunks fed one Feed each, then Close,
// and the normalized events in transformtest notation.
var textCases = []struct {
	name   string
	chunks []string
	want   string
}{
	// A reply with no text (a tool-call-only turn) has no answer section.
	{name: "no_text", chunks: nil, want: ``},
	{name: "empty_chunks", chunks: []string{"", ""}, want: ``},
	{name: "one_chunk", chunks: []string{"hello"}, want: `F{ F"hello" F}`},
	{name: "chunks", chunks: []string{"he", "", "llo\n", "world"}, want: `F{ F"hello\nworld" F}`},
	// Markup means nothing in text: tags, JSON and fences are the answer.
	{name: "markup", chunks: []string{"<think>x</think>{\"event\":1}\n```json\n"},
		want: `F{ F"<think>x</think>{\"event\":1}\n` + "```json\\n" + `" F}`},
	{name: "whitespace_only", chunks: []string{" \n\t"}, want: `F{ F" \n\t" F}`},
	{name: "rune_split", chunks: []string{"你\xe5", "\xa5", "\xbd!"}, want: `F{ F"你好!" F}`},
	{name: "rune_split_every_byte", chunks: []string{"\xf0", "\x9f", "\x98", "\x80"}, want: `F{ F"😀" F}`},
	// TM34: the reply ends inside a UTF-8 sequence; the cut bytes are
	// delivered as they are and reported at their offset.
	{name: "TM34", chunks: []string{"ab\xf0\x9f"}, want: `F{ F"ab" V(invalid_utf8@2) F"\xf0\x9f" F}`},
	{name: "TM34/cut_alone", chunks: []string{"ab", "\xe4"}, want: `F{ F"ab" V(invalid_utf8@2) F"\xe4" F}`},
	// Invalid UTF-8 inside the reply is passed on for the encoders to
	// replace, not dropped.
	{name: "invalid_inside", chunks: []string{"a\xffb\xe4x"}, want: `F{ F"a\xffb\xe4x" F}`},
	{name: "bom_is_text", chunks: []string{"\xef\xbb\xbfhi"}, want: `F{ F"\ufeffhi" F}`},
}

func TestTextParser(t *testing.T) {
	for _, tc := range textCases {
		t.Run(tc.name, func(t *testing.T) {
			transformtest.CheckCase(t, newText, tc.chunks, tc.want)
		})
	}
}

// TestTextParserEventOrder checks the events as emitted, not normalized:
// each piece of text comes as a raw event followed by the same text as an
// answer delta, cut on rune boundaries, so that a consumer of either sees
// the reply as it streams.
func TestTextParserEventOrder(t *testing.T) {
	evs := transformtest.RunStrings(NewText(), "a\xe4", "\xbd\xa0b", "c\xe5")
	var tokens []string
	for _, ev := range evs {
		tokens = append(tokens, transformtest.Token(ev))
	}
	want := `F{ RAW"a" F"a" RAW"你" F"你" RAW"b" F"b" RAW"c" F"c" V(invalid_utf8@6) RAW"\xe5" F"\xe5" F}`
	if got := strings.Join(tokens, " "); got != want {
		t.Errorf("events:\n want %s\n  got %s", want, got)
	}
}

func TestTextParserReset(t *testing.T) {
	p := NewText()
	transformtest.RunStrings(p, "old\xe4")
	p.Feed([]byte("x\xe5"), func(transform.Event) {})
	p.Reset()
	got := transformtest.Format(transformtest.RunStrings(p, "new"))
	if want := `F{ F"new" F}`; got != want {
		t.Errorf("after Reset: %s, want %s", got, want)
	}
}

// TestTextParserAllocs checks that streaming text allocates nothing
// (PARSING.md §5.8), runes cut across deltas included.
func TestTextParserAllocs(t *testing.T) {
	in := []byte(strings.Repeat("训练计划 plan ", 1000))
	for _, chunk := range []int{1, 7, 256} {
		if allocs := transformtest.AllocsPerReply(NewText(), in, chunk); allocs != 0 {
			t.Errorf("delta %d: %v allocations per reply, want 0", chunk, allocs)
		}
	}
}
