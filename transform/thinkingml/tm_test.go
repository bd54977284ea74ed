package thinkingml

import (
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// head and tail wrap answer-only cases in a well-formed reply, so that
// their events show only what the case is about.
const (
	head     = `<thinking><phase id="1"><title>T</title>x</phase></thinking><final>`
	headEvs  = `TH{ P{1 "T"} P1"x" P1} TH} F{ `
	serpTail = "\n<!-- <serp_queries>\n[\"q\"]\n</serp_queries> -->\n</final>"
)

// tmCase is one case of PARSING.md §4.1: chunks fed one Feed each, then
// Close, and the normalized events in transformtest notation.
type tmCase struct {
	name   string
	opts   transform.ParserOptions
	chunks []string
	want   string
}

// tmCases are every TM case of PARSING.md §4.1. Where PARSING.md offers
// "strict E" or "lenient W", the expectation is the lenient policy of the
// package documentation, as CONTRACT.md §4 requires; such cases say so.
var tmCases = []tmCase{
	{name: "TM01", chunks: []string{"<thi", "nk>a</think>"},
		want: `R{ R"a" R} V(missing_thinking@16) V(missing_phase@16) V(missing_final@16)`},
	// TM02: "</th" never appears in the reasoning.
	{name: "TM02", chunks: []string{"<think>reasoning</th", "ink><thinking>"},
		want: `R{ R"reasoning" R} TH{ TH} V(unterminated_thinking@34) V(missing_phase@34) V(missing_final@34)`},
	// TM04: empty chunks and whitespace between blocks give no text events.
	{name: "TM04", chunks: []string{"<think>a</think>", "", "\n\n", "<thinking>"},
		want: `R{ R"a" R} TH{ TH} V(unterminated_thinking@28) V(missing_phase@28) V(missing_final@28)`},
	{name: "TM05", chunks: []string{"\n <think>x</think><thinking>"},
		want: `R{ R"x" R} TH{ TH} V(unterminated_thinking@28) V(missing_phase@28) V(missing_final@28)`},
	{name: "TM06", chunks: []string{"<think>\nx</think><thinking>"},
		want: `R{ R"\nx" R} TH{ TH} V(unterminated_thinking@27) V(missing_phase@27) V(missing_final@27)`},
	// TM07: empty blocks are paired start/end events with no deltas; so is
	// a second empty block (here the phase body and the answer).
	{name: "TM07", chunks: []string{`<think></think><thinking><phase id="1"><title>T</title></phase></thinking><final></final>`},
		want: `R{ R} TH{ P{1 "T"} P1} TH} F{ V(missing_serp_queries@81) F}`},
	// TM08 (a <think> the prompt opened) is think_tags prefilled, read in
	// front of every format: transform/thinktags tests it with this parser.
	// TM09: PARSING.md's E(unterminated_think) is a violation: no byte lost.
	{name: "TM09", chunks: []string{"<think>abc"},
		want: `R{ R"abc" R} V(unterminated_think@10) V(missing_thinking@10) V(missing_phase@10) V(missing_final@10)`},
	// TM10: the held "<th" is flushed as answer text.
	{name: "TM10", chunks: []string{head + "answer: <th"},
		want: headEvs + `F"answer: <th" V(missing_serp_queries@78) F} V(unterminated_final@78)`},
	{name: "TM11", chunks: []string{head + "a <", "b && c > d" + serpTail},
		want: headEvs + `F"a <b && c > d" Q["q"] F}`},
	{name: "TM12", chunks: []string{head + "List<String> x <br> <div>y</div>" + serpTail},
		want: headEvs + `F"List<String> x <br> <div>y</div>" Q["q"] F}`},
	// TM15: lenient, as answer text: "<" is stray text, then <think> opens.
	{name: "TM15", chunks: []string{"<<think>x</think>"},
		want: `V(unexpected_text@0) F{ F"<" F} R{ R"x" R} V(missing_thinking@17) V(missing_phase@17) V(missing_final@17)`},
	// TM16: only the error, not even raw text.
	{name: "TM16", chunks: []string{"<<Parsing", "Error>>"}, want: `E(model_parsing_error)`},
	{name: "TM16/whitespace", chunks: []string{"\n <<ParsingError>>", " \n"}, want: `E(model_parsing_error)`},
	{name: "TM16/not_alone", chunks: []string{"<<ParsingError>>", " x"},
		want: `V(parsing_error_marker@0) V(unexpected_text@0) F{ F"<<ParsingError>> x" F} V(missing_thinking@18) V(missing_phase@18) V(missing_final@18)`},
	// TM17: the space before the marker is held (it might precede a
	// serp_queries comment, TM27), so it follows the violation.
	{name: "TM17", chunks: []string{head + "a <<ParsingError>> b" + serpTail},
		want: headEvs + `F"a" V(parsing_error_marker@69) F" <<ParsingError>> b" Q["q"] F}`},
	// TM18: lenient, as answer text (strict would be E(unexpected_text)),
	// the mis-cased tags reported as such (CONTRACT.md §7).
	{name: "TM18/Think", chunks: []string{"<Think>"},
		want: `V(miscased_tag@0:Think) V(unexpected_text@0) F{ F"<Think>" F} V(missing_thinking@7) V(missing_phase@7) V(missing_final@7)`},
	{name: "TM18/THINK", chunks: []string{"<THINK>"},
		want: `V(miscased_tag@0:THINK) V(unexpected_text@0) F{ F"<THINK>" F} V(missing_thinking@7) V(missing_phase@7) V(missing_final@7)`},
	{name: "TM18/close_in_think", chunks: []string{"<think>a</Think>b</think>"},
		want: `R{ R"a" V(miscased_tag@8:/Think) R"</Think>b" R} V(missing_thinking@25) V(missing_phase@25) V(missing_final@25)`},
	// In <final> only </final> is a tag: </FINAL> is answer text, reported.
	{name: "TM18/final_close", chunks: []string{head + "a</FI", "NAL>b" + serpTail},
		want: headEvs + `F"a" V(miscased_tag@68:/FINAL) F"</FINAL>b" Q["q"] F}`},
	{name: "TM18/thinking", chunks: []string{"<Thinking><phase id=\"1\"><title>A</title>x</phase></Thinking>"},
		want: `V(miscased_tag@0:Thinking) V(unexpected_text@0) F{ F"<Thinking><phase id=\"1\"><title>A" V(stray_close_tag@32:/title) F"</title>x" V(stray_close_tag@41:/phase) F"</phase>" V(miscased_tag@49:/Thinking) F"</Thinking>" F} V(missing_thinking@60) V(missing_phase@60) V(missing_final@60)`},
	// TM19: lenient: unknown_tag, and the text opens an implicit phase.
	{name: "TM19", chunks: []string{"<thinking><note>x</note>"},
		want: `TH{ V(unknown_tag@10:note) V(text_outside_phase@10) P{1 "Thought"} P1"<note>x" V(unknown_tag@17:/note) P1"</note>" P1} TH} V(unterminated_thinking@24) V(missing_phase@24) V(missing_final@24)`},
	{name: "TM20", chunks: []string{"<thinking><phase id=\"", "1", "\"><ti", "tle>Sc", "ope</title>Do X</pha", "se></thinking>"},
		want: `TH{ P{1 "Scope"} P1"Do X" P1} TH} V(missing_final@67)`},
	{name: "TM21/single_quotes", chunks: []string{"<thinking><phase id='1'><title>A</title>x</phase></thinking>"},
		want: `TH{ V(attr_syntax@10:<phase id='1'>) P{1 "A"} P1"x" P1} TH} V(missing_final@60)`},
	{name: "TM21/spaces", chunks: []string{"<thinking><phase  id=\"1\" ><title>A</title>x</phase></thinking>"},
		want: `TH{ V(attr_syntax@10:<phase  id="1" >) P{1 "A"} P1"x" P1} TH} V(missing_final@62)`},
	{name: "TM21/unquoted", chunks: []string{"<thinking><phase id=1><title>A</title>x</phase></thinking>"},
		want: `TH{ V(attr_syntax@10:<phase id=1>) P{1 "A"} P1"x" P1} TH} V(missing_final@58)`},
	{name: "TM21/bad_id", chunks: []string{"<thinking><phase id=\"x\"><title>A</title>x</phase></thinking>"},
		want: `TH{ V(bad_phase_id@10:x) P{1 "A"} P1"x" P1} TH} V(missing_final@60)`},
	{name: "TM21/no_id", chunks: []string{"<thinking><phase><title>A</title>x</phase></thinking>"},
		want: `TH{ V(bad_phase_id@10) P{1 "A"} P1"x" P1} TH} V(missing_final@53)`},
	// TM21: attribute text over max_tag (64 B) is text where it stands, not
	// E(tag_too_long): CONTRACT.md §7 lets only max_reply, max_sse_line and
	// max_block end a stream. The title after it is phase text too.
	{name: "TM21/tag_too_long", chunks: []string{"<thinking><phase id=\"1\"" + spaces(60) + "><title>A</title>"},
		want: `TH{ V(tag_too_long@10:phase) V(text_outside_phase@10) P{1 "Thought"} P1"<phase id=\"1\"` + spaces(60) + `>" V(title_after_text@84) P1"<title>A" V(misplaced_tag@92:/title) P1"</title>" P1} TH} V(unterminated_thinking@100) V(missing_phase@100) V(missing_final@100)`},
	// A model adding an attribute: the reasoning and the answer still come
	// through.
	{name: "TM21/extra_attribute", chunks: []string{`<thinking><phase id="1" title="Understanding what the user wants from the plan"><title>A</title>x</phase></thinking><final>y` + serpTail},
		want: `TH{ V(tag_too_long@10:phase) V(text_outside_phase@10) P{1 "Thought"} P1"<phase id=\"1\" title=\"Understanding what the user wants from the plan\">" V(title_after_text@80) P1"<title>A" V(misplaced_tag@88:/title) P1"</title>x" P1} TH} V(missing_phase@116) F{ F"y" Q["q"] F}`},
	{name: "TM22/duplicate", chunks: []string{`<thinking><phase id="1"><title>A</title>x</phase><phase id="1"><title>B</title>y</phase></thinking>`},
		want: `TH{ P{1 "A"} P1"x" P1} V(duplicate_phase_id@49:1) P{1 "B"} P1"y" P1} TH} V(missing_final@99)`},
	{name: "TM22/order", chunks: []string{`<thinking><phase id="2"><title>A</title>x</phase><phase id="1"><title>B</title>y</phase></thinking>`},
		want: `TH{ V(phase_order@10:2) P{2 "A"} P2"x" P2} V(phase_order@49:1) P{1 "B"} P1"y" P1} TH} V(missing_final@99)`},
	{name: "TM23", chunks: []string{"<thinking><phase id=\"1\"><title>An\xc3", "\xa1lisis</title>"},
		want: `TH{ P{1 "Análisis"} P1} V(unterminated_phase@48) TH} V(unterminated_thinking@48) V(missing_final@48)`},
	// TM24: lenient: W(implicit_phase_close), not E.
	{name: "TM24", chunks: []string{"<thinking><phase id=\"1\"><title>A</title>x</thinking>"},
		want: `TH{ P{1 "A"} P1"x" P1} V(implicit_phase_close@41) TH} V(missing_final@52)`},
	// TM25: lenient: unexpected_text, and the text is answer text.
	{name: "TM25", chunks: []string{"<think>a</think>oops<thinking>"},
		want: `R{ R"a" R} V(unexpected_text@16) F{ F"oops" F} TH{ TH} V(unterminated_thinking@30) V(missing_phase@30) V(missing_final@30)`},
	// TM25 as PARSING.md writes it: the stray </think> is answer text too,
	// so that "</think>" and "oops" reach the client as written.
	{name: "TM25/stray_close", chunks: []string{"</think>oops<thinking>"},
		want: `V(stray_close_tag@0:/think) V(unexpected_text@0) F{ F"</think>oops" F} TH{ TH} V(unterminated_thinking@22) V(missing_phase@22) V(missing_final@22)`},
	// A stray closer between words does not glue them together.
	{name: "TM25/between_words", chunks: []string{"<final>a</final>one</th", "ink>two"},
		want: `V(missing_thinking@0) V(missing_phase@0) F{ F"a" V(missing_serp_queries@8) F} V(trailing_text@16) F{ F"one" V(stray_close_tag@19:/think) F"</think>two" F}`},
	{name: "TM25/in_thinking", chunks: []string{"<thinking></phase>x</thinking>"},
		want: `TH{ V(stray_close_tag@10:/phase) V(text_outside_phase@10) P{1 "Thought"} P1"</phase>x" P1} TH} V(missing_phase@30) V(missing_final@30)`},
	{name: "TM26", chunks: []string{"<serp>a|b</serp>"},
		want: `S"a|b" V(missing_thinking@16) V(missing_phase@16) V(missing_final@16)`},
	{name: "TM26/no_serp", chunks: []string{`<think>a</think><thinking><phase id="1"><title>T</title>x</phase></thinking><final>y` + serpTail},
		want: `R{ R"a" R} TH{ P{1 "T"} P1"x" P1} TH} F{ F"y" Q["q"] F}`},
	// TM26: lenient: block_order is a violation and <think> is parsed.
	{name: "TM26/serp_before_think", chunks: []string{"<serp>s</serp><think>a</think>"},
		want: `S"s" V(block_order@14:think) R{ R"a" R} V(missing_thinking@30) V(missing_phase@30) V(missing_final@30)`},
	{name: "TM27", chunks: []string{head + "Answer.\n\n<!", "-- <serp_q", "ueries>\n[\"q1\",\"q", "2\"]\n</serp_queries> --", "></final>"},
		want: headEvs + `F"Answer." Q["q1","q2"] F}`},
	{name: "TM28", chunks: []string{head + "x <!-- note --> y" + serpTail},
		want: headEvs + `F"x <!-- note --> y" Q["q"] F}`},
	// TM29: lenient: serp_queries_json, and the comment stays answer text.
	{name: "TM29/trailing_comma", chunks: []string{head + "A\n<!-- <serp_queries>\n[\"q1\",]\n</serp_queries> -->\n</final>"},
		want: headEvs + `F"A" V(serp_queries_json@69) F"\n<!-- <serp_queries>\n[\"q1\",]\n</serp_queries> -->\n" V(missing_serp_queries@117) F}`},
	{name: "TM29/single_quotes", chunks: []string{head + "A\n<!-- <serp_queries>\n['q1']\n</serp_queries> -->\n</final>"},
		want: headEvs + `F"A" V(serp_queries_json@69) F"\n<!-- <serp_queries>\n['q1']\n</serp_queries> -->\n" V(missing_serp_queries@116) F}`},
	{name: "TM29/unicode_escape", chunks: []string{head + "A\n<!-- <serp_queries>\n[\"caf\\u00e9\"]\n</serp_queries> -->\n</final>"},
		want: headEvs + `F"A" Q["café"] F}`},
	// TM30: lenient: unterminated_comment, and (CONTRACT.md §4: never lose
	// text) the held comment is answer text, unlike PARSING.md's "not F".
	{name: "TM30", chunks: []string{head + "A\n<!-- <serp_queries>\n[\"q\""},
		want: headEvs + `F"A" V(unterminated_comment@69) F"\n<!-- <serp_queries>\n[\"q\"" V(missing_serp_queries@93) F} V(unterminated_final@93)`},
	{name: "TM32", chunks: []string{head + "A\n<!-- <serp_queries>\n[\"q\"]\n</serp_queries> -->\nmore</final>"},
		want: headEvs + `F"A" Q["q"] V(content_after_serp_queries@115) F"\nmore" F}`},
	{name: "TM33/newline", chunks: []string{head + "A" + serpTail + "\n"},
		want: headEvs + `F"A" Q["q"] F}`},
	{name: "TM33/trailing", chunks: []string{head + "A" + serpTail + "trailing"},
		want: headEvs + `F"A" Q["q"] F} V(trailing_text@123) F{ F"trailing" F}`},
	// Issue 22: a code sample's </final> ends the answer (as the contract
	// allows); the whitespace between it and the text after it is the
	// answer's, so that the closing fence is not glued to the code. At the
	// end, or before a block, it is structural.
	{name: "TM33/code_sample_final", chunks: []string{head + "Example:\n```xml\n<final>demo</final>\n", "```\n</final>\n"},
		want: headEvs + `F"Example:\n` + "```" + `xml\n<final>demo" V(missing_serp_queries@94) F} V(trailing_text@103) F{ F"\n` + "```" + `\n" V(stray_close_tag@107:/final) F"</final>\n" F}`},
	{name: "TM33/space_then_block", chunks: []string{head + "A" + serpTail + " \n", "<think>x</think> \n"},
		want: headEvs + `F"A" Q["q"] F} V(block_order@125:think) R{ R"x" R}`},
	{name: "TM33/before_first_answer", chunks: []string{"<think>x</think>\n\nHello <final>A</final>"},
		want: `R{ R"x" R} V(unexpected_text@18) F{ F"Hello " F} V(missing_thinking@24) V(missing_phase@24) F{ F"A" V(missing_serp_queries@32) F}`},
	// TM34: lenient: the bytes pass on, with invalid_utf8.
	{name: "TM34", chunks: []string{head + "\xf0\x9f"},
		want: headEvs + `V(invalid_utf8@67) F"\xf0\x9f" V(missing_serp_queries@69) F} V(unterminated_final@69)`},
	{name: "TM35", chunks: []string{"<think>a</think><thinking></thinking><final>x</final", ">"},
		want: `R{ R"a" R} TH{ TH} V(missing_phase@37) F{ F"x" V(missing_serp_queries@45) F}`},
}

func spaces(n int) string {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	return string(b)
}

func TestTM(t *testing.T) {
	for _, tc := range tmCases {
		t.Run(tc.name, func(t *testing.T) {
			evs := transformtest.RunStrings(New(tc.opts), tc.chunks...)
			if err := transformtest.WellFormed(evs); err != nil {
				t.Fatal(err)
			}
			norm, _ := transformtest.Normalize(evs)
			if got := transformtest.Format(norm); got != tc.want {
				t.Errorf("events differ:\n want %s\n  got %s", tc.want, got)
			}
			input := []byte(join(tc.chunks))
			if err := checkRaw(input, evs); err != nil {
				t.Error(err)
			}
			chunks := make([][]byte, len(tc.chunks))
			for i, c := range tc.chunks {
				chunks[i] = []byte(c)
			}
			if err := conservation(tc.opts, chunks); err != nil {
				t.Error(err)
			}
			if err := transformtest.SplitInvariant(factory(tc.opts), input, 1, 50); err != nil {
				t.Error(err)
			}
		})
	}
}

func join(chunks []string) string {
	var s string
	for _, c := range chunks {
		s += c
	}
	return s
}
