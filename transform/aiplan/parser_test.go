package aiplan

import (
	"bytes"
	"encoding/json"
	"flag"
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

// fb is the default fallback answer, as the notation writes it.
const fb = `F{ F"抱歉，我的响应格式有问题，请重新尝试您的请求。" F}`

// Parts of a valid plan, for cases that need one around them.
const (
	qaTail   = `,"response_mode":"KNOWLEDGE_QA","tool_calls":[]}`
	toolHead = `{"thought":"t","response_mode":"TOOL_EXECUTION","direct_response":null,"tool_calls":[`
)

// cases are the JO cases of PARSING.md §4.2 as the aiplan format meets
// them, the validation rules of specs/003 and the safe fallback. Where
// PARSING.md offers strict E or lenient W, aiplan is lenient.
var cases = []parseCase{
	{name: "valid/knowledge_qa", chunks: []string{`{"thought":"t","response_mode":"KNOWLEDGE_QA","direct_response":"d","tool_calls":[]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F}`},
	{name: "valid/tool_execution", chunks: []string{toolHead + `{"name":"search","args":{"q":"x"}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  search} TA0"{\"q\":\"x\"}" TC}0 {"q":"x"}`},
	{name: "reasoning_title", opts: transform.ParserOptions{ReasoningTitle: "思考"}, chunks: []string{`{"thought":"t","direct_response":"d"` + qaTail},
		want: `TH{ P{1 "思考"} P1"t" P1} TH} F{ F"d" F}`},
	{name: "JO01", chunks: []string{"``", "`json\n{\"thought\":\"a", "b\",\"direct_response\":\"d\"" + qaTail + "\n``", "`"},
		want: `TH{ P{1 "Thought"} P1"ab" P1} TH} F{ F"d" F}`},
	{name: "JO02", chunks: []string{"\n\n```json\n{\"thought\":\"ab\",\"direct_response\":\"d\"" + qaTail + "\n```\n"},
		want: `TH{ P{1 "Thought"} P1"ab" P1} TH} F{ F"d" F}`},
	{name: "JO03", chunks: []string{"```JSON\n{\"thought\":\"a\",\"direct_response\":\"d\"" + qaTail + "```"},
		want: `TH{ P{1 "Thought"} P1"a" P1} TH} F{ F"d" F}`},
	// JO04, lenient: the prose is the model's text and streams as answer
	// text (CONTRACT.md §7), "{note}" is not taken for the object.
	{name: "JO04", chunks: []string{"Here is {note}: {\"thought\":\"a\",\"direct_response\":\"d\"" + qaTail},
		want: `F{ F"Here is {note}: " F} V(leading_text@0:prose before the JSON object) TH{ P{1 "Thought"} P1"a" P1} TH} F{ F"d" F}`},
	// Issue 22: the blanks between the object (or its fence) and the text
	// after it are the answer's; at the answer's start they are not.
	{name: "JO20/second_object", chunks: []string{`{"thought":"t","direct_response":"first"` + qaTail + "\n", `{"thought":"u"}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"first" F} V(trailing_text@88:text after the JSON object) F{ F"\n{\"thought\":\"u\"}" F}`},
	{name: "JO20/after_the_fence", chunks: []string{"```json\n" + `{"thought":"t","direct_response":"d"` + qaTail + "\n```\n\nMore.\n"},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} V(trailing_text@97:text after the JSON object) F{ F"\nMore.\n" F}`},
	{name: "JO20/at_the_answer_start", chunks: []string{toolHead + `{"name":"search","args":{}}]}` + "\n\n", "Searching."},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  search} TA0"{}" TC}0 {} V(trailing_text@114:text after the JSON object) F{ F"Searching." F}`},
	{name: "JO05", chunks: []string{"{\"thought\":\"t\",\"direct_response\":\"line1\\", "nline2\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"line1\nline2" F}`},
	{name: "JO06", chunks: []string{"{\"thought\":\"t\",\"direct_response\":\"caf\\u00", "e9\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"café" F}`},
	{name: "JO08", chunks: []string{"{\"thought\":\"t\",\"direct_response\":\"\\ud83dx\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(lone_surrogate@34:lone UTF-16 surrogate in a \u escape) F{ F"�x" F}`},
	{name: "JO09", chunks: []string{"{\"thought\":\"use App\\Http\",\"direct_response\":\"d\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"use App" V(invalid_escape@19:invalid escape in a string) P1"\\Http" P1} TH} F{ F"d" F}`},
	{name: "JO10", chunks: []string{"{\"thought\":\"a\nb\",\"direct_response\":\"d\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"a" V(control_char@13:raw control byte in a string) P1"\nb" P1} TH} F{ F"d" F}`},
	{name: "JO11", chunks: []string{"{\"thought\":\"t\",\"direct_response\":\"\xe4\xbd", "\xa0\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"你" F}`},
	{name: "JO13", chunks: []string{"{\"thought\":\"t\",\"direct_response\":nu", "ll,\"response_mode\":\"TOOL_EXECUTION\",\"tool_calls\":[{\"name\":\"a\"}]}"},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TC}0 {}`},
	{name: "JO13/bad_literal", chunks: []string{`{"thought":"t","direct_response":nul1}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(bad_literal@36:misspelt true, false or null) F{ F"1}" F}`},
	{name: "JO14", chunks: []string{"{\"thought\":\"t\",\"dire", "ct_response\":\"hi\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"hi" F}`},
	{name: "JO15", chunks: []string{`{"thought":"t","response_mode":"GENERAL_CHAT","direct_response":"hi","tool_calls":[]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"hi" F}`},
	// JO16: direct_response before response_mode still streams; the mode is
	// checked at the end.
	{name: "JO16", chunks: []string{`{"direct_response":"hi","thought":"t","tool_calls":[],"response_mode":"TOOL_EXECUTION"}`},
		want: `F{ F"hi" F} TH{ P{1 "Thought"} P1"t" P1} TH} V(inconsistent_mode@86:TOOL_EXECUTION needs direct_response null) V(inconsistent_mode@86:TOOL_EXECUTION needs at least one tool call)`},
	{name: "JO17", chunks: []string{toolHead + `{"name":"search","arguments":{"q":"x"}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  search} TA0"{\"q\":\"x\"}" TC}0 {"q":"x"}`},
	{name: "JO17/byte_identical", chunks: []string{toolHead + "{\"name\":\"s\",\"args\": {\"q\" : \"\\u4f60好\" , \"n\":[1, 2e3]}}]}"},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  s} TA0"{\"q\" : \"\\u4f60好\" , \"n\":[1, 2e3]}" TC}0 {"q" : "\u4f60好" , "n":[1, 2e3]}`},
	{name: "JO17/args_before_name", chunks: []string{toolHead + `{"args":{"q":"x"},"name":"search"}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  search} TA0"{\"q\":\"x\"}" TC}0 {"q":"x"}`},
	{name: "JO17/openai_function", chunks: []string{toolHead + `{"type":"function","function":{"name":"f","arguments":"{\"a\":1}"}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  f} TA0"{\"a\":1}" TC}0 {"a":1}`},
	{name: "JO17/no_args", chunks: []string{toolHead + `{"name":"a","args":null},{"name":"b","arguments":""}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TC}0 {} TC{1  b} TC}1 {}`},
	{name: "JO17/args_twice", chunks: []string{toolHead + `{"name":"a","args":{"x":1},"arguments":{"y":2}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TA0"{\"x\":1}" V(duplicate_key@124:arguments) TC}0 {"x":1}`},
	{name: "JO17/no_name", chunks: []string{toolHead + `{"args":{"x":1}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@100:tool_calls[].name) F{ F"{\"args\":{\"x\":1}}" F} V(inconsistent_mode@102:TOOL_EXECUTION needs at least one tool call)`},
	{name: "JO17/not_object", chunks: []string{toolHead + `"search"]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(wrong_type@92:tool_calls) F{ F"\"search\"" F} V(inconsistent_mode@94:TOOL_EXECUTION needs at least one tool call)`},
	// JO19: append-only; the second direct_response continues the answer in
	// a second answer section.
	{name: "JO19", chunks: []string{`{"thought":"t","direct_response":"a","direct_response":"b"` + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"a" F} V(duplicate_key@37:direct_response) F{ F"b" F}`},
	{name: "JO20", chunks: []string{"```json\n{\"thought\":\"t\",\"direct_response\":\"d\"" + qaTail + "\n```\nHope this helps!"},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} V(trailing_text@97:text after the JSON object) F{ F"Hope this helps!" F}`},
	// JO21, lenient: "[" is prose before the object, which is parsed; the
	// "]" after it is trailing text. Both are the model's text.
	{name: "JO21/array", chunks: []string{`[{"thought":"t"}]`},
		want: `F{ F"[" F} V(leading_text@0:prose before the JSON object) TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@15:response_mode) V(missing_field@15:direct_response) V(missing_field@15:tool_calls) V(trailing_text@16:text after the JSON object) F{ F"]" F}`},
	// A reply that is no object is the model's answer: the fallback is
	// for a reply that leaves the user nothing.
	{name: "JO21/number", chunks: []string{`42`},
		want: `F{ F"42" V(not_json_object@0:the reply holds no JSON object) F}`},
	{name: "JO21/prose", chunks: []string{"I cannot answer in JSON."},
		want: `F{ F"I cannot answer in JSON." V(not_json_object@0:the reply holds no JSON object) F}`},
	{name: "JO21/blank", chunks: []string{" \n "},
		want: `V(not_json_object@3:the reply holds no JSON object) ` + fb},
	{name: "JO21/empty", chunks: []string{""},
		want: `V(not_json_object@0:the reply holds no JSON object) ` + fb},
	{name: "JO22", chunks: []string{`{"thought":"t","direct_response":""` + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(inconsistent_mode@82:KNOWLEDGE_QA and GENERAL_CHAT need a direct_response) ` + fb},
	{name: "JO23", chunks: []string{`{"thought":"t","direct_response":"d","x":` + strings.Repeat("[", 10000)},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} V(json_too_deep@104:JSON nested deeper than the depth limit) F{ F"` + strings.Repeat("[", 10000-transform.DefaultMaxDepth+1) + `" F}`},
	{name: "JO25", chunks: []string{"\xef\xbb\xbf \n{\"thought\":\"t\",\"direct_response\":\"d\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F}`},
	{name: "JO26", chunks: []string{`{"thought":"t","direct_response":"hel`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"hel" V(unterminated_json@37:the reply ended inside the JSON object) F}`},
	{name: "JO26/in_thought", chunks: []string{`{"thought":"hmm`},
		want: `TH{ P{1 "Thought"} P1"hmm" V(unterminated_json@15:the reply ended inside the JSON object) P1} TH} ` + fb},
	{name: "JO26/in_args", chunks: []string{toolHead + `{"name":"a","args":{"q":"x`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TA0"{\"q\":\"x" V(unterminated_json@111:the reply ended inside the JSON object) TC}0 {"q":"x ` + fb},
	{name: "JO26/before_name", chunks: []string{toolHead + `{"args":{"q":"x"}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(unterminated_json@102:the reply ended inside the JSON object) F{ F"{\"args\":{\"q\":\"x\"}" F}`},
	{name: "missing_fields", chunks: []string{`{"thought":"t"}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@14:response_mode) V(missing_field@14:direct_response) V(missing_field@14:tool_calls) ` + fb},
	{name: "empty_thought", chunks: []string{`{"thought":"","direct_response":"d"` + qaTail},
		want: `F{ F"d" F} V(empty_thought@82)`},
	{name: "bad_response_mode", chunks: []string{`{"thought":"t","response_mode":"direct","direct_response":"d","tool_calls":[]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} V(bad_response_mode@77:direct)`},
	{name: "tool_execution_with_answer", chunks: []string{`{"thought":"t","response_mode":"TOOL_EXECUTION","direct_response":"d","tool_calls":[{"name":"a"}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} TC{0  a} TC}0 {} V(inconsistent_mode@97:TOOL_EXECUTION needs direct_response null)`},
	{name: "qa_with_tool_calls", chunks: []string{`{"thought":"t","direct_response":"d","response_mode":"GENERAL_CHAT","tool_calls":[{"name":"a"}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} TC{0  a} TC}0 {} V(inconsistent_mode@95:KNOWLEDGE_QA and GENERAL_CHAT need tool_calls empty)`},
	{name: "wrong_types", chunks: []string{`{"thought":1,"response_mode":2,"direct_response":{"a":1},"tool_calls":{}}`},
		want: `TH{ P{1 "Thought"} P1"1" P1} TH} V(wrong_type@11:thought) V(wrong_type@29:response_mode) F{ F"{\"a\":1}" F} V(wrong_type@55:direct_response) V(wrong_type@71:tool_calls) F{ F"{}" F}`},
	{name: "fallback_text", opts: transform.ParserOptions{FallbackText: "Sorry."}, chunks: []string{" "},
		want: `V(not_json_object@1:the reply holds no JSON object) F{ F"Sorry." F}`},
	{name: "too_many_tool_calls", opts: transform.ParserOptions{Limits: transform.Limits{MaxToolCalls: 1}}, chunks: []string{toolHead + `{"name":"a"},{"name":"b"}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TC}0 {} V(too_many_tool_calls@98) F{ F"{\"name\":\"b\"}" F}`},
	// Issue 9: nothing the model wrote vanishes (CONTRACT.md §7). A fence
	// that wraps no object is the model's text, which answers: the
	// fallback is for a reply that leaves the user nothing.
	{name: "lose_nothing/fence_then_prose", chunks: []string{"``` x"},
		want: `F{ F"` + "``` x" + `" V(not_json_object@0:the reply holds no JSON object) F}`},
	{name: "lose_nothing/fence_then_quote", chunks: []string{"```\"évent\"ÏÏ"},
		want: `F{ F"` + "```\\\"évent\\\"ÏÏ" + `" V(not_json_object@0:the reply holds no JSON object) F}`},
	// A tool call without a usable name is no call (clients reject a
	// nameless one): reported, and its text is answer text.
	{name: "nameless_call/misspelt_name", chunks: []string{toolHead + `{"id":"call_1","type":"function","function":{"/ame":"search","arguments":"{\"q\":1}"}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@170:tool_calls[].name) F{ F"{\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"/ame\":\"search\",\"arguments\":\"{\\\"q\\\":1}\"}}" F} V(inconsistent_mode@172:TOOL_EXECUTION needs at least one tool call)`},
	{name: "nameless_call/empty_name", chunks: []string{toolHead + `{"name":"","args":{}},{"name":"b"}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@105:tool_calls[].name) F{ F"{\"name\":\"\",\"args\":{}}" F} TC{0  b} TC}0 {}`},
	{name: "nameless_call/name_not_string", chunks: []string{toolHead + `{"name":42}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(wrong_type@94:tool_calls[].name) F{ F"{\"name\":42}" F} V(inconsistent_mode@97:TOOL_EXECUTION needs at least one tool call)`},
	{name: "nameless_call/null_name", chunks: []string{toolHead + `{"name":null,"args":{"q":"x"}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@114:tool_calls[].name) F{ F"{\"name\":null,\"args\":{\"q\":\"x\"}}" F} V(inconsistent_mode@116:TOOL_EXECUTION needs at least one tool call)`},
	// A call cut off by a break before its name: its text up to the
	// break, then the rest of the reply, verbatim.
	{name: "nameless_call/broken", chunks: []string{toolHead + `{"args":{"q":1} oops`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(bad_json@101:expected ',' or '}' after an object member) F{ F"{\"args\":{\"q\":1} " F} F{ F"oops" F}`},
	// A value of the wrong type in a field the user sees arrives as its
	// JSON text, reported, as jsonl's do.
	{name: "wrong_type/direct_response_number", chunks: []string{`{"thought":"t","response_mode":"KNOWLEDGE_QA","direct_response":123,"tool_calls":[]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"123" F} V(wrong_type@66:direct_response)`},
	{name: "wrong_type/thought_array", chunks: []string{`{"thought":["a", "b"],"direct_response":"d"` + qaTail},
		want: `TH{ P{1 "Thought"} P1"[\"a\", \"b\"]" P1} TH} V(wrong_type@20:thought) F{ F"d" F}`},
	{name: "wrong_type/direct_response_null_qa", chunks: []string{`{"thought":"t","direct_response":null` + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(inconsistent_mode@84:KNOWLEDGE_QA and GENERAL_CHAT need a direct_response) ` + fb},
	{name: "wrong_type/tool_calls_object", chunks: []string{`{"thought":"t","response_mode":"TOOL_EXECUTION","direct_response":null,"tool_calls":{"name":"s"}}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(wrong_type@95:tool_calls) F{ F"{\"name\":\"s\"}" F} V(inconsistent_mode@96:TOOL_EXECUTION needs at least one tool call)`},
	// max_key and max_depth end the reading, not the stream: the rest of
	// the reply is answer text, verbatim.
	{name: "limit/key_too_long", opts: transform.ParserOptions{Limits: transform.Limits{MaxKeyBytes: 16}}, chunks: []string{`{"thought":"t","direct_response":"d","a_key_far_too_long":1}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} V(key_too_long@37:JSON object key longer than the key limit) F{ F"\"a_key_far_too_long\":1}" F}`},
	{name: "limit/too_deep", opts: transform.ParserOptions{Limits: transform.Limits{MaxDepth: 3}}, chunks: []string{`{"thought":"t","x":[[[1]]],"direct_response":"d"}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(json_too_deep@21:JSON nested deeper than the depth limit) F{ F"[1]]],\"direct_response\":\"d\"}" F}`},
	{name: "limit/too_deep_in_args", opts: transform.ParserOptions{Limits: transform.Limits{MaxDepth: 4}}, chunks: []string{toolHead + `{"name":"a","args":{"x":[1]}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TA0"{\"x\":" V(json_too_deep@109:JSON nested deeper than the depth limit) TC}0 {"x": F{ F"[1]}}]}" F}`},
	{name: "args_too_long", opts: transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 8}}, chunks: []string{toolHead + `{"name":"a","args":{"q":"0123456789"}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TA0"{\"q\":\"01" E(block_too_long)`},
}

func TestParser(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			newP := func() transform.Parser { return New(tc.opts) }
			transformtest.CheckCase(t, newP, tc.chunks, tc.want)
		})
	}
}

// TestStreams checks that text and arguments are emitted as they arrive,
// before the object ends.
func TestStreams(t *testing.T) {
	p := New(transform.ParserOptions{})
	var got []string
	emit := func(ev transform.Event) {
		if ev.Kind.IsDelta() && ev.Kind != transform.KindRaw {
			got = append(got, transformtest.Token(ev))
		}
	}
	p.Feed([]byte(`{"thought":"ab`), emit)
	p.Feed([]byte(`cd","direct_response":"ef`), emit)
	p.Feed([]byte(`","tool_calls":[{"name":"s","args":{"q":`), emit)
	p.Feed([]byte(`"x`), emit)
	want := `P1"ab" P1"cd" F"ef" TA0"{\"q\":" TA0"\"x"`
	if s := strings.Join(got, " "); s != want {
		t.Errorf("deltas before the object ended:\n got %s\nwant %s", s, want)
	}
}

// TestLongDirectResponse is JO24 for aiplan: a 1 MiB direct_response in
// one-byte deltas arrives whole, decoded as encoding/json decodes it.
func TestLongDirectResponse(t *testing.T) {
	t.Run("JO24", func(t *testing.T) {
		in := bigPlan(1 << 20)
		var want struct {
			DirectResponse string `json:"direct_response"`
		}
		body := bytes.TrimSuffix(bytes.TrimPrefix(in, []byte("```json\n")), []byte("\n```\n"))
		if err := json.Unmarshal(body, &want); err != nil {
			t.Fatal(err)
		}
		p := New(transform.ParserOptions{})
		var got []byte
		transformtest.FeedAll(p, in, 1, func(ev transform.Event) {
			if ev.Kind == transform.KindAnswerDelta {
				got = append(got, ev.Text...)
			}
		})
		if string(got) != want.DirectResponse {
			t.Errorf("answer of %d bytes differs from the decoded direct_response of %d bytes", len(got), len(want.DirectResponse))
		}
	})
}

// TestGolden parses each testdata/*.txt reply and compares its events, one
// token a line, with the .golden file beside it (-update rewrites them).
// Every fixture must also be split-invariant and well-formed.
func TestGolden(t *testing.T) {
	transformtest.Golden(t, "testdata/*.txt", newParser, *update)
}

// TestReset checks that a reset parser parses like a new one.
func TestReset(t *testing.T) {
	in := []byte(toolHead + `{"name":"a","args":{"q":1}}]}`)
	p := New(transform.ParserOptions{})
	transformtest.Run(p, []byte(`{"thought":"x","tool_calls":[{"name":"b","args":{`))
	p.Reset()
	got := transformtest.Format(transformtest.Run(p, in))
	want := transformtest.Format(transformtest.Run(newParser(), in))
	if got != want {
		t.Errorf("after Reset: %s\nnew parser: %s", got, want)
	}
}
