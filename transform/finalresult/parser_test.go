package finalresult

import (
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

// ready is the status field of an answer.
const ready = `{"status":"answer_ready",`

// cases are the JO cases of PARSING.md §4.2 as the final_result format
// meets them, and the checks of specs/004 §7.3.1 rules 1–2. Where
// PARSING.md offers strict E or lenient W, final_result is lenient, except
// JO04: a reply that does not start with an object is prose (strict).
var cases = []parseCase{
	{name: "valid/answer_ready", chunks: []string{`{"status":"answer_ready","message":"hi"}`},
		want: `F{ F"hi" F}`},
	{name: "JO01", chunks: []string{"``", "`json\n" + ready + "\"message\":\"a", "b\"}\n``", "`"},
		want: `F{ F"ab" F}`},
	{name: "JO02", chunks: []string{"\n\n```json\n" + ready + "\"message\":\"ab\"}\n```\n"},
		want: `F{ F"ab" F}`},
	{name: "JO03", chunks: []string{"```\n" + ready + "\"message\":\"a\"}```"},
		want: `F{ F"a" F}`},
	// JO04, strict: the reply is not an object, so it is the answer, as
	// written; "{note}" is never parsed.
	{name: "JO04", chunks: []string{"Here is {note}: {\"status\":\"ok\"}"},
		want: `V(not_json_object@0:the reply is not a JSON object) F{ F"Here is {note}: {\"status\":\"ok\"}" F}`},
	{name: "JO05", chunks: []string{ready + "\"message\":\"line1\\", "nline2\"}"},
		want: `F{ F"line1\nline2" F}`},
	{name: "JO06", chunks: []string{ready + "\"message\":\"caf\\u00", "e9\"}"},
		want: `F{ F"café" F}`},
	{name: "JO08", chunks: []string{ready + "\"message\":\"\\ud83dx\"}"},
		want: `F{ V(lone_surrogate@36:lone UTF-16 surrogate in a \u escape) F"�x" F}`},
	{name: "JO09", chunks: []string{ready + "\"message\":\"use App\\Http\"}"},
		want: `F{ F"use App" V(invalid_escape@43:invalid escape in a string) F"\\Http" F}`},
	{name: "JO10", chunks: []string{ready + "\"message\":\"a\nb\"}"},
		want: `F{ F"a" V(control_char@37:raw control byte in a string) F"\nb" F}`},
	{name: "JO11", chunks: []string{ready + "\"message\":\"\xe4\xbd", "\xa0\"}"},
		want: `F{ F"你" F}`},
	{name: "JO13", chunks: []string{ready + "\"message\":\"m\",\"ok\":tr", "ue}"},
		want: `F{ F"m" F}`},
	{name: "JO13/trux", chunks: []string{ready + "\"message\":\"m\",\"ok\":trux}"},
		want: `F{ F"m" F} V(bad_literal@47:misspelt true, false or null) F{ F"x}" F}`},
	{name: "JO14", chunks: []string{ready + "\"mess", "age\":\"hi\"}"},
		want: `F{ F"hi" F}`},
	// JO18: clarify and artifacts are held and sent whole.
	{name: "JO18", chunks: []string{`{"status":"clarify_needed","message":"Which class?","clarify":{"question":"Which class?","options":["a","b"],"hint":"needClassId"},"artifacts":[{"type":"code","content":"x"}]}`},
		want: `F{ F"Which class?" F} A[{"type":"code","content":"x"}] C{"Which class?" ["a","b"] "needClassId"}`},
	// JO19: append-only; the second message continues the answer in a
	// second answer section.
	{name: "JO19", chunks: []string{ready + `"message":"a","message":"b"}`},
		want: `F{ F"a" F} V(duplicate_key@39:message) F{ F"b" F}`},
	{name: "JO20", chunks: []string{ready + "\"message\":\"a\"}\n```\nHope this helps!"},
		want: `F{ F"a" F} V(trailing_text@44:text after the JSON object) F{ F"Hope this helps!" F}`},
	{name: "JO21/array", chunks: []string{`[1, 2]`},
		want: `V(not_json_object@0:the reply is not a JSON object) F{ F"[1, 2]" F}`},
	{name: "JO21/string", chunks: []string{"```json\n\"str\"\n```"},
		want: `V(not_json_object@0:the reply is not a JSON object) F{ F"` + "```json\\n\\\"str\\\"\\n```" + `" F}`},
	{name: "JO21/empty", chunks: []string{"  "},
		want: `V(not_json_object@2:the reply holds no JSON object)`},
	{name: "JO22", chunks: []string{ready + `"message":""}`},
		want: `F{ F}`},
	{name: "JO23", chunks: []string{ready + `"message":"m","x":` + strings.Repeat("[", 10000)},
		want: `F{ F"m" F} V(json_too_deep@106:JSON nested deeper than the depth limit) F{ F"` + strings.Repeat("[", 10000-transform.DefaultMaxDepth+1) + `" F}`},
	{name: "JO25", chunks: []string{"\xef\xbb\xbf\r\n " + ready + `"message":"m"}`},
		want: `F{ F"m" F}`},
	{name: "JO26", chunks: []string{`{"message":"hel`},
		want: `F{ F"hel" V(unterminated_json@15:the reply ended inside the JSON object) F}`},
	{name: "clarify_before_status", chunks: []string{`{"clarify":{"question":"Q?","options":null},"message":"m","status":"clarify_needed"}`},
		want: `F{ F"m" F} C{"Q?" [] ""}`},
	{name: "clarify_not_needed", chunks: []string{ready + `"message":"m","clarify":{"question":"Q?"}}`},
		want: `F{ F"m" F}`},
	{name: "rule2/no_clarify", chunks: []string{`{"status":"clarify_needed","message":"m"}`},
		want: `F{ F"m" F} V(clarify_without_question@40)`},
	{name: "rule2/empty_question", chunks: []string{`{"status":"clarify_needed","message":"m","clarify":{"question":""}}`},
		want: `F{ F"m" F} V(clarify_without_question@66)`},
	{name: "rule2/null_clarify", chunks: []string{`{"status":"clarify_needed","message":"m","clarify":null}`},
		want: `F{ F"m" F} V(clarify_without_question@55)`},
	{name: "rule1/no_artifacts", chunks: []string{`{"status":"artifact_ready","message":"m"}`},
		want: `F{ F"m" F} V(artifact_ready_without_artifacts@40)`},
	{name: "rule1/empty_artifacts", chunks: []string{`{"status":"artifact_ready","message":"m","artifacts":[ ]}`},
		want: `F{ F"m" F} V(artifact_ready_without_artifacts@56)`},
	{name: "rule1/artifacts", chunks: []string{`{"status":"artifact_ready","message":"m","artifacts":["file-ready:pptx", "data-quiz-complete"]}`},
		want: `F{ F"m" F} A["file-ready:pptx", "data-quiz-complete"]`},
	{name: "bad_status", chunks: []string{`{"status":"done","message":"m"}`},
		want: `F{ F"m" F} V(bad_status@30:done)`},
	{name: "missing_fields", chunks: []string{`{}`},
		want: `V(missing_field@1:status) V(missing_field@1:message)`},
	{name: "wrong_types", chunks: []string{`{"status":1,"message":{"a":"b"},"artifacts":"x","clarify":[]}`},
		want: `V(wrong_type@10:status) F{ F"{\"a\":\"b\"}" F} V(wrong_type@30:message) V(wrong_type@46:artifacts) V(wrong_type@59:clarify)`},
	{name: "artifacts_too_long", opts: transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 8}}, chunks: []string{ready + `"message":"m","artifacts":["0123456789"]}`},
		want: `F{ F"m" F} E(block_too_long)`},
	{name: "clarify_too_long", opts: transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 8}}, chunks: []string{`{"status":"clarify_needed","clarify":{"question":"01234","options":["5678"]}}`},
		want: `E(block_too_long)`},
	{name: "bad_json_closes_answer", chunks: []string{ready + `"message":"ab" "x"}`},
		want: `F{ F"ab" F} V(bad_json@40:expected ',' or '}' after an object member) F{ F"\"x\"}" F}`},
	// Issue 9: nothing the model wrote vanishes (CONTRACT.md §7). A fence
	// that wraps no object is the model's text, verbatim.
	{name: "lose_nothing/fence_then_prose", chunks: []string{"``` x"},
		want: `V(not_json_object@0:the reply holds no JSON object) F{ F"` + "``` x" + `" F}`},
	{name: "lose_nothing/fence_then_quote", chunks: []string{"```\"évent\"ÏÏ"},
		want: `V(not_json_object@0:the reply holds no JSON object) F{ F"` + "```\\\"évent\\\"ÏÏ" + `" F}`},
	{name: "lose_nothing/fence_then_code", chunks: []string{"```python\nprint(1)\n```\n"},
		want: `V(not_json_object@0:the reply is not a JSON object) F{ F"` + "```python\\nprint(1)\\n```\\n" + `" F}`},
	{name: "lose_nothing/broken_bom_rune", chunks: []string{"\ufffd"},
		want: `V(not_json_object@0:the reply is not a JSON object) F{ F"�" F}`},
	// A value of the wrong type in a field the user sees arrives as its
	// JSON text, reported, as jsonl's and aiplan's do.
	{name: "wrong_type/message_number", chunks: []string{ready + `"message": 42}`},
		want: `F{ F"42" F} V(wrong_type@37:message)`},
	{name: "wrong_type/message_null", chunks: []string{ready + `"message":null}`},
		want: ``},
	{name: "wrong_type/clarify", chunks: []string{`{"status":"clarify_needed","message":"m","clarify":{"question":7,"options":["a",2,null,{"b":1}],"hint":true}}`},
		want: `F{ F"m" F} V(wrong_type@63:clarify.question) V(wrong_type@80:clarify.options[]) V(wrong_type@93:clarify.options[]) V(wrong_type@106:clarify.hint) C{"7" ["a","2","{\"b\":1}"] "true"}`},
	{name: "wrong_type/clarify_string", chunks: []string{`{"status":"clarify_needed","message":"m","clarify":"Which city?"}`},
		want: `F{ F"m" F} V(wrong_type@63:clarify) C{"Which city?" [] ""}`},
	// max_key and max_depth end the reading, not the stream: the rest of
	// the reply is answer text, verbatim.
	// Empty options cost their place too: max_block bounds a list of
	// them (16 bytes each here, over a 64-byte block).
	{name: "limit/empty_options", opts: transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64}}, chunks: []string{`{"status":"clarify_needed","message":"m","clarify":{"question":"q","options":["","","","","",""]}}`},
		want: `F{ F"m" F} E(block_too_long)`},
	// The object breaks after its clarify question: the question is the
	// model's text and arrives as the answer's last paragraph.
	{name: "broken_after_clarify", chunks: []string{`{"status":"clarify_needed","message":"m","clarify":{"question":"Which city?"} oops`},
		want: `F{ F"m" F} V(bad_json@78:expected ',' or '}' after an object member) F{ F"\n\nWhich city?" F} F{ F"oops" F}`},
	{name: "unterminated_after_clarify", chunks: []string{`{"status":"clarify_needed","clarify":{"question":"Which city?"}`},
		want: `V(unterminated_json@63:the reply ended inside the JSON object) F{ F"Which city?" F}`},
	// A key over the limit inside a message delivered as written: the
	// key's start went out with the message's text, the rest follows as
	// text, nothing twice.
	{name: "limit/key_too_long_in_raw_value", opts: transform.ParserOptions{Limits: transform.Limits{MaxKeyBytes: 8}}, chunks: []string{ready + `"message":{"abcdefghij":1}}`},
		want: `F{ F"{\"abcdefgh" V(key_too_long@45:JSON object key longer than the key limit) F} F{ F"ij\":1}}" F}`},
	{name: "limit/key_too_long", opts: transform.ParserOptions{Limits: transform.Limits{MaxKeyBytes: 8}}, chunks: []string{ready + `"message":"m","far_too_long":1}`},
		want: `F{ F"m" F} V(key_too_long@39:JSON object key longer than the key limit) F{ F"\"far_too_long\":1}" F}`},
	{name: "prose_runes_split", chunks: []string{"你", "\xe5\xa5", "\xbd"},
		want: `V(not_json_object@0:the reply is not a JSON object) F{ F"你好" F}`},
}

func TestParser(t *testing.T) {
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			newP := func() transform.Parser { return New(tc.opts) }
			transformtest.CheckCase(t, newP, tc.chunks, tc.want)
		})
	}
}

// TestStreams checks that the message is emitted as it arrives, before
// the object ends (specs/004 §7.3.3).
func TestStreams(t *testing.T) {
	p := New(transform.ParserOptions{})
	var got []string
	emit := func(ev transform.Event) {
		if ev.Kind == transform.KindAnswerDelta {
			got = append(got, string(ev.Text))
		}
	}
	p.Feed([]byte(`{"message":"ab`), emit)
	p.Feed([]byte(`cd`), emit)
	if s := strings.Join(got, "|"); s != "ab|cd" {
		t.Errorf("message before the object ended: %q, want ab|cd", s)
	}
}

// TestGolden parses each testdata/*.txt reply and compares its events, one
// token a line, with the .golden file beside it (-update rewrites them).
// Every fixture must also be split-invariant and well-formed.
func TestGolden(t *testing.T) {
	transformtest.Golden(t, "testdata/*.txt", newParser, *update)
}

// TestReset checks that a reset parser parses like a new one.
func TestReset(t *testing.T) {
	in := []byte(`{"status":"clarify_needed","message":"m","clarify":{"question":"Q","options":["a"]}}`)
	p := New(transform.ParserOptions{})
	transformtest.Run(p, []byte(`{"status":"clarify_needed","clarify":{"question":"old","options":["x","y"]},"artifacts":[1`))
	p.Reset()
	got := transformtest.Format(transformtest.Run(p, in))
	want := transformtest.Format(transformtest.Run(newParser(), in))
	if got != want {
		t.Errorf("after Reset: %s\nnew parser: %s", got, want)
	}
}
