package jsonl

import (
	"flag"
	"slices"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

func newParser() transform.Parser { return New(transform.ParserOptions{}) }

type parseCase struct {
	name   string
	opts   transform.ParserOptions
	chunks []string
	want   string
}

// Lines of a well-ordered reply, for the cases that need one around them.
const (
	lThinkStart = "{\"event\":\"thinking_start\"}\n"
	lPhase1     = "{\"event\":\"phase_start\",\"id\":1,\"title\":\"A\"}\n"
	lThinkEnd   = "{\"event\":\"thinking_end\"}\n"
	lFinalEnd   = "{\"event\":\"final_end\"}\n"
	lFinal      = "{\"event\":\"final_delta\",\"text\":\".\"}\n" + lFinalEnd
)

// cases are the JL cases of PARSING.md §4.3 and the order checks of
// specs/001 §2 and §6. Offsets are byte offsets in the reply.
var cases = []parseCase{
	{name: "JL01", chunks: []string{"{\"event\":\"thinking_start\",\"x\":", "1}\n{\"ev", "ent\":\"thinking_end\"}\n"},
		want: `TH{ TH} V(missing_final_end@58)`},
	{name: "JL02", chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":\"a\"}\n{\"event\":\"final_end\"}"},
		want: `TH{ TH} F{ F"a" F}`},
	{name: "JL03", chunks: []string{"{\"event\":\"thinking_start\"}\r\n{\"event\":\"thinking_end\"}\r\nprose\r\n{\"event\":\"final_end\"}\r\n"},
		want: `TH{ TH} V(not_json_line@54) F{ F"prose\n" V(event_order@61:final_end) F}`},
	// Issue 22: the blanks between an object and prose after it, or
	// between prose lines, are the answer's once it has text; between
	// objects, and before the answer's first text, they separate lines.
	{name: "JL04/prose_after_answer", chunks: []string{`{"event":"final_delta","text":"a"}` + "\n\n", "Hello\n\n  Next\n" + `{"event":"final_delta","text":"b"} tail` + "\n"},
		want: `F{ F"a" V(not_json_line@36) F"\n\nHello\n" V(not_json_line@45) F"\n  Next\nb" V(bad_line@85:trailing_text) F" tail\n" V(missing_thinking_start@90) V(missing_final_end@90) F}`},
	{name: "JL04/prose_first", chunks: []string{lThinkStart + lThinkEnd + "\n", "Hello\n" + lFinal},
		want: `TH{ TH} V(not_json_line@53) F{ F"Hello\n." F}`},
	{name: "JL03/cr_split", chunks: []string{"x\r", "\ny\r", "z\r"},
		want: `V(not_json_line@0) F{ F"x\n" V(not_json_line@3) F"y\rz" V(missing_thinking_start@7) V(missing_final_end@7) F}`},
	{name: "JL04", chunks: []string{"\n  \t\n" + lThinkStart + " \r\n\n" + lThinkEnd + lFinal},
		want: `TH{ TH} F{ F"." F}`},
	// JL06, lenient: line 2 is reported, the rest of it from the byte that
	// broke it becomes answer text, and line 3 is parsed.
	{name: "JL06", chunks: []string{lThinkStart + "{\"event\":\"thinking_end\" oops}\n" + lThinkEnd},
		want: `TH{ V(bad_line@51:bad_json) F{ F"oops}\n" TH} V(missing_final_end@82) F}`},
	{name: "JL06/line_ends_inside", chunks: []string{"{\"event\":\"final_delta\",\"text\":\"ab\n" + lFinalEnd},
		want: `F{ F"ab" V(bad_line@33:unterminated_json) F"\n" F} V(missing_thinking_start@56)`},
	// The text held before the object said what it is is the model's:
	// it arrives, decoded, ahead of the rest of the broken line, which
	// starts at the byte that broke it (the JSON blank before it is the
	// object's).
	// A raw newline inside the held text of an object not yet named: the
	// held text and the line break are the model's.
	{name: "JL06/line_ends_inside_unnamed", chunks: []string{"{\"text\":\"a\nb\",\"event\":\"final_delta\"}\n"},
		want: `V(bad_line@10:unterminated_json) F{ F"a\n" V(not_json_line@11) F"b\",\"event\":\"final_delta\"}\n" V(missing_thinking_start@37) V(missing_final_end@37) F}`},
	{name: "JL06/broken_before_event", chunks: []string{"{\"text\":\"Hello\" oops}\n"},
		want: `V(bad_line@16:bad_json) F{ F"Hellooops}\n" V(missing_thinking_start@22) V(missing_final_end@22) F}`},
	{name: "JL06/trailing_text", chunks: []string{lThinkStart + "{\"event\":\"thinking_end\"} tail\n"},
		want: `TH{ TH} V(bad_line@52:trailing_text) F{ F"tail\n" V(missing_final_end@57) F}`},
	{name: "JL07/missing", chunks: []string{"{\"text\":\"x\"}\n"},
		want: `V(unknown_event@0) V(missing_thinking_start@13) V(missing_final_end@13)`},
	{name: "JL07/unknown", chunks: []string{"{\"event\":\"bogus\",\"text\":\"x\"}\n"},
		want: `V(unknown_event@0:bogus) V(missing_thinking_start@29) V(missing_final_end@29)`},
	{name: "JL07/not_string", chunks: []string{"{\"event\":7}\n"},
		want: `V(unknown_event@0) V(missing_thinking_start@12) V(missing_final_end@12)`},
	{name: "JL08", chunks: []string{"```jsonl\n" + lThinkStart + lThinkEnd + lFinal + "```\n"},
		want: `TH{ TH} F{ F"." F}`},
	// JL09, lenient: both objects are parsed.
	{name: "JL09", chunks: []string{"{\"event\":\"thinking_start\"}{\"event\":\"thinking_end\"}\n" + lFinalEnd},
		want: `TH{ V(multiple_values@26) TH} V(event_order@51:final_end) F{ F}`},
	// JL10: lines are streamed, not buffered, so no line limit applies; text
	// held until its line says what it is is bounded by MaxBlockBytes.
	{name: "JL10/held_text_limit", opts: transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 8}},
		chunks: []string{lThinkStart + "{\"text\":\"0123456789\",\"event\":\"final_delta\"}\n"},
		want:   `TH{ TH} E(block_too_long)`},
	{name: "JL11", chunks: []string{lThinkStart + "{\"event\":\"thinking_end\""},
		want: `TH{ V(truncated_line@50) V(missing_thinking_end@50) V(missing_final_end@50) TH}`},
	{name: "JO12", chunks: []string{lThinkStart + "{\"event\":\"phase_start\",\"id\":12", "3,\"title\":\"x\"}\n" + lThinkEnd + lFinal},
		want: `TH{ P{123 "x"} P123} TH} F{ F"." F}`},
	{name: "event_after_text", chunks: []string{lThinkStart + lPhase1 + "{\"text\":\"a\\nb\",\"id\":1,\"event\":\"phase_delta\"}\n" + lThinkEnd + lFinal},
		want: `TH{ P{1 "A"} P1"a\nb" P1} TH} F{ F"." F}`},
	{name: "id_after_text", chunks: []string{lThinkStart + lPhase1 + "{\"event\":\"phase_delta\",\"text\":\"a\",\"id\":1}\n" + lThinkEnd + lFinal},
		want: `TH{ P{1 "A"} P1"a" P1} TH} F{ F"." F}`},
	{name: "data_nested", chunks: []string{lThinkStart + "{\"event\":\"phase_start\",\"data\":{\"id\":1,\"title\":\"需求\"}}\n{\"event\":\"phase_delta\",\"data\":{\"id\":1,\"text\":\"目标\"}}\n" + lThinkEnd + "{\"event\":\"final_delta\",\"data\":{\"text\":\"答\"}}\n{\"event\":\"serp_queries\",\"data\":{\"queries\":[\"q1\",\"q2\"]}}\n" + lFinalEnd},
		want: `TH{ P{1 "需求"} P1"目标" P1} TH} F{ F"答" Q["q1","q2"] F}`},
	{name: "id_as_string", chunks: []string{lThinkStart + "{\"event\":\"phase_start\",\"id\":\"2\",\"title\":\"B\"}\n" + lThinkEnd + lFinal},
		want: `TH{ P{2 "B"} P2} TH} F{ F"." F}`},
	{name: "phase_order", chunks: []string{lThinkStart + lPhase1 + lPhase1 + lThinkEnd + lFinal},
		want: `TH{ P{1 "A"} V(phase_order@70) P1} P{1 "A"} P1} TH} F{ F"." F}`},
	{name: "phase_order/bad_id", chunks: []string{lThinkStart + "{\"event\":\"phase_start\",\"id\":0,\"title\":\"A\"}\n" + lThinkEnd + lFinal},
		want: `TH{ V(phase_order@27) P{1 "A"} P1} TH} F{ F"." F}`},
	{name: "empty_title", chunks: []string{lThinkStart + "{\"event\":\"phase_start\",\"id\":1,\"title\":\"\"}\n" + lThinkEnd + lFinal},
		want: `TH{ V(empty_title@27) P{1 "Thought"} P1} TH} F{ F"." F}`},
	{name: "phase_delta_without_start", chunks: []string{lThinkStart + "{\"event\":\"phase_delta\",\"id\":1,\"text\":\"x\"}\n" + lThinkEnd + lFinal},
		want: `TH{ V(phase_delta_without_start@27) P{1 "Thought"} P1"x" P1} TH} F{ F"." F}`},
	{name: "phase_delta_wrong_id", chunks: []string{lThinkStart + lPhase1 + "{\"event\":\"phase_delta\",\"id\":2,\"text\":\"x\"}\n" + lThinkEnd + lFinal},
		want: `TH{ P{1 "A"} V(phase_delta_without_start@70) P1"x" P1} TH} F{ F"." F}`},
	{name: "phase_delta_no_id", chunks: []string{lThinkStart + lPhase1 + "{\"event\":\"phase_delta\",\"text\":\"x\"}\n" + lThinkEnd + lFinal},
		want: `TH{ P{1 "A"} V(phase_delta_without_start@70) P1"x" P1} TH} F{ F"." F}`},
	{name: "event_order/final_in_thinking", chunks: []string{lThinkStart + "{\"event\":\"final_delta\",\"text\":\"x\"}\n" + lThinkEnd + lFinal},
		want: `TH{ V(event_order@27:final_delta) F{ F"x" TH} F"." F}`},
	{name: "event_order/summary_late", chunks: []string{lThinkStart + "{\"event\":\"serp_summary\",\"text\":\"s\"}\n" + lThinkEnd + lFinal},
		want: `TH{ V(event_order@27:serp_summary) S"s" TH} F{ F"." F}`},
	{name: "event_order/queries_first", chunks: []string{"{\"event\":\"serp_queries\",\"queries\":[]}\n"},
		want: `V(event_order@0:serp_queries) Q[] V(missing_thinking_start@38) V(missing_final_end@38)`},
	{name: "event_order/thinking_end_alone", chunks: []string{lThinkEnd},
		want: `V(event_order@0:thinking_end) V(missing_thinking_start@25) V(missing_final_end@25)`},
	{name: "event_after_final_end", chunks: []string{lThinkStart + lThinkEnd + lFinalEnd + "{\"event\":\"final_delta\",\"text\":\"late\"}\n"},
		want: `TH{ TH} V(event_order@52:final_end) F{ F} V(event_after_final_end@74:final_delta) F{ F"late" F}`},
	{name: "missing_all", chunks: []string{""},
		want: `V(missing_thinking_start@0) V(missing_final_end@0)`},
	{name: "missing_thinking_end", chunks: []string{lThinkStart + lPhase1 + "{\"event\":\"phase_delta\",\"id\":1,\"text\":\"x\"}"},
		want: `TH{ P{1 "A"} P1"x" V(missing_thinking_end@111) V(missing_final_end@111) P1} TH}`},
	{name: "prose_indent", chunks: []string{"  - item\n\t`code`\n"},
		want: `V(not_json_line@2) F{ F"  - item\n" V(not_json_line@10) F"\t` + "`code`" + `\n" V(missing_thinking_start@17) V(missing_final_end@17) F}`},
	{name: "bom", chunks: []string{"\xef\xbb", "\xbf" + lThinkStart + lThinkEnd + lFinal},
		want: `TH{ TH} F{ F"." F}`},
	// Issue 9: a line of prose whose first character starts as a byte
	// order mark does ("\xef", then not "\xbb") is one character, not
	// "\xef" then the rest: a client would get three U+FFFD.
	{name: "bom/broken_is_a_character", chunks: []string{"\ufffd prose\n", "\ufeff\ufffd"},
		want: `V(not_json_line@0) F{ F"� prose\n" V(not_json_line@10) F"\ufeff�" V(missing_thinking_start@16) V(missing_final_end@16) F}`},
	{name: "bom/broken_two_bytes", chunks: []string{"\ufec0 x"},
		want: `V(not_json_line@0) F{ F"ﻀ x" V(missing_thinking_start@5) V(missing_final_end@5) F}`},
	{name: "escapes", chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":\"caf\\u00", "e9 \\ud83d", "\\ude00 \xe4\xbd", "\xa0\"}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"café 😀 你" F}`},
	{name: "summary_and_queries", chunks: []string{"{\"event\":\"serp_summary\",\"text\":\"用户要计划\"}\n" + lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":\"x\"}\n{\"event\":\"serp_queries\",\"queries\":[\"a\",\"\\u00e9\"]}\n" + lFinalEnd},
		want: `S"用户要计划" TH{ TH} F{ F"x" Q["a","é"] F}`},
	// specs/001 §1.1: the queries are cleaned as thinkingml's are, each
	// rule broken reported at the event's object, in rule order.
	{name: "serp_queries_cleaned", chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":\"x\"}\n" +
		"{\"event\":\"serp_queries\",\"queries\":[\" a \",\"a\",\"\",\"mail me@x.org\",\"call 13812345678\",\"host 10.0.0.1\",\"" + strings.Repeat("长", 81) + "\",\"b\",\"c\",\"d\",\"e\"]}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"x" V(serp_queries_cleaned@87:too_many) V(serp_queries_cleaned@87:duplicate) V(serp_queries_cleaned@87:too_long) V(serp_queries_cleaned@87:sensitive) V(serp_queries_cleaned@87:empty) Q["a","` + strings.Repeat("长", 80) + `","b","c","d"] F}`},
	{name: "serp_queries_cleaned/nested", chunks: []string{lThinkStart + lThinkEnd + lFinal[:len(lFinal)-len(lFinalEnd)] +
		"{\"event\":\"serp_queries\",\"data\":{\"queries\":[\"q\",\"q\"]}}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"." V(serp_queries_cleaned@87:duplicate) Q["q"] F}`},
	{name: "serp_queries_cleaned/empty", chunks: []string{lThinkStart + lThinkEnd + lFinal[:len(lFinal)-len(lFinalEnd)] +
		"{\"event\":\"serp_queries\",\"queries\":[\"  \"]}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"." V(serp_queries_cleaned@87:empty) Q[] F}`},
	{name: "json_violation_passes", chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":\"a\\qb\"}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"a" V(invalid_escape@84:invalid escape in a string) F"\\qb" F}`},
	{name: "event_twice", chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":\"a\",\"event\":\"phase_delta\",\"text\":\"b\"}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"a" V(duplicate_key@86:event) V(duplicate_key@108:text) F"b" F}`},
	// Fields of the wrong type are reported as wrong_type, as aiplan and
	// final_result report them, and what the user can be shown still
	// arrives (CONTRACT.md §7): a value's JSON text stands for its text.
	{name: "wrong_type/final_delta_number", chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":123}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"123" V(wrong_type@84:text) F}`},
	{name: "wrong_type/text_before_event", chunks: []string{lThinkStart + lThinkEnd + "{\"text\":true,\"event\":\"final_delta\"}\n" + lFinalEnd},
		want: `TH{ TH} V(wrong_type@63:text) F{ F"true" F}`},
	{name: "wrong_type/phase_delta_object", chunks: []string{lThinkStart + lPhase1 + "{\"event\":\"phase_delta\",\"id\":1,\"text\":{\"a\": [\"b\\n\"]}}\n" + lThinkEnd + lFinal},
		want: `TH{ P{1 "A"} P1"{\"a\": [\"b\\n\"]}" V(wrong_type@120:text) P1} TH} F{ F"." F}`},
	{name: "wrong_type/data_text", chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"data\":{\"text\":[1, 2.5e3]}}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"[1, 2.5e3]" V(wrong_type@99:text) F}`},
	{name: "wrong_type/serp_summary", chunks: []string{"{\"event\":\"serp_summary\",\"text\":false}\n" + lThinkStart + lThinkEnd + lFinal},
		want: `V(wrong_type@35:text) S"false" TH{ TH} F{ F"." F}`},
	{name: "wrong_type/title", chunks: []string{lThinkStart + "{\"event\":\"phase_start\",\"id\":1,\"title\":42}\n" + lThinkEnd + lFinal},
		want: `TH{ V(wrong_type@66:title) P{1 "42"} P1} TH} F{ F"." F}`},
	{name: "wrong_type/id", chunks: []string{lThinkStart + "{\"event\":\"phase_start\",\"id\":true,\"title\":\"A\"}\n" + lThinkEnd + lFinal},
		want: `TH{ V(wrong_type@58:id) V(phase_order@27) P{1 "A"} P1} TH} F{ F"." F}`},
	{name: "wrong_type/queries", chunks: []string{lThinkStart + lThinkEnd + lFinal[:len(lFinal)-len(lFinalEnd)] +
		"{\"event\":\"serp_queries\",\"queries\":[\"a\",7,null,{\"q\":\"b\"}]}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"." V(wrong_type@126:queries[]) V(wrong_type@141:queries[]) Q["a","7","{\"q\":\"b\"}"] F}`},
	{name: "wrong_type/queries_string", chunks: []string{lThinkStart + lThinkEnd + lFinal[:len(lFinal)-len(lFinalEnd)] +
		"{\"event\":\"serp_queries\",\"queries\":\"a b\"}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"." V(wrong_type@125:queries) Q["a b"] F}`},
	{name: "wrong_type/queries_object", chunks: []string{lThinkStart + lThinkEnd + lFinal[:len(lFinal)-len(lFinalEnd)] +
		"{\"event\":\"serp_queries\",\"data\":{\"queries\":{\"q\":1}}}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"." V(wrong_type@135:queries) Q[] F}`},
	{name: "wrong_type/data", chunks: []string{"{\"event\":\"thinking_start\",\"data\":\"x\"}\n" + lThinkEnd + lFinal},
		want: `V(wrong_type@35:data) TH{ TH} F{ F"." F}`},
	{name: "null_is_no_value", chunks: []string{lThinkStart + "{\"event\":\"phase_start\",\"id\":1,\"title\":null,\"data\":null}\n" + lThinkEnd + "{\"event\":\"final_delta\",\"text\":null,\"queries\":null}\n" + lFinalEnd},
		want: `TH{ V(empty_title@27) P{1 "Thought"} P1} TH} F{ F}`},
	// max_key and max_depth end the line's reading, not the stream
	// (CONTRACT.md §7): the rest of the line is answer text, as a bad
	// line's is, and the next line is parsed as usual.
	{name: "too_deep", opts: transform.ParserOptions{Limits: transform.Limits{MaxDepth: 2}}, chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":\"a\",\"x\":[[1]]}\n"},
		want: `TH{ TH} F{ F"a" V(json_too_deep@91) F"[1]]}\n" V(missing_final_end@97) F}`},
	{name: "key_too_long", opts: transform.ParserOptions{Limits: transform.Limits{MaxKeyBytes: 8}}, chunks: []string{lThinkStart + lThinkEnd + "{\"event\":\"final_delta\",\"text\":\"a\",\"长长长长\":1}\n" + lFinalEnd},
		want: `TH{ TH} F{ F"a" V(key_too_long@86) F"\"长长长长\":1}\n" F}`},
}

func TestParser(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			newP := func() transform.Parser { return New(tc.opts) }
			transformtest.CheckCase(t, newP, tc.chunks, tc.want)
		})
	}
}

// TestStreamsBeforeLineEnd checks that a line's text is emitted as it
// arrives, not when its line ends (specs/001 §1: 可分片).
func TestStreamsBeforeLineEnd(t *testing.T) {
	p := New(transform.ParserOptions{})
	var got []string
	emit := func(ev transform.Event) {
		if ev.Kind == transform.KindAnswerDelta || ev.Kind == transform.KindPhaseDelta {
			got = append(got, string(ev.Text))
		}
	}
	p.Feed([]byte(lThinkStart+lPhase1+`{"event":"phase_delta","id":1,"text":"ab`), emit)
	p.Feed([]byte(`cd`), emit)
	if strings.Join(got, "|") != "ab|cd" {
		t.Errorf("phase text before the line ended: %q, want ab|cd", got)
	}
	got = nil
	p.Feed([]byte("\"}\n"+lThinkEnd+`{"event":"final_delta","text":"ef`), emit)
	if strings.Join(got, "|") != "ef" {
		t.Errorf("final text before the line ended: %q, want ef", got)
	}
}

// TestGolden parses each testdata/*.jsonl reply and compares its events,
// one token a line, with the .golden file beside it (-update rewrites
// them). Every fixture must also be split-invariant and well-formed.
func TestGolden(t *testing.T) {
	transformtest.Golden(t, "testdata/*.jsonl", newParser, *update)
}

// TestReset checks that a reset parser parses like a new one.
func TestReset(t *testing.T) {
	in := []byte(lThinkStart + lPhase1 + "{\"event\":\"phase_delta\",\"id\":1,\"text\":\"x\"}\n" + lThinkEnd + lFinalEnd)
	p := New(transform.ParserOptions{})
	transformtest.Run(p, []byte("garbage\n{\"event\":\"thinking_start\"}\n{\"text\":\"held"))
	p.Reset()
	got := transformtest.Format(transformtest.Run(p, in))
	want := transformtest.Format(transformtest.Run(newParser(), in))
	if got != want {
		t.Errorf("after Reset: %s\nnew parser: %s", got, want)
	}
}

// TestSerpQueriesList checks that a cleaned serp_queries list is never
// nil, so that encoders write [] rather than null, and that the event owns
// it: a later serp_queries line does not change it.
func TestSerpQueriesList(t *testing.T) {
	tests := []struct {
		queries string
		want    []string
	}{
		{`[]`, []string{}},
		{`["",""]`, []string{}},
		{`["a","b"]`, []string{"a", "b"}},
	}
	for _, tt := range tests {
		t.Run(tt.queries, func(t *testing.T) {
			p := New(transform.ParserOptions{})
			var lists [][]string
			emit := func(ev transform.Event) {
				if ev.Kind == transform.KindSerpQueries {
					lists = append(lists, ev.List)
				}
			}
			p.Feed([]byte(lThinkStart+lThinkEnd+lFinal[:len(lFinal)-len(lFinalEnd)]+`{"event":"serp_queries","queries":`+tt.queries+"}\n"), emit)
			p.Feed([]byte(`{"event":"serp_queries","queries":["x","y","z"]}`+"\n"), emit)
			p.Close(emit)
			if len(lists) != 2 {
				t.Fatalf("%d serp_queries events, want 2", len(lists))
			}
			if lists[0] == nil || !slices.Equal(lists[0], tt.want) {
				t.Errorf("first list %#v, want %q", lists[0], tt.want)
			}
		})
	}
}
