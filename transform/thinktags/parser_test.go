package thinktags

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/thinkingml"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// The violation details, as the notation prints them.
const (
	unclosed      = `V(think_unclosed@%d:the reply never closed its reasoning with </think>: it is repeated as the answer)`
	unclosedEmpty = `V(think_unclosed@%d:the reply ended inside <think>, with no reasoning)`
)

func v(format string, off int) string { return strings.Replace(format, "%d", itoa(off), 1) }

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	var b []byte
	for ; n > 0; n /= 10 {
		b = append([]byte{byte('0' + n%10)}, b...)
	}
	return string(b)
}

type thinkCase struct {
	name   string
	chunks []string
	want   string
}

// newText is the stage in mode in front of a text parser.
func newText(mode transform.ThinkTags, opts transform.ParserOptions) func() transform.Parser {
	return func() transform.Parser { return New(format.NewText(), mode, false, opts.Limits) }
}

// TestAuto covers think_tags auto: PARSING.md §4.1's tag cases for <think>
// and </think> in front of the text format.
func TestAuto(t *testing.T) {
	cases := []thinkCase{
		{"block", []string{"<think>a</think>\n\nThe answer."}, `R{ R"a" R} F{ F"The answer." F}`},
		{"TM01 opener split", []string{"<thi", "nk>a</think>b"}, `R{ R"a" R} F{ F"b" F}`},
		{"TM02 closer split", []string{"<think>reasoning</th", "ink>answer"}, `R{ R"reasoning" R} F{ F"answer" F}`},
		{"TM04 empty chunks", []string{"<think>a</think>", "", "\n\n", "b"}, `R{ R"a" R} F{ F"b" F}`},
		{"TM05 blanks first", []string{"\n <think>x</think>y"}, `R{ R"x" R} F{ F"y" F}`},
		{"TM06 no newline needed", []string{"<think>\nx</think>y"}, `R{ R"x" R} F{ F"y" F}`},
		{"TM07 empty block dropped", []string{"<think></think>Hi"}, `F{ F"Hi" F}`},
		{"blank block dropped", []string{"<think>\n\n</think>\n\nHi"}, `F{ F"Hi" F}`},
		{"orphan closer dropped", []string{"</think>\n\nHi"}, `F{ F"Hi" F}`},
		{"answer never glued", []string{"<think>why</think>\n\nBecause."}, `R{ R"why" R} F{ F"Because." F}`},
		{"blank lines trimmed, text kept", []string{"<think>r</think>\r\n\n  indented"}, `R{ R"r" R} F{ F"indented" F}`},
		{"reasoning keeps its trailing blank", []string{"<think>r\n</think>a"}, `R{ R"r\n" R} F{ F"a" F}`},
		{"not at the start", []string{"Hello <think>x</think>"}, `F{ F"Hello <think>x</think>" F}`},
		{"TM15 a stray < first", []string{"<<think>x</think>"}, `F{ F"<<think>x</think>" F}`},
		{"TM18 case matters", []string{"<Think>x</Think>"}, `F{ F"<Think>x</Think>" F}`},
		{"longer tag is text", []string{"<thinking>x"}, `F{ F"<thinking>x" F}`},
		{"markup inside reasoning", []string{"<think>a < b </b> </thinker> <</think>ok"}, `R{ R"a < b </b> </thinker> <" R} F{ F"ok" F}`},
		{"second block is answer text", []string{"<think>a</think>b<think>c</think>"}, `R{ R"a" R} F{ F"b<think>c</think>" F}`},
		{"utf-8 split", []string{"<think>\xc3", "\xa9\xe4\xb8", "\xad</think>\xc3\xbc"}, `R{ R"é中" R} F{ F"ü" F}`},
		{"too many blanks first", []string{strings.Repeat(" ", 65) + "<think>x</think>"}, `F{ F"` + strings.Repeat(" ", 65) + `<think>x</think>" F}`},
		{"TM09 unclosed", []string{"<think>abc"}, `R{ R"abc" R} ` + v(unclosed, 10) + ` F{ F"abc" F}`},
		{"end inside the closer", []string{"<think>a</thi"}, `R{ R"a</thi" R} ` + v(unclosed, 13) + ` F{ F"a</thi" F}`},
		{"end after the opener", []string{"<think>\n"}, v(unclosedEmpty, 8)},
		{"end inside the empty block's closer", []string{"<think></th"}, `R{ R"</th" R} ` + v(unclosed, 11) + ` F{ F"</th" F}`},
		{"end inside the opener", []string{" <thi"}, `F{ F" <thi" F}`},
		{"end inside an orphan closer", []string{"</thi"}, `F{ F"</thi" F}`},
		{"empty", []string{""}, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			transformtest.CheckCase(t, newText(transform.ThinkTagsAuto, transform.ParserOptions{}), tc.chunks, tc.want)
		})
	}
}

// TestPrefilled covers think_tags prefilled: the template opened <think>.
func TestPrefilled(t *testing.T) {
	cases := []thinkCase{
		{"R1", []string{"reasoning here</think>\n\nThe answer."}, `R{ R"reasoning here" R} F{ F"The answer." F}`},
		{"the issue's split", []string{"reasoning here</th", "ink>\n\n", "The answer."}, `R{ R"reasoning here" R} F{ F"The answer." F}`},
		{"leading blanks skipped", []string{"\n\nr</think>a"}, `R{ R"r" R} F{ F"a" F}`},
		{"the model's own opener", []string{"<think>\nr</think>a"}, `R{ R"r" R} F{ F"a" F}`},
		{"empty", []string{"\n\n</think>\n\nA"}, `F{ F"A" F}`},
		{"a diverging tag is reasoning", []string{"<thix</think>y"}, `R{ R"<thix" R} F{ F"y" F}`},
		{"a closer prefix is reasoning", []string{"</thx</think>y"}, `R{ R"</thx" R} F{ F"y" F}`},
		{"only the first closer", []string{"a</think>b</think>c"}, `R{ R"a" R} F{ F"b</think>c" F}`},
		{"unclosed", []string{"just an answer"}, `R{ R"just an answer" R} ` + v(unclosed, 14) + ` F{ F"just an answer" F}`},
		{"end inside the lead", []string{"<thi"}, `R{ R"<thi" R} ` + v(unclosed, 4) + ` F{ F"<thi" F}`},
		{"blanks only", []string{" \n"}, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			transformtest.CheckCase(t, newText(transform.ThinkTagsPrefilled, transform.ParserOptions{}), tc.chunks, tc.want)
		})
	}
}

// TestUnclosedBound: the copy repeated as the answer stops at max_block,
// on a rune boundary.
func TestUnclosedBound(t *testing.T) {
	opts := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 8}}
	cut := `V(think_unclosed@14:the reply never closed its reasoning with </think>: its first 7 bytes are repeated as the answer (max_block))`
	transformtest.CheckCase(t, newText(transform.ThinkTagsPrefilled, opts), []string{"0123456é89abc"},
		`R{ R"0123456é89abc" R} `+cut+` F{ F"0123456" F}`)
	// A closed block of any length is not bounded.
	transformtest.CheckCase(t, newText(transform.ThinkTagsPrefilled, opts), []string{strings.Repeat("r", 100) + "</think>a"},
		`R{ R"`+strings.Repeat("r", 100)+`" R} F{ F"a" F}`)
}

// TestOwnedThink: a format that owns <think> (thinkingml) reads its own
// block; the stage reads only prefilled reasoning (PARSING.md TM08).
func TestOwnedThink(t *testing.T) {
	newTML := func(mode transform.ThinkTags) func() transform.Parser {
		return func() transform.Parser {
			return New(thinkingml.New(transform.ParserOptions{}), mode, true, transform.Limits{})
		}
	}
	cases := []struct {
		thinkCase
		mode transform.ThinkTags
	}{
		{thinkCase{"TM08", []string{"internal reasoning</think><thinking>"},
			`R{ R"internal reasoning" R} TH{ TH} V(unterminated_thinking@36) V(missing_phase@36) V(missing_final@36)`}, transform.ThinkTagsPrefilled},
		{thinkCase{"TM08 with a blank line", []string{"r</think>\n\n<final>a</final>"},
			`R{ R"r" R} V(missing_thinking@11) V(missing_phase@11) F{ F"a" V(missing_serp_queries@19) F}`}, transform.ThinkTagsPrefilled},
		{thinkCase{"prefilled, the model's own block", []string{"<think>r</think><final>a</final>"},
			`R{ R"r" R} V(missing_thinking@16) V(missing_phase@16) F{ F"a" V(missing_serp_queries@24) F}`}, transform.ThinkTagsPrefilled},
		// thinkingml owns its <think>; a </think> that closes nothing stays
		// text there (CONTRACT §7).
		{thinkCase{"auto leaves it to thinkingml", []string{"</think>x"},
			`V(stray_close_tag@0:/think) V(unexpected_text@0) F{ F"</think>x" F} V(missing_thinking@9) V(missing_phase@9) V(missing_final@9)`}, transform.ThinkTagsAuto},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := transformtest.RunStrings(newTML(tc.mode)(), tc.chunks...)
			norm, raw := transformtest.Normalize(evs)
			if got := transformtest.Format(norm); got != tc.want {
				t.Errorf("events differ:\n want %s\n  got %s", tc.want, got)
			}
			if string(raw) != strings.Join(tc.chunks, "") {
				t.Errorf("raw %q", raw)
			}
			if err := transformtest.SplitInvariant(newTML(tc.mode), []byte(strings.Join(tc.chunks, "")), 1, 50); err != nil {
				t.Error(err)
			}
		})
	}
}
