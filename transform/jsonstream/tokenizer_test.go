package jsonstream

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// testWatches are the paths the PARSING.md §4.2 cases use.
var testWatches = []Watch{
	{Path: "thought", Mode: Text},
	{Path: "response_mode", Mode: Text},
	{Path: "direct_response", Mode: Text},
	{Path: "message", Mode: Text},
	{Path: "m", Mode: Text},
	{Path: "n", Mode: Events},
	{Path: "ok", Mode: Events},
	{Path: "status", Mode: Text},
	{Path: "clarify.question", Mode: Text},
	{Path: "clarify.options", Mode: Raw},
	{Path: "artifacts[*].content", Mode: Text},
	{Path: "tool_calls[*].name", Mode: Text},
	{Path: "tool_calls[*].arguments", Mode: Raw | Text},
}

var testPaths = MustCompile(testWatches...)

type tokCase struct {
	name   string
	doc    DocMode
	lim    transform.Limits
	chunks []string
	want   string
}

// tokCases are the JO cases of PARSING.md §4.2 at the tokenizer level, and
// the tokenizer's own edge cases. Where PARSING.md offers strict E or
// lenient W, the case says which this tokenizer does.
var tokCases = []tokCase{
	{name: "JO01", doc: DocStrict, chunks: []string{"``", "`json\n{\"thought\":\"a", "b\"}\n``", "`"},
		want: `J{thought J"thought":"ab" J}thought`},
	{name: "JO02", doc: DocStrict, chunks: []string{"\n\n```json\n{\"thought\":\"ab\"}\n```\n"},
		want: `J{thought J"thought":"ab" J}thought`},
	{name: "JO03/upper_tag", doc: DocStrict, chunks: []string{"```JSON\n{\"m\":\"x\"}\n```"},
		want: `J{m J"m":"x" J}m`},
	{name: "JO03/no_tag", doc: DocStrict, chunks: []string{"```\n{\"m\":\"x\"}\n```"},
		want: `J{m J"m":"x" J}m`},
	{name: "JO03/fence_after_brace", doc: DocStrict, chunks: []string{"{\"m\":\"x\"}```"},
		want: `J{m J"m":"x" J}m`},
	{name: "JO03/brace_on_fence_line", doc: DocStrict, chunks: []string{"```json {\"m\":\"x\"} ```"},
		want: `J{m J"m":"x" J}m`},
	// JO04 lenient (aiplan): the prose streams (CONTRACT.md §7), "{note}"
	// is not taken for the object, and leading_text is reported when the
	// object starts.
	{name: "JO04/lenient", doc: DocLenient, chunks: []string{"Here is {note}: {\"status\":\"ok\"}"},
		want: `T"Here is {note}: " W(leading_text@0) J{status J"status":"ok" J}status`},
	// JO04 strict (final_result): the reply is not an object; its text
	// follows as prose.
	{name: "JO04/strict", doc: DocStrict, chunks: []string{"Here is {note}: {\"status\":\"ok\"}"},
		want: `X(expected_object@0) T"Here is {note}: {\"status\":\"ok\"}"`},
	{name: "JO05", doc: DocStrict, chunks: []string{"{\"message\":\"line1\\", "nline2\"}"},
		want: `J{message J"message":"line1\nline2" J}message`},
	{name: "JO06", doc: DocStrict, chunks: []string{"{\"m\":\"caf\\u00", "e9\"}"},
		want: `J{m J"m":"café" J}m`},
	{name: "JO08", doc: DocStrict, chunks: []string{"{\"m\":\"\\ud83dx\"}"},
		want: `J{m W(lone_surrogate@6) J"m":"�x" J}m`},
	{name: "JO08/low_alone", doc: DocStrict, chunks: []string{"{\"m\":\"a\\udc00b\"}"},
		want: `J{m J"m":"a" W(lone_surrogate@7) J"m":"�b" J}m`},
	{name: "JO08/high_then_high", doc: DocStrict, chunks: []string{"{\"m\":\"\\ud83d\\ud83d\\ude00\"}"},
		want: `J{m W(lone_surrogate@6) J"m":"�😀" J}m`},
	{name: "JO08/high_at_end", doc: DocStrict, chunks: []string{"{\"m\":\"\\ud83d\"}"},
		want: `J{m W(lone_surrogate@6) J"m":"�" J}m`},
	{name: "JO08/pair_split", doc: DocStrict, chunks: []string{"{\"m\":\"\\ud83d", "\\ude00\"}"},
		want: `J{m J"m":"😀" J}m`},
	// JO09 lenient: the escape is kept literally.
	{name: "JO09", doc: DocStrict, chunks: []string{"{\"m\":\"use App\\Http\"}"},
		want: `J{m J"m":"use App" W(invalid_escape@13) J"m":"\\Http" J}m`},
	{name: "JO09/bad_hex", doc: DocStrict, chunks: []string{"{\"m\":\"\\u12zq\"}"},
		want: `J{m W(invalid_escape@6) J"m":"\\u12zq" J}m`},
	// JO10 lenient: raw control bytes are kept, reported once per string.
	{name: "JO10", doc: DocStrict, chunks: []string{"{\"m\":\"a\nb\tc\"}"},
		want: `J{m J"m":"a" W(control_char@7) J"m":"\nb\tc" J}m`},
	{name: "JO11", doc: DocStrict, chunks: []string{"{\"m\":\"\xe4\xbd", "\xa0\"}"},
		want: `J{m J"m":"你" J}m`},
	{name: "JO12", doc: DocStrict, chunks: []string{"{\"n\":12", "3}"},
		want: `J{n J}n=123`},
	{name: "JO12/fraction", doc: DocStrict, chunks: []string{"{\"n\":-0.5e+3}"},
		want: `J{n J}n=-0.5e+3`},
	{name: "JO12/bad", doc: DocStrict, chunks: []string{"{\"n\":-x}"},
		want: `J{n X(bad_number@6) T"x}"`},
	// A leading zero ends the number, as in encoding/json's scanner; the
	// digit after it is then out of place.
	{name: "JO12/leading_zero", doc: DocStrict, chunks: []string{"{\"n\":01}"},
		want: `J{n J}n=0 X(bad_json@6) T"1}"`},
	{name: "JO13", doc: DocStrict, chunks: []string{"{\"ok\":tr", "ue}"},
		want: `J{ok J}ok=true`},
	{name: "JO13/null", doc: DocStrict, chunks: []string{"{\"ok\":null}"},
		want: `J{ok J}ok=null`},
	{name: "JO13/trux", doc: DocStrict, chunks: []string{"{\"ok\":trux}"},
		want: `J{ok X(bad_literal@9) T"x}"`},
	{name: "JO14", doc: DocStrict, chunks: []string{"{\"dire", "ct_response\":\"hi\"}"},
		want: `J{direct_response J"direct_response":"hi" J}direct_response`},
	{name: "JO15", doc: DocStrict, chunks: []string{`{"thought":"t1","response_mode":"direct","direct_response":"d1"}`},
		want: `J{thought J"thought":"t1" J}thought J{response_mode J"response_mode":"direct" J}response_mode J{direct_response J"direct_response":"d1" J}direct_response`},
	{name: "JO16", doc: DocStrict, chunks: []string{`{"thought":"t1","direct_response":"d1","response_mode":"direct"}`},
		want: `J{thought J"thought":"t1" J}thought J{direct_response J"direct_response":"d1" J}direct_response J{response_mode J"response_mode":"direct" J}response_mode`},
	{name: "JO17", doc: DocStrict, chunks: []string{`{"tool_calls":[{"name":"search","arguments":{"q":"x"}}]}`},
		want: `J{tool_calls.0.name J"tool_calls.0.name":"search" J}tool_calls.0.name J{tool_calls.0.arguments JR"tool_calls.0.arguments":"{\"q\":\"x\"}" J}tool_calls.0.arguments`},
	{name: "JO17/byte_identical", doc: DocStrict, chunks: []string{"{\"tool_calls\":[{\"name\":\"a\"},{\"arguments\": { \"q\" : [1, 2.5e3, \"\\u4f60\\n好\"], \"t\":true } ,\"name\":\"b\"}]}"},
		want: `J{tool_calls.0.name J"tool_calls.0.name":"a" J}tool_calls.0.name J{tool_calls.1.arguments JR"tool_calls.1.arguments":"{ \"q\" : [1, 2.5e3, \"\\u4f60\\n好\"], \"t\":true }" J}tool_calls.1.arguments J{tool_calls.1.name J"tool_calls.1.name":"b" J}tool_calls.1.name`},
	{name: "JO17/string_arguments", doc: DocStrict, chunks: []string{`{"tool_calls":[{"arguments":"{\"q\":1}"}]}`},
		want: `J{tool_calls.0.arguments J"tool_calls.0.arguments":"{\"q\":1}" J}tool_calls.0.arguments`},
	{name: "JO17/scalar_arguments", doc: DocStrict, chunks: []string{`{"tool_calls":[{"arguments":12}]}`},
		want: `J{tool_calls.0.arguments JR"tool_calls.0.arguments":"12" J}tool_calls.0.arguments=12`},
	{name: "JO18", doc: DocStrict, chunks: []string{`{"status":"needs_input","clarify":{"question":"Which?","options":["a","b"]},"artifacts":[{"type":"code","content":"x=1"}]}`},
		want: `J{status J"status":"needs_input" J}status J{clarify.question J"clarify.question":"Which?" J}clarify.question J{clarify.options JR"clarify.options":"[\"a\",\"b\"]" J}clarify.options J{artifacts.0.content J"artifacts.0.content":"x=1" J}artifacts.0.content`},
	// JO19: append-only; the duplicate is reported where its key is.
	{name: "JO19", doc: DocStrict, chunks: []string{`{"message":"a","message":"b"}`},
		want: `J{message J"message":"a" J}message W(duplicate_key@15) J{message J"message":"b" J}message`},
	{name: "JO19/unwatched", doc: DocStrict, chunks: []string{`{"x":1,"x":2}`},
		want: ``},
	// JO20 lenient: trailing text is reported, and is the model's text
	// (CONTRACT.md §7); the closing fence before it is not.
	{name: "JO20", doc: DocStrict, chunks: []string{"{\"m\":\"x\"}\n```\nHope this helps!"},
		want: `J{m J"m":"x" J}m W(trailing_text@14) T"Hope this helps!"`},
	// Backticks after the object that are not its closing fence are the
	// model's text: a code block, inline code, a lone backtick. The blanks
	// between the object and that text are the text's (issue 22).
	{name: "JO20/code_block_after", doc: DocStrict, chunks: []string{"{\"m\":\"x\"}\n\n```python\nprint(1)\n```"},
		want: `J{m J"m":"x" J}m W(trailing_text@9) T"\n\n` + "```python\\nprint(1)\\n```" + `"`},
	{name: "JO20/inline_code_after", doc: DocStrict, chunks: []string{"{\"m\":\"x\"}\n`x` is it"},
		want: `J{m J"m":"x" J}m W(trailing_text@9) T"\n` + "`x` is it" + `"`},
	{name: "JO20/lone_backtick_at_end", doc: DocStrict, chunks: []string{"{\"m\":\"x\"} `"},
		want: `J{m J"m":"x" J}m W(trailing_text@9) T" ` + "`" + `"`},
	{name: "JO20/second_object", doc: DocStrict, chunks: []string{"{\"m\":\"x\"}\n", "{\"m\":\"y\"}"},
		want: `J{m J"m":"x" J}m W(trailing_text@9) T"\n{\"m\":\"y\"}"`},
	{name: "JO20/blanks_after_the_fence", doc: DocStrict, chunks: []string{"```json\n{\"m\":\"x\"}\n```\n", "\nMore."},
		want: `J{m J"m":"x" J}m W(trailing_text@22) T"\nMore."`},
	{name: "JO20/blanks_at_the_end", doc: DocStrict, chunks: []string{"{\"m\":\"x\"}\n \n"},
		want: `J{m J"m":"x" J}m`},
	{name: "JO03/fence_then_blank_lines", doc: DocStrict, chunks: []string{"```json\n{\"m\":\"x\"}\n```\n\n"},
		want: `J{m J"m":"x" J}m`},
	{name: "JO21/array", doc: DocStrict, chunks: []string{`[1]`},
		want: `X(expected_object@0) T"[1]"`},
	{name: "JO21/string", doc: DocStrict, chunks: []string{` "str"`},
		want: `X(expected_object@1) T"\"str\""`},
	{name: "JO21/number", doc: DocStrict, chunks: []string{`42`},
		want: `X(expected_object@0) T"42"`},
	{name: "JO21/bare", doc: DocBare, chunks: []string{`[1]`},
		want: `X(expected_object@0)`},
	{name: "JO21/lenient", doc: DocLenient, chunks: []string{`[1]`},
		want: `T"[1]" X(expected_object@0)`},
	{name: "JO21/empty", doc: DocStrict, chunks: []string{" \n"},
		want: `X(expected_object@2)`},
	{name: "JO22", doc: DocStrict, chunks: []string{`{"message":""}`},
		want: `J{message J}message`},
	{name: "JO23", doc: DocStrict, chunks: []string{`{"a":` + strings.Repeat("[", 10000)},
		want: `E(json_too_deep) T"` + strings.Repeat("[", 10000-transform.DefaultMaxDepth+1) + `"`},
	{name: "JO23/limit", doc: DocStrict, lim: limits(func(l *transform.Limits) { l.MaxDepth = 3 }), chunks: []string{`{"a":[[[1]]]}`},
		want: `E(json_too_deep) T"[1]]]}"`},
	{name: "JO23/at_limit", doc: DocStrict, lim: limits(func(l *transform.Limits) { l.MaxDepth = 3 }), chunks: []string{`{"a":[[1]],"m":"x"}`},
		want: `J{m J"m":"x" J}m`},
	{name: "JO25", doc: DocStrict, chunks: []string{"\xef\xbb\xbf \r\n\t{\"m\":\"x\"}"},
		want: `J{m J"m":"x" J}m`},
	{name: "JO25/bom_split", doc: DocStrict, chunks: []string{"\xef", "\xbb", "\xbf{\"m\":\"x\"}"},
		want: `J{m J"m":"x" J}m`},
	{name: "JO25/broken_bom", doc: DocStrict, chunks: []string{"\xef\xbbx"},
		want: `X(expected_object@0) T"\xef\xbbx"`},
	{name: "JO26", doc: DocStrict, chunks: []string{"{\"message\":\"hel"},
		want: `J{message J"message":"hel" X(unterminated_json@15)`},
	{name: "JO26/cut_escape", doc: DocStrict, chunks: []string{"{\"message\":\"a\\u00"},
		want: `J{message J"message":"a\\u00" X(unterminated_json@17)`},
	{name: "JO26/cut_rune", doc: DocStrict, chunks: []string{"{\"message\":\"a\xe4\xbd"},
		want: `J{message J"message":"a\xe4\xbd" X(unterminated_json@15)`},
	{name: "key_too_long", doc: DocStrict, lim: limits(func(l *transform.Limits) { l.MaxKeyBytes = 4 }), chunks: []string{`{"abcde":1}`},
		want: `E(key_too_long) T"\"abcde\":1}"`},
	{name: "key_escaped", doc: DocStrict, chunks: []string{`{"\u006d":"x"}`},
		want: `J{m J"m":"x" J}m`},
	{name: "bad_json/trailing_comma", doc: DocStrict, chunks: []string{`{"m":"x",}`},
		want: `J{m J"m":"x" J}m X(bad_json@9) T"}"`},
	{name: "bad_json/missing_colon", doc: DocStrict, chunks: []string{`{"m" "x"}`},
		want: `X(bad_json@5) T"\"x\"}"`},
	{name: "bad_json/then_prose", doc: DocStrict, chunks: []string{`{"m":x} {"m":"y"}`},
		want: `X(bad_json@5) T"x} {\"m\":\"y\"}"`},
	{name: "nested_unwatched", doc: DocStrict, chunks: []string{`{"x":{"m":"no","y":[{"m":"no"}]},"m":"yes"}`},
		want: `J{m J"m":"yes" J}m`},
	{name: "lenient/brace_then_object", doc: DocLenient, chunks: []string{"{ {\"m\":\"x\"}"},
		want: `T"{ " W(leading_text@0) J{m J"m":"x" J}m`},
	{name: "lenient/fenced", doc: DocLenient, chunks: []string{"Sure:\n```json\n{\"m\":\"x\"}\n```"},
		want: `T"Sure:\n" W(leading_text@0) J{m J"m":"x" J}m`},
	{name: "lenient/no_object", doc: DocLenient, chunks: []string{"no {json} here"},
		want: `T"no {json} here" X(expected_object@0)`},
	{name: "strict/short_ticks", doc: DocStrict, chunks: []string{"``x"},
		want: `X(expected_object@0) T"` + "``x" + `"`},
	{name: "strict/prose_runes", doc: DocStrict, chunks: []string{"你好", "\xe4\xb8", "\x96界"},
		want: `X(expected_object@0) T"你好世界"`},
	{name: "strict/fence_only", doc: DocStrict, chunks: []string{"```json\n"},
		want: `X(expected_object@0) T"` + "```json\\n" + `"`},
	{name: "escapes/all", doc: DocStrict, chunks: []string{`{"m":"\b\f\n\r\t\/\"\\\u00E9"}`},
		want: `J{m J"m":"\b\f\n\r\t/\"\\é" J}m`},
	{name: "JO08/high_then_escape", doc: DocStrict, chunks: []string{`{"m":"\ud83d\nx"}`},
		want: `J{m W(lone_surrogate@6) J"m":"�\nx" J}m`},
	{name: "JO13/false", doc: DocStrict, chunks: []string{`{"ok":fal`, `se}`},
		want: `J{ok J}ok=false`},
	{name: "JO12/too_long", doc: DocStrict, lim: limits(func(l *transform.Limits) { l.MaxKeyBytes = 4 }), chunks: []string{`{"n":123456}`},
		want: `J{n W(bad_number@5) J}n`},
	{name: "JO26/cut_after_high", doc: DocStrict, chunks: []string{`{"m":"\ud83d\`},
		want: `J{m J"m":"�\\" X(unterminated_json@13)`},
	{name: "lenient/brace_at_end", doc: DocLenient, chunks: []string{"{ "},
		want: `T"{ " X(expected_object@0)`},
	{name: "strict/bom_only", doc: DocStrict, chunks: []string{"\xef\xbb"},
		want: `X(expected_object@0) T"\xef\xbb"`},
	// Issue 9: nothing the model wrote is dropped but blanks and the
	// wrapper around the object. A fence that wraps no object is text, as
	// is a fence header longer than MaxTagBytes.
	{name: "strict/fence_then_prose", doc: DocStrict, chunks: []string{"``` x"},
		want: `X(expected_object@0) T"` + "``` x" + `"`},
	{name: "strict/fence_then_quote", doc: DocStrict, chunks: []string{"```\"\u00e9vent\"\u00cf\u00cf"},
		want: `X(expected_object@0) T"` + "```\\\"évent\\\"ÏÏ" + `"`},
	{name: "strict/fence_then_code", doc: DocStrict, chunks: []string{"\n```python\n\nprint(1)\n```\n"},
		want: `X(expected_object@1) T"` + "```python\\n\\nprint(1)\\n```\\n" + `"`},
	{name: "strict/fence_too_long", doc: DocStrict, lim: limits(func(l *transform.Limits) { l.MaxTagBytes = 8 }), chunks: []string{"```json\n\n{\"m\":\"x\"}"},
		want: `X(expected_object@0) T"` + "```json\\n\\n{\\\"m\\\":\\\"x\\\"}" + `"`},
	{name: "strict/fence_within_limit", doc: DocStrict, lim: limits(func(l *transform.Limits) { l.MaxTagBytes = 8 }), chunks: []string{"```json\n{\"m\":\"x\"}"},
		want: `J{m J"m":"x" J}m`},
	// A broken byte order mark is the first character's start: prose
	// never cuts it.
	{name: "strict/broken_bom_rune", doc: DocStrict, chunks: []string{"\ufffd x"},
		want: `X(expected_object@0) T"� x"`},
	{name: "lenient/broken_bom_rune", doc: DocLenient, chunks: []string{"\ufffd {\"m\":\"x\"}"},
		want: `T"� " W(leading_text@0) J{m J"m":"x" J}m`},
	{name: "lenient/fence_then_prose", doc: DocLenient, chunks: []string{"a\n```py\nx = {1}\n```\n"},
		want: `T"a\n` + "```py\\nx = {1}\\n```\\n" + `" X(expected_object@0)`},
	{name: "lenient/fence_between", doc: DocLenient, chunks: []string{"Sure:\n```json\n{\"m\":\"x\"}\n```\nBye."},
		want: `T"Sure:\n" W(leading_text@0) J{m J"m":"x" J}m W(trailing_text@28) T"Bye."`},
	{name: "lenient/inline_ticks", doc: DocLenient, chunks: []string{"use ```x``` and {\"m\":\"y\"}"},
		want: `T"use ` + "```x```" + ` and " W(leading_text@0) J{m J"m":"y" J}m`},
	{name: "lenient/fence_at_end", doc: DocLenient, chunks: []string{"ok\n``"},
		want: `T"ok\n` + "``" + `" X(expected_object@0)`},
	// Limits end the tokenizing, not the reply (CONTRACT.md §7): the rest
	// of the reply, from a key's opening quote, is prose, verbatim.
	{name: "key_too_long/escaped", doc: DocStrict, lim: limits(func(l *transform.Limits) { l.MaxKeyBytes = 4 }), chunks: []string{`{"m":"a","ab\u0063de":1}`},
		want: `J{m J"m":"a" J}m E(key_too_long) T"\"ab\\u0063de\":1}"`},
	{name: "key_too_long/rune", doc: DocStrict, lim: limits(func(l *transform.Limits) { l.MaxKeyBytes = 4 }), chunks: []string{`{"ab你":1}`},
		want: `E(key_too_long) T"\"ab你\":1}"`},
	{name: "key_too_long/lenient", doc: DocLenient, lim: limits(func(l *transform.Limits) { l.MaxKeyBytes = 4 }), chunks: []string{"x {\"abcdef\":1}\n"},
		want: `T"x " W(leading_text@0) E(key_too_long) T"\"abcdef\":1}\n"`},
	{name: "key_too_long/bare", doc: DocBare, lim: limits(func(l *transform.Limits) { l.MaxKeyBytes = 4 }), chunks: []string{`{"abcde":1} x`},
		want: `E(key_too_long) T"\"abcd"`},
	{name: "bare/stops_after_object", doc: DocBare, chunks: []string{`  {"m":"x"} {"m":"y"}`},
		want: `J{m J"m":"x" J}m`},
}

func TestTokenizerCases(t *testing.T) {
	for _, tc := range tokCases {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Paths: testPaths, Limits: tc.lim, Doc: tc.doc}
			got := format(testWatches, normalize(runStrings(c, tc.chunks...)))
			if got != tc.want {
				t.Errorf("events differ:\n want %s\n  got %s", tc.want, got)
			}
			input := []byte(strings.Join(tc.chunks, ""))
			if err := splitInvariant(c, testWatches, input, 1, 50); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestTokenizerBareConsumed checks where a DocBare Feed stops: after the
// object, or at the byte that broke it, so that the jsonl parser can take
// the rest of the line (JL06, JL09).
func TestTokenizerBareConsumed(t *testing.T) {
	cases := []struct {
		name, in string
		want     int
	}{
		{"after_object", `{"m":"x"} tail`, 9},
		{"at_bad_byte", `{"m":x}`, 5},
		{"not_object", `x{}`, 0},
		{"blanks_first", "  {}", 4},
		{"number_end", `{"n":12}x`, 8},
		{"cut_off", `{"m":"x`, 7},
		// A limit stops the Feed where it tripped: at the character of a
		// key that does not fit (the key's text so far was reported as
		// prose), at the bracket one level too deep.
		{"key_too_long", `{"m":1,"abcde":1}`, 12},
		{"key_too_long_rune", `{"ab你":1}`, 4},
		{"too_deep", `{"m":[[[1]]]}`, 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Paths: testPaths, Doc: DocBare, Limits: limits(func(l *transform.Limits) { l.MaxKeyBytes, l.MaxDepth = 4, 3 })}
			_, n := run(c, []byte(tc.in))
			if n != tc.want {
				t.Errorf("consumed %d, want %d", n, tc.want)
			}
			if err := splitInvariant(c, testWatches, []byte(tc.in), 2, 50); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestTokenizerResetAt checks that offsets follow ResetAt.
func TestTokenizerResetAt(t *testing.T) {
	var tk Tokenizer
	tk.Init(Config{Paths: testPaths, Doc: DocBare})
	r := &recorder{}
	tk.Feed([]byte(`{"m":"a"}`), r)
	tk.ResetAt(100)
	tk.Feed([]byte("{\"m\":\"\x01\"}"), r)
	got := format(testWatches, normalize(r.toks))
	want := `J{m J"m":"a" J}m J{m W(control_char@106) J"m":"\x01" J}m`
	if got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestTokenizerLongString is JO24: a 1 MiB string in one-byte chunks
// arrives whole and in order.
func TestTokenizerLongString(t *testing.T) {
	t.Run("JO24", testLongString)
}

func testLongString(t *testing.T) {
	body := bytes.Repeat([]byte("ab你好\\n"), (1<<20)/10)
	in := append(append([]byte(`{"message":"`), body...), `"}`...)
	var tk Tokenizer
	tk.Init(Config{Paths: testPaths, Doc: DocStrict})
	var got []byte
	h := handlerFunc(func(tk *Token) {
		if tk.Kind == TokenText {
			got = append(got, tk.Text...)
		}
	})
	for i := range in {
		tk.Feed(in[i:i+1], h)
	}
	tk.Close(h)
	want := bytes.ReplaceAll(body, []byte(`\n`), []byte("\n"))
	if !bytes.Equal(got, want) {
		t.Fatalf("decoded %d bytes, want %d", len(got), len(want))
	}
}

type handlerFunc func(*Token)

func (f handlerFunc) HandleToken(tk *Token) { f(tk) }

func TestCompile(t *testing.T) {
	bad := []struct {
		name string
		ws   []Watch
	}{
		{"empty_segment", []Watch{{Path: "a..b"}}},
		{"bad_index", []Watch{{Path: "a[0]"}}},
		{"twice", []Watch{{Path: "a"}, {Path: "a"}}},
		{"under_raw", []Watch{{Path: "a", Mode: Raw}, {Path: "a.b"}}},
		{"root_raw", []Watch{{Path: "", Mode: Raw}}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Compile(tc.ws...); err == nil {
				t.Error("Compile accepted it")
			}
		})
	}
	t.Run("ok", func(t *testing.T) {
		if _, err := Compile(Watch{Path: ""}, Watch{Path: "a[*][*].b"}, Watch{Path: "a[*]"}); err != nil {
			t.Error(err)
		}
	})
}

// TestGolden tokenizes each testdata/*.json reply and compares its tokens,
// one a line, with the .golden file beside it (-update rewrites them).
// Every fixture must also be split-invariant.
func TestGolden(t *testing.T) {
	files, err := filepath.Glob("testdata/*.json")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			input, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			c := Config{Paths: testPaths, Doc: DocStrict}
			toks, _ := run(c, input)
			got := strings.ReplaceAll(format(testWatches, normalize(toks)), " J", "\nJ") + "\n"
			golden := strings.TrimSuffix(name, ".json") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("tokens differ from %s:\n%s", golden, got)
			}
			if err := splitInvariant(c, testWatches, input, 7, 50); err != nil {
				t.Error(err)
			}
		})
	}
}
