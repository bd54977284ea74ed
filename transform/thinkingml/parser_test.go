package thinkingml

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// TestPolicies covers the package policies that no TM case names.
func TestPolicies(t *testing.T) {
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 16, MaxTagBytes: 20}}
	tests := []struct {
		name  string
		opts  transform.ParserOptions
		input string
		want  string
	}{
		// A held block over max_block ends the stream, but what was held up
		// to the limit is delivered first, as what the block would have
		// been: phase text, the summary, answer text.
		{"title_too_long", tight, `<thinking><phase id="1"><title>` + strings.Repeat("t", 17) + "</title>",
			`TH{ V(missing_title@31) P{1 "Thought"} P1"tttttttttttttttt" P1} TH} E(block_too_long)`},
		{"title_too_long_mid_rune", tight, `<thinking><phase id="1"><title>` + strings.Repeat("计划", 3) + "</title>",
			`TH{ V(missing_title@31) P{1 "Thought"} P1"计划计划计" P1} TH} E(block_too_long)`},
		{"serp_too_long", tight, "<think>a</think><serp>" + strings.Repeat("s", 17) + "</serp>",
			`R{ R"a" R} S"ssssssssssssssss" E(block_too_long)`},
		{"comment_too_long", tight, head + "A <!-- <serp_queries>\n[\"q\"]\n</serp_queries> -->",
			`TH{ P{1 "T"} P1"x" P1} TH} F{ F"A <!-- <serp_queri" F} E(block_too_long)`},
		{"title_fits", tight, `<thinking><phase id="1"><title>` + strings.Repeat("t", 16) + "</title></phase></thinking>",
			`TH{ P{1 "tttttttttttttttt"} P1} TH} V(missing_final@74)`},
		{"tag_fits", tight, `<thinking><phase id="1"    ></phase></thinking>`,
			`TH{ V(attr_syntax@10:<phase id="1"    >) V(missing_title@28) P{1 "Thought"} P1} TH} V(missing_final@47)`},
		// CONTRACT.md §7: a tag over max_tag is text, not fatal; the
		// </phase> it would have opened then closes the implicit phase.
		{"tag_too_long", tight, `<thinking><phase id="1"        ></phase></thinking>`,
			`TH{ V(tag_too_long@10:phase) V(text_outside_phase@10) P{1 "Thought"} P1"<phase id=\"1\"        >" P1} TH} V(missing_phase@51) V(missing_final@51)`},
		{"tag_too_long_then_phase", tight, `<thinking><phase id="1" title="a long one"><phase id="2"><title>B</title>b</phase></thinking>`,
			`TH{ V(tag_too_long@10:phase) V(text_outside_phase@10) P{1 "Thought"} P1"<phase id=\"1\" title=\"a long one\">" P1} P{2 "B"} P2"b" P2} TH} V(missing_final@93)`},
		// The limit falls inside "计": the tag is released up to the end
		// of that character, never cut inside it.
		{"tag_too_long_mid_rune", tight, `<thinking><phase id="x计划计划"></phase></thinking>`,
			`TH{ V(tag_too_long@10:phase) V(text_outside_phase@10) P{1 "Thought"} P1"<phase id=\"x计划计划\">" P1} TH} V(missing_phase@55) V(missing_final@55)`},
		{"marker_prefix", transform.ParserOptions{}, "<<Pars",
			`V(unexpected_text@0) F{ F"<<Pars" F} V(missing_thinking@6) V(missing_phase@6) V(missing_final@6)`},
		{"empty", transform.ParserOptions{}, "", `V(missing_thinking@0) V(missing_phase@0) V(missing_final@0)`},
		{"space_only", transform.ParserOptions{}, " \n", `V(missing_thinking@2) V(missing_phase@2) V(missing_final@2)`},
		// </final> after text that no <final> opened closes nothing: it
		// stays text (CONTRACT.md §7).
		{"stray_final_close", transform.ParserOptions{}, "<thinking></thinking>answer</final>",
			`TH{ TH} V(unexpected_text@21) F{ F"answer" V(stray_close_tag@27:/final) F"</final>" F} V(missing_phase@35) V(missing_final@35)`},
		{"phase_no_title_then_phase", transform.ParserOptions{}, `<thinking><phase id="1"><phase id="2"><title>B</title></phase></thinking>`,
			`TH{ V(missing_title@24) P{1 "Thought"} P1} V(implicit_phase_close@24) P{2 "B"} P2} TH} V(missing_final@73)`},
		{"title_cut_by_thinking", transform.ParserOptions{}, `<thinking><phase id="1"><title>A</thinking>`,
			`TH{ V(unterminated_title@32) P{1 "A"} P1} V(implicit_phase_close@32) TH} V(missing_final@43)`},
		{"empty_serp_queries", transform.ParserOptions{}, head + "A<!-- <serp_queries>[]</serp_queries> --></final>",
			`TH{ P{1 "T"} P1"x" P1} TH} F{ F"A" Q[] F}`},
		{"other_comment_then_serp", transform.ParserOptions{}, head + "A\n<!-- x -->\n<!--\n<serp_queries>\n[\"q\"]\n</serp_queries>\n-->\n</final>",
			`TH{ P{1 "T"} P1"x" P1} TH} F{ F"A\n<!-- x -->" Q["q"] F}`},
		{"whitespace_overflow", transform.ParserOptions{}, head + "A" + strings.Repeat(" ", 300) + "<!-- <serp_queries>[]</serp_queries> --></final>",
			`TH{ P{1 "T"} P1"x" P1} TH} F{ F"A` + strings.Repeat(" ", 256) + `" Q[] F}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := transformtest.RunStrings(New(tt.opts), tt.input)
			if err := transformtest.WellFormed(evs); err != nil {
				t.Fatal(err)
			}
			for _, ev := range evs {
				if ev.Kind.IsDelta() && !utf8.Valid(ev.Text) {
					t.Errorf("a %s event ends inside a character: %q", ev.Kind, ev.Text)
				}
			}
			norm, _ := transformtest.Normalize(evs)
			if got := transformtest.Format(norm); got != tt.want {
				t.Errorf("events differ:\n want %s\n  got %s", tt.want, got)
			}
			if err := checkRaw([]byte(tt.input), evs); err != nil {
				t.Error(err)
			}
			if err := conservation(tt.opts, [][]byte{[]byte(tt.input)}); err != nil {
				t.Error(err)
			}
			if err := transformtest.SplitInvariant(factory(tt.opts), []byte(tt.input), 5, 30); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestReset checks that a parser reused through Reset parses each fixture
// exactly as a new one does, whatever it parsed before.
func TestReset(t *testing.T) {
	p := New(transform.ParserOptions{})
	for name, input := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			p.Feed([]byte("<thinking><phase id=\"9\"><title>x"), func(transform.Event) {})
			p.Reset()
			want := transformtest.Format(transformtest.Run(New(transform.ParserOptions{}), input))
			if got := transformtest.Format(transformtest.Run(p, input)); got != want {
				t.Errorf("after Reset:\n want %s\n  got %s", want, got)
			}
			p.Reset()
		})
	}
}

// TestAfterClose checks that input after Close, and a second Close, are
// ignored.
func TestAfterClose(t *testing.T) {
	p := New(transform.ParserOptions{})
	var n int
	emit := func(transform.Event) { n++ }
	p.Feed([]byte("<think>a</think>"), emit)
	p.Close(emit)
	before := n
	p.Feed([]byte("<think>b"), emit)
	p.Close(emit)
	if n != before {
		t.Errorf("%d events after Close", n-before)
	}
}
