package aiplan

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
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
	// JO04, lenient: the prose is skipped (it stays in the raw reply),
	// "{note}" is not taken for the object.
	{name: "JO04", chunks: []string{"Here is {note}: {\"thought\":\"a\",\"direct_response\":\"d\"" + qaTail},
		want: `V(leading_text@0) TH{ P{1 "Thought"} P1"a" P1} TH} F{ F"d" F}`},
	{name: "JO05", chunks: []string{"{\"thought\":\"t\",\"direct_response\":\"line1\\", "nline2\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"line1\nline2" F}`},
	{name: "JO06", chunks: []string{"{\"thought\":\"t\",\"direct_response\":\"caf\\u00", "e9\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"café" F}`},
	{name: "JO08", chunks: []string{"{\"thought\":\"t\",\"direct_response\":\"\\ud83dx\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(lone_surrogate@34) F{ F"�x" F}`},
	{name: "JO09", chunks: []string{"{\"thought\":\"use App\\Http\",\"direct_response\":\"d\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"use App" V(invalid_escape@19) P1"\\Http" P1} TH} F{ F"d" F}`},
	{name: "JO10", chunks: []string{"{\"thought\":\"a\nb\",\"direct_response\":\"d\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"a" V(control_char@13) P1"\nb" P1} TH} F{ F"d" F}`},
	{name: "JO11", chunks: []string{"{\"thought\":\"t\",\"direct_response\":\"\xe4\xbd", "\xa0\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"你" F}`},
	{name: "JO13", chunks: []string{"{\"thought\":\"t\",\"direct_response\":nu", "ll,\"response_mode\":\"TOOL_EXECUTION\",\"tool_calls\":[{\"name\":\"a\"}]}"},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TC}0 {}`},
	{name: "JO13/bad_literal", chunks: []string{`{"thought":"t","direct_response":nul1}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(bad_literal@36) ` + fb},
	{name: "JO14", chunks: []string{"{\"thought\":\"t\",\"dire", "ct_response\":\"hi\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"hi" F}`},
	{name: "JO15", chunks: []string{`{"thought":"t","response_mode":"GENERAL_CHAT","direct_response":"hi","tool_calls":[]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"hi" F}`},
	// JO16: direct_response before response_mode still streams; the mode is
	// checked at the end.
	{name: "JO16", chunks: []string{`{"direct_response":"hi","thought":"t","tool_calls":[],"response_mode":"TOOL_EXECUTION"}`},
		want: `F{ F"hi" F} TH{ P{1 "Thought"} P1"t" P1} TH} V(inconsistent_mode@86) V(inconsistent_mode@86)`},
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
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TA0"{\"x\":1}" V(duplicate_key@124) TC}0 {"x":1}`},
	{name: "JO17/no_name", chunks: []string{toolHead + `{"args":{"x":1}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@100) TC{0  } TA0"{\"x\":1}" TC}0 {"x":1}`},
	{name: "JO17/not_object", chunks: []string{toolHead + `"search"]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(wrong_type@92) V(inconsistent_mode@94) ` + fb},
	// JO19: append-only; the second direct_response continues the answer in
	// a second answer section.
	{name: "JO19", chunks: []string{`{"thought":"t","direct_response":"a","direct_response":"b"` + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"a" F} V(duplicate_key@37) F{ F"b" F}`},
	{name: "JO20", chunks: []string{"```json\n{\"thought\":\"t\",\"direct_response\":\"d\"" + qaTail + "\n```\nHope this helps!"},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} V(trailing_text@97)`},
	// JO21, lenient: "[" is prose before the object, which is parsed; the
	// "]" after it is trailing text.
	{name: "JO21/array", chunks: []string{`[{"thought":"t"}]`},
		want: `V(leading_text@0) TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@15) V(missing_field@15) V(missing_field@15) F{ F"抱歉，我的响应格式有问题，请重新尝试您的请求。" F} V(trailing_text@16)`},
	{name: "JO21/number", chunks: []string{`42`},
		want: `V(not_json_object@0) ` + fb},
	{name: "JO21/prose", chunks: []string{"I cannot answer in JSON."},
		want: `V(not_json_object@0) ` + fb},
	{name: "JO21/empty", chunks: []string{""},
		want: `V(not_json_object@0) ` + fb},
	{name: "JO22", chunks: []string{`{"thought":"t","direct_response":""` + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(inconsistent_mode@82) ` + fb},
	{name: "JO23", chunks: []string{`{"thought":"t","direct_response":"d","x":` + strings.Repeat("[", 10000)},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} E(json_too_deep)`},
	{name: "JO25", chunks: []string{"\xef\xbb\xbf \n{\"thought\":\"t\",\"direct_response\":\"d\"" + qaTail},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F}`},
	{name: "JO26", chunks: []string{`{"thought":"t","direct_response":"hel`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"hel" V(unterminated_json@37) F}`},
	{name: "JO26/in_thought", chunks: []string{`{"thought":"hmm`},
		want: `TH{ P{1 "Thought"} P1"hmm" V(unterminated_json@15) P1} TH} ` + fb},
	{name: "JO26/in_args", chunks: []string{toolHead + `{"name":"a","args":{"q":"x`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TA0"{\"q\":\"x" V(unterminated_json@111) TC}0 {"q":"x ` + fb},
	{name: "JO26/before_name", chunks: []string{toolHead + `{"args":{"q":"x"}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(unterminated_json@102) ` + fb},
	{name: "missing_fields", chunks: []string{`{"thought":"t"}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} V(missing_field@14) V(missing_field@14) V(missing_field@14) ` + fb},
	{name: "empty_thought", chunks: []string{`{"thought":"","direct_response":"d"` + qaTail},
		want: `F{ F"d" F} V(empty_thought@82)`},
	{name: "bad_response_mode", chunks: []string{`{"thought":"t","response_mode":"direct","direct_response":"d","tool_calls":[]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} V(bad_response_mode@77)`},
	{name: "tool_execution_with_answer", chunks: []string{`{"thought":"t","response_mode":"TOOL_EXECUTION","direct_response":"d","tool_calls":[{"name":"a"}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} TC{0  a} TC}0 {} V(inconsistent_mode@97)`},
	{name: "qa_with_tool_calls", chunks: []string{`{"thought":"t","direct_response":"d","response_mode":"GENERAL_CHAT","tool_calls":[{"name":"a"}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} F{ F"d" F} TC{0  a} TC}0 {} V(inconsistent_mode@95)`},
	{name: "wrong_types", chunks: []string{`{"thought":1,"response_mode":2,"direct_response":{"a":1},"tool_calls":{}}`},
		want: `V(wrong_type@11) V(wrong_type@29) V(wrong_type@55) V(wrong_type@71) ` + fb},
	{name: "fallback_text", opts: transform.ParserOptions{FallbackText: "Sorry."}, chunks: []string{"nope"},
		want: `V(not_json_object@0) F{ F"Sorry." F}`},
	{name: "too_many_tool_calls", opts: transform.ParserOptions{Limits: transform.Limits{MaxToolCalls: 1}}, chunks: []string{toolHead + `{"name":"a"},{"name":"b"}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TC}0 {} E(too_many_tool_calls)`},
	{name: "args_too_long", opts: transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 8}}, chunks: []string{toolHead + `{"name":"a","args":{"q":"0123456789"}}]}`},
		want: `TH{ P{1 "Thought"} P1"t" P1} TH} TC{0  a} TA0"{\"q\":\"01" E(block_too_long)`},
}

func TestParser(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			newP := func() transform.Parser { return New(tc.opts) }
			evs := transformtest.RunStrings(newP(), tc.chunks...)
			norm, raw := transformtest.Normalize(evs)
			if got := transformtest.Format(norm); got != tc.want {
				t.Errorf("events differ:\n want %s\n  got %s", tc.want, got)
			}
			input := []byte(strings.Join(tc.chunks, ""))
			checkStream(t, evs, raw, input)
			if err := splitInvariant(newP, input, 1, 50); err != nil {
				t.Error(err)
			}
		})
	}
}

// checkStream checks the promises every stream keeps: well-formed events,
// and the raw text equal to the input (a prefix of it after a fatal error).
func checkStream(t *testing.T, evs []transform.Event, raw, input []byte) {
	t.Helper()
	if err := transformtest.WellFormed(evs); err != nil {
		t.Error(err)
	}
	failed := len(evs) > 0 && evs[len(evs)-1].Kind == transform.KindError
	if !bytes.Equal(raw, input) && !(failed && bytes.HasPrefix(input, raw)) {
		t.Errorf("raw text %q, input %q", raw, input)
	}
}

// splitInvariant is transformtest.SplitInvariant, except for a reply that
// ends in a fatal error: a parser ignores the input after one, and where a
// limit trips depends on how the text was cut, so only the events are
// compared, and each split's raw text must be a prefix of the input.
func splitInvariant(newP func() transform.Parser, input []byte, seed int64, random int) error {
	evs := transformtest.Run(newP(), input)
	if n := len(evs); n == 0 || evs[n-1].Kind != transform.KindError {
		return transformtest.SplitInvariant(newP, input, seed, random)
	}
	whole, _ := transformtest.Normalize(evs)
	for _, chunks := range transformtest.Splits(input, seed, random) {
		got, raw := transformtest.Normalize(transformtest.Run(newP(), chunks...))
		if ok, diff := transformtest.Equal(whole, got); !ok {
			return fmt.Errorf("split into %d chunks: %s", len(chunks), diff)
		}
		if !bytes.HasPrefix(input, raw) {
			return fmt.Errorf("split into %d chunks: raw text %q is not a prefix of the input", len(chunks), raw)
		}
	}
	return nil
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
		feedAll(p, in, 1, func(ev transform.Event) {
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
	files, err := filepath.Glob("testdata/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			input, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			evs := transformtest.Run(newParser(), input)
			norm, raw := transformtest.Normalize(evs)
			checkStream(t, evs, raw, input)
			var b strings.Builder
			for _, ev := range norm {
				b.WriteString(transformtest.Token(ev) + "\n")
			}
			golden := strings.TrimSuffix(name, ".txt") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if b.String() != string(want) {
				t.Errorf("events differ from %s:\n%s", golden, b.String())
			}
			if err := splitInvariant(newParser, input, 7, 50); err != nil {
				t.Error(err)
			}
		})
	}
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
