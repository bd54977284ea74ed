package texttools

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

var hermes, _ = Lookup("hermes")

func newHermes(opts transform.ParserOptions) func() transform.Parser {
	return func() transform.Parser { return New(hermes, opts) }
}

const weather = `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`

type toolCase struct {
	name   string
	chunks []string
	want   string
}

// TestHermes covers the rules of the package comment, and PARSING.md
// §4.1's tag cases for <tool_call> and </tool_call>.
func TestHermes(t *testing.T) {
	cases := []toolCase{
		{"one call", []string{weather},
			`TC{0  get_weather} TA0"{\"city\": \"Paris\"}" TC}0 {"city": "Paris"}`},
		{"text around", []string{"Let me check.\n\n<tool_call>\n" + weather[11:len(weather)-12] + "\n</tool_call>\n\nDone."},
			`F{ F"Let me check." TC{0  get_weather} TA0"{\"city\": \"Paris\"}" TC}0 {"city": "Paris"} F"\n\n\n\nDone." F}`},
		// Blanks between text and a block are the answer's (issue 22):
		// only at the answer's edges do they go with the blocks.
		{"blanks between text and blocks", []string{"…in Mars. " + weather + " In this way…"},
			`F{ F"…in Mars." TC{0  get_weather} TA0"{\"city\": \"Paris\"}" TC}0 {"city": "Paris"} F"  In this way…" F}`},
		{"text between blocks", []string{"A " + weather + " between " + weather + " after"},
			`F{ F"A" TC{0  get_weather} TA0"{\"city\": \"Paris\"}" TC}0 {"city": "Paris"} F"  between" TC{1  get_weather} TA1"{\"city\": \"Paris\"}" TC}1 {"city": "Paris"} F"  after" F}`},
		{"blanks at the answer's edges go with the blocks", []string{" \n" + weather + "\n\nDone.\n\n" + weather + "\n"},
			`TC{0  get_weather} TA0"{\"city\": \"Paris\"}" TC}0 {"city": "Paris"} F{ F"Done." TC{1  get_weather} TA1"{\"city\": \"Paris\"}" TC}1 {"city": "Paris"} F}`},
		{"blanks at the edges of a reply without blocks are its own", []string{"\n Hi \n"}, `F{ F"\n Hi \n" F}`},
		{"two calls, nothing else", []string{weather + "\n" + strings.Replace(weather, "Paris", "Rome", 1) + "\n"},
			`TC{0  get_weather} TA0"{\"city\": \"Paris\"}" TC}0 {"city": "Paris"} TC{1  get_weather} TA1"{\"city\": \"Rome\"}" TC}1 {"city": "Rome"}`},
		{"arguments as a JSON string", []string{`<tool_call>{"name":"f","arguments":"{\"a\": \"x\\ny\"}"}</tool_call>`},
			`TC{0  f} TA0"{\"a\": \"x\\ny\"}" TC}0 {"a": "x\ny"}`},
		{"arguments before the name", []string{`<tool_call>{"arguments":{"a":1},"name":"f"}</tool_call>`},
			`TC{0  f} TA0"{\"a\":1}" TC}0 {"a":1}`},
		{"no arguments", []string{`<tool_call>{"name":"f"}</tool_call>`}, `TC{0  f} TC}0 {}`},
		{"null arguments", []string{`<tool_call>{"name":"f","arguments":null}</tool_call>`}, `TC{0  f} TC}0 {}`},
		{"parameters, as Llama writes", []string{`<tool_call>{"name":"f","parameters":{"b":[1,2]}}</tool_call>`},
			`TC{0  f} TA0"{\"b\":[1,2]}" TC}0 {"b":[1,2]}`},
		{"OpenAI's function object", []string{`<tool_call>{"type":"function","function":{"name":"f","arguments":"{}"}}</tool_call>`},
			`TC{0  f} TA0"{}" TC}0 {}`},
		{"other keys ignored", []string{`<tool_call>{"id":7,"name":"f","arguments":{},"x":[{"name":"g"}]}</tool_call>`},
			`TC{0  f} TA0"{}" TC}0 {}`},
		{"a second arguments value is ignored", []string{`<tool_call>{"name":"f","arguments":{"a":1},"parameters":{"b":2}}</tool_call>`},
			`V(duplicate_key@56:a second arguments value is ignored) TC{0  f} TA0"{\"a\":1}" TC}0 {"a":1}`},
		{"the first name is the call's", []string{`<tool_call>{"name":"f","function":{"name":"g"}}</tool_call>`},
			`TC{0  f} TC}0 {}`},
		{"non-ASCII arguments byte for byte", []string{`<tool_call>{"name":"f","arguments":{"city":"Zürich","q":"\u00e9"}}</tool_call>`},
			`TC{0  f} TA0"{\"city\":\"Zürich\",\"q\":\"\\u00e9\"}" TC}0 {"city":"Zürich","q":"\u00e9"}`},
		{"closer split", []string{`<tool_call>{"name":"f"}</tool_`, `call>after`}, `TC{0  f} TC}0 {} F{ F"after" F}`},
		{"opener split", []string{"a <tool_", "call>", `{"name":"f"}</tool_call>`}, `F{ F"a" TC{0  f} TC}0 {} F}`},
		{"a held <tool_call that is text", []string{"a <tool_cal", "l x"}, `F{ F"a <tool_call x" F}`},
		{"a < before the marker", []string{`x <<tool_call>{"name":"f"}</tool_call>`}, `F{ F"x <" TC{0  f} TC}0 {} F}`},
		{"end inside the opener", []string{"hi <tool_ca"}, `F{ F"hi <tool_ca" F}`},
		{"end inside the closer: the call is kept", []string{`<tool_call>{"name":"f","arguments":{}}</tool_`},
			`V(unterminated_tool_call@0:the reply ended before the block's closing marker; its call is complete and was kept) TC{0  f} TA0"{}" TC}0 {}`},
		{"not JSON", []string{"<tool_call>not json</tool_call> ok"},
			`V(bad_tool_call@0:the tool call block is not one JSON object: expected_object) F{ F"<tool_call>not json</tool_call> ok" F}`},
		{"broken JSON after the name", []string{`<tool_call>{"name":"f","arguments":{"a":1,}}</tool_call>`},
			`V(bad_tool_call@0:the tool call block is not one JSON object: bad_json) F{ F"<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":1,}}</tool_call>" F}`},
		{"no name", []string{`say <tool_call>{"arguments":{}}</tool_call>`},
			`F{ F"say" V(bad_tool_call@4:the tool call object has no string name) F" <tool_call>{\"arguments\":{}}</tool_call>" F}`},
		{"a name that is not a string", []string{`<tool_call>{"name":7}</tool_call>`},
			`V(bad_tool_call@0:the tool call object has no string name) F{ F"<tool_call>{\"name\":7}</tool_call>" F}`},
		{"text after the object", []string{`<tool_call>{"name":"f"} oops</tool_call>`},
			`V(bad_tool_call@0:text follows the tool call object) F{ F"<tool_call>{\"name\":\"f\"} oops</tool_call>" F}`},
		{"the next block before the closer", []string{`<tool_call>{"name":"a"}<tool_call>{"name":"b"}</tool_call>`},
			`V(bad_tool_call@0:text follows the tool call object) F{ F"<tool_call>{\"name\":\"a\"}" TC{0  b} TC}0 {} F}`},
		// A block cut off by the end of the reply is text, and no call
		// (issue 22: it was a call with broken arguments, and text).
		{"cut off in the arguments", []string{`Sure. <tool_call>{"name":"f","arguments":{"a":"x`},
			`F{ F"Sure." V(unterminated_tool_call@6:the reply ended inside the tool call block) F" <tool_call>{\"name\":\"f\",\"arguments\":{\"a\":\"x" F}`},
		{"cut off before the object", []string{"<tool_call>\n"},
			`V(unterminated_tool_call@0:the reply ended inside the tool call block) F{ F"<tool_call>\n" F}`},
		{"blanks kept when the block is text", []string{"a\n\n<tool_call>x"},
			`F{ F"a" V(bad_tool_call@3:the tool call block is not one JSON object: expected_object) F"\n\n<tool_call>x" F}`},
		{"trailing blanks of a reply without blocks", []string{"a \n"}, `F{ F"a \n" F}`},
		{"utf-8 split in text", []string{"caf\xc3", "\xa9 <tool_call>{\"name\":\"f\"}</tool_call>"}, `F{ F"café" TC{0  f} TC}0 {} F}`},
		{"cut rune at the end", []string{"a\xc3"}, `F{ F"a" V(invalid_utf8@1) F"\xc3" F}`},
		{"empty", []string{""}, ``},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			transformtest.CheckCase(t, newHermes(transform.ParserOptions{}), tc.chunks, tc.want)
		})
	}
}

// TestLimits: a block is held whole up to max_block; calls are counted.
func TestLimits(t *testing.T) {
	cases := []struct {
		name  string
		opts  transform.ParserOptions
		input string
		want  string
	}{
		{"block too long, call not started", transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 24}},
			`x <tool_call>{"arguments":{"a":"long"},"name":"f"}`,
			`F{ F"x <tool_call>{\"arguments\":" F} E(block_too_long)`},
		{"block too long after the name", transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 40}},
			`<tool_call>{"name":"f","arguments":{"a":"long"}}`,
			`F{ F"<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":" F} E(block_too_long)`},
		// A call beyond max_tool_calls is text, as in aiplan.
		{"too many calls", transform.ParserOptions{Limits: transform.Limits{MaxToolCalls: 1}},
			`<tool_call>{"name":"f"}</tool_call> <tool_call>{"name":"g"}</tool_call> x`,
			`TC{0  f} TC}0 {} V(too_many_tool_calls@36:more tool calls than the limit of 1) F{ F"<tool_call>{\"name\":\"g\"}</tool_call> x" F}`},
		// A tokenizer limit breaks the block, as broken JSON does.
		{"too deep", transform.ParserOptions{Limits: transform.Limits{MaxDepth: 2}},
			`<tool_call>{"name":"f","arguments":{"a":{"b":1}}}</tool_call>`,
			`V(bad_tool_call@0:the tool call block is not one JSON object: json_too_deep) F{ F"<tool_call>{\"name\":\"f\",\"arguments\":{\"a\":{\"b\":1}}}</tool_call>" F}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			evs := transformtest.RunStrings(New(hermes, tc.opts), tc.input)
			norm, _ := transformtest.Normalize(evs)
			if got := transformtest.Format(norm); got != tc.want {
				t.Errorf("events differ:\n want %s\n  got %s", tc.want, got)
			}
			if err := transformtest.CheckStream(evs, []byte(tc.input)); err != nil {
				t.Error(err)
			}
			if err := transformtest.SplitInvariant(newHermes(tc.opts), []byte(tc.input), 1, 50); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestAnotherConvention: a convention whose block runs to the end of the
// reply, as Llama's <|python_tag|> does, is one more row.
func TestAnotherConvention(t *testing.T) {
	llama := &Convention{Name: "llama", Open: "<|python_tag|>", Body: BodyObject}
	newLlama := func() transform.Parser { return New(llama, transform.ParserOptions{}) }
	cases := []toolCase{
		{"a call to the end", []string{`<|python_tag|>{"name": "f", "parameters": {"x": 1}}` + "\n"},
			`TC{0  f} TA0"{\"x\": 1}" TC}0 {"x": 1}`},
		{"text after it", []string{`Hi <|python_tag|>{"name": "f"} and more`},
			`F{ F"Hi" V(bad_tool_call@3:text follows the tool call object) F" <|python_tag|>{\"name\": \"f\"} and more" F}`},
		{"a tag that is text", []string{"<|python", "_ta|>"}, `F{ F"<|python_ta|>" F}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			transformtest.CheckCase(t, newLlama, tc.chunks, tc.want)
		})
	}
}
