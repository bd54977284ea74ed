package format

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

type autoCase struct {
	name   string
	opts   transform.ParserOptions
	chunks []string
	want   Name
}

// tight is a block limit small enough for the cases that decide, or fail
// to, around it.
var tight = transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 32}}

// hermes reads tool calls written as text.
var hermes = transform.ParserOptions{TextTools: "hermes"}

// autoCases follow the rules of the AutoParser doc comment, in its order.
var autoCases = []autoCase{
	// '<' → thinkingml.
	{name: "lt", chunks: []string{"<think>a</think><thinking>"}, want: ThinkingML},
	{name: "lt/blanks_first", chunks: []string{" \n\t\r\n<final>x</final>"}, want: ThinkingML},
	{name: "lt/alone", chunks: []string{"<"}, want: ThinkingML},
	{name: "lt/parsing_error", chunks: []string{"<<ParsingError>>"}, want: ThinkingML},

	// '{': the first known top-level key decides.
	{name: "key/event", chunks: []string{`{"event":"thinking_start"}` + "\n" + `{"event":"thinking_end"}` + "\n"}, want: JSONL},
	{name: "key/thought", chunks: []string{`{"thought":"t","response_mode":"KNOWLEDGE_QA","direct_response":"d","tool_calls":[]}`}, want: AIPlan},
	{name: "key/response_mode", chunks: []string{`{"response_mode":"GENERAL_CHAT","direct_response":"d"}`}, want: AIPlan},
	{name: "key/direct_response", chunks: []string{`{"direct_response":"d"}`}, want: AIPlan},
	{name: "key/tool_calls", chunks: []string{`{"tool_calls":[{"name":"a","args":{}}]}`}, want: AIPlan},
	{name: "key/status", chunks: []string{`{"status":"answer_ready","message":"m"}`}, want: FinalResult},
	{name: "key/message", chunks: []string{`{"message":"m"}`}, want: FinalResult},
	{name: "key/clarify", chunks: []string{`{"clarify":{"question":"q"},"status":"clarify_needed"}`}, want: FinalResult},
	{name: "key/artifacts", chunks: []string{`{"artifacts":[],"message":"m"}`}, want: FinalResult},
	{name: "key/first_known_wins", chunks: []string{`{"status":"answer_ready","thought":"t","event":"x"}`}, want: FinalResult},
	{name: "key/unknown_skipped", chunks: []string{`{"id":7,"note":"x","thought":"t"}`}, want: AIPlan},
	{name: "key/spaced", chunks: []string{"{\n  \"thought\" : \"t\"\n}"}, want: AIPlan},
	{name: "key/split", chunks: []string{`{"ev`, `en`, `t":"final_end"}`}, want: JSONL},
	{name: "key/nested_ignored", chunks: []string{`{"data":{"event":"x","thought":"t"},"message":"m"}`}, want: FinalResult},
	{name: "key/in_array_ignored", chunks: []string{`{"x":[{"event":1},"status"],"thought":"t"}`}, want: AIPlan},
	{name: "key/value_ignored", chunks: []string{`{"x":"event","y":"\"thought\"","status":"answer_ready"}`}, want: FinalResult},
	{name: "key/escaped_key", chunks: []string{`{"\u0065vent":1,"message":"m"}`}, want: FinalResult},
	{name: "key/long_key", chunks: []string{`{"direct_response_text":1,"event":"x"}`}, want: JSONL},
	// An object with none of the keys is text, decided at its end.
	{name: "key/none", chunks: []string{`{"answer":"x","data":{"status":1}}` + " more"}, want: Text},
	{name: "key/empty_object", chunks: []string{`{}`}, want: Text},

	// Anything else → text.
	{name: "text/prose", chunks: []string{"Hello, world"}, want: Text},
	{name: "text/array", chunks: []string{`[{"thought":"t"}]`}, want: Text},
	{name: "text/string", chunks: []string{`"thought"`}, want: Text},
	{name: "text/number", chunks: []string{"42"}, want: Text},

	// A ``` fence line, with or without a language tag, before the object.
	{name: "fence/json", chunks: []string{"```json\n{\"thought\":\"t\",\"direct_response\":\"d\"}\n```"}, want: AIPlan},
	{name: "fence/upper", chunks: []string{"```JSON\n{\"status\":\"answer_ready\",\"message\":\"m\"}\n```"}, want: FinalResult},
	{name: "fence/bare", chunks: []string{"```\n{\"event\":\"thinking_start\"}\n```\n"}, want: JSONL},
	{name: "fence/jsonl_crlf", chunks: []string{"```jsonl \r\n{\"event\":\"thinking_start\"}\r\n"}, want: JSONL},
	{name: "fence/blanks_around", chunks: []string{"\n\n```json\n\n  {\"message\":\"m\"}"}, want: FinalResult},
	{name: "fence/split", chunks: []string{"`", "``js", "on\n", "{\"thought\":\"t\"}"}, want: AIPlan},
	// After a fence line the lead rules apply again, '<' included.
	{name: "fence/then_lt", chunks: []string{"```\n<final>x</final>"}, want: ThinkingML},
	{name: "fence/then_prose", chunks: []string{"```json\nnot json"}, want: Text},
	{name: "fence/two_ticks", chunks: []string{"``json\n{\"thought\":\"t\"}"}, want: Text},
	{name: "fence/code", chunks: []string{"```go\nfunc main() {}\n```"}, want: Text},
	{name: "fence/bad_tag", chunks: []string{"```json!\n{\"thought\":\"t\"}"}, want: Text},
	// A fence line is at most 32 bytes before its newline.
	{name: "fence/tag_at_limit", chunks: []string{"```" + strings.Repeat("j", 29) + "\n{\"thought\":\"t\"}"}, want: AIPlan},
	{name: "fence/tag_too_long", chunks: []string{"```" + strings.Repeat("j", 30) + "\n{\"thought\":\"t\"}"}, want: Text},
	{name: "fence/inline", chunks: []string{"```{\"thought\":\"t\"}```"}, want: Text},

	// A UTF-8 byte order mark at the very start is skipped.
	{name: "bom/lt", chunks: []string{"\ufeff<think>x</think>"}, want: ThinkingML},
	{name: "bom/object", chunks: []string{"\ufeff{\"event\":\"thinking_start\"}\n"}, want: JSONL},
	{name: "bom/split", chunks: []string{"\xef", "\xbb", "\xbf \n{\"thought\":\"t\"}"}, want: AIPlan},
	{name: "bom/fence", chunks: []string{"\ufeff```json\n{\"message\":\"m\"}"}, want: FinalResult},
	{name: "bom/after_blank", chunks: []string{" \ufeff<think>x</think>"}, want: Text},
	// The start of a mark cut short is skipped all the same; the chosen
	// parser gets its bytes.
	{name: "bom/partial", chunks: []string{"\xef\xbb<think>"}, want: ThinkingML},
	{name: "bom/partial_text", chunks: []string{"\xefx"}, want: Text},
	{name: "bom/twice", chunks: []string{"\ufeff\ufeff<think>"}, want: Text},

	// The bytes read while deciding are bounded by MaxBlockBytes: no
	// decision within that many bytes is text.
	{name: "limit/key_after", opts: tight, chunks: []string{`{"padding_padding_padding":1,"thought":"t"}`}, want: Text},
	{name: "limit/key_after_default", chunks: []string{`{"padding_padding_padding":1,"thought":"t"}`}, want: AIPlan},
	{name: "limit/key_within", opts: tight, chunks: []string{`{"padding":1,"thought":"t"}`}, want: AIPlan},
	// The quote that ends the key is byte 32, then 33, of the reply.
	{name: "limit/key_ends_at_limit", opts: tight, chunks: []string{`{"padding_padding_pad":1,"event"`}, want: JSONL},
	{name: "limit/key_ends_past_limit", opts: tight, chunks: []string{`{"padding_padding_padd":1,"event"`}, want: Text},
	{name: "limit/split", opts: tight, chunks: []string{`{"padding_p`, `adding_padding":1,`, `"thought":"t"}`}, want: Text},
	{name: "limit/blanks", opts: tight, chunks: []string{strings.Repeat(" ", 32) + "<think>x</think>"}, want: Text},
	{name: "limit/blanks_within", opts: tight, chunks: []string{strings.Repeat(" ", 31) + "<think>x</think>"}, want: ThinkingML},

	// With text_tools, a leading opening marker is text, which reads the
	// tool calls; '<' starting anything else is still thinkingml
	// (CONTRACT.md §8).
	{name: "tools/call", opts: hermes, chunks: []string{"\n<tool_call>\n{\"name\":\"f\"}\n</tool_call>"}, want: Text},
	{name: "tools/split", opts: hermes, chunks: []string{"<tool", "_cal", "l>{\"name\":\"f\"}</tool_call>"}, want: Text},
	{name: "tools/other_tag", opts: hermes, chunks: []string{"<think>x</think><final>a</final>"}, want: ThinkingML},
	{name: "tools/almost", opts: hermes, chunks: []string{"<tool_cal>"}, want: ThinkingML},
	{name: "tools/off", chunks: []string{"<tool_call>{\"name\":\"f\"}</tool_call>"}, want: ThinkingML},
	{name: "tools/json_still_json", opts: hermes, chunks: []string{`{"thought":"t"}`}, want: AIPlan},
	{name: "tools/cut_marker", opts: hermes, chunks: []string{"<tool_"}, want: Text},

	// A reply that ends undecided is text.
	{name: "close/empty", chunks: nil, want: Text},
	{name: "close/blanks", chunks: []string{" \n "}, want: Text},
	{name: "close/in_key", chunks: []string{`{"thou`}, want: Text},
	{name: "close/in_fence", chunks: []string{"```js"}, want: Text},
	{name: "close/bom", chunks: []string{"\ufeff"}, want: Text},
}

func TestAutoParser(t *testing.T) {
	for _, tc := range autoCases {
		t.Run(tc.name, func(t *testing.T) {
			checkAuto(t, tc.opts, tc.chunks, tc.want)
		})
	}
}

// checkAuto checks that the chunks are detected as want, whatever their
// split, and that the events are those of want's own parser.
func checkAuto(t *testing.T, opts transform.ParserOptions, chunks []string, want Name) {
	t.Helper()
	a := NewAuto(opts)
	evs := transformtest.RunStrings(a, chunks...)
	if got := a.Detected(); got != want {
		t.Fatalf("detected %q, want %q", got, want)
	}
	if err := transformtest.WellFormed(evs); err != nil {
		t.Error(err)
	}
	input := []byte(strings.Join(chunks, ""))
	if err := sameAsDirect(opts, want, input, evs); err != nil {
		t.Error(err)
	}
	newAuto := func() transform.Parser { return NewAuto(opts) }
	if err := transformtest.SplitInvariant(newAuto, input, 1, 30); err != nil {
		t.Error(err)
	}
	for _, split := range transformtest.Splits(input, 2, 30) {
		a := NewAuto(opts)
		transformtest.Run(a, split...)
		if got := a.Detected(); got != want {
			t.Fatalf("split %s: detected %q, want %q", transformtest.Describe(split), got, want)
		}
	}
}

// sameAsDirect checks that evs, an AutoParser's events for input, are the
// events of the detected format's own parser: detection is transparent.
func sameAsDirect(opts transform.ParserOptions, name Name, input []byte, evs []transform.Event) error {
	p, err := New(name, opts)
	if err != nil {
		return err
	}
	want, wantRaw := transformtest.Normalize(transformtest.Run(p, input))
	got, raw := transformtest.Normalize(evs)
	if ok, diff := transformtest.Equal(want, got); !ok {
		return fmt.Errorf("not the %s parser's events: %s", name, diff)
	}
	if !bytes.Equal(raw, wantRaw) {
		return fmt.Errorf("not the %s parser's raw text:\n want %q\n  got %q", name, wantRaw, raw)
	}
	return nil
}

// TestAutoLargeFirstChunk feeds replies whose first chunk is larger than
// MaxBlockBytes: a decision inside the limit hands the whole chunk to the
// chosen parser, and one past it makes the whole reply text.
func TestAutoLargeFirstChunk(t *testing.T) {
	long := strings.Repeat("训练计划 plan ", 10000) // 170 KB, over the 64 KiB default
	tests := []struct {
		name   string
		opts   transform.ParserOptions
		chunks []string
		want   Name
	}{
		{"aiplan", transform.ParserOptions{}, []string{`{"thought":"t","direct_response":"` + long + `"}`}, AIPlan},
		{"aiplan_then_more", transform.ParserOptions{}, []string{`{"thought":"t","direct_response":"` + long, long + `"}`}, AIPlan},
		{"thinkingml", transform.ParserOptions{}, []string{"<think>" + long + "</think>"}, ThinkingML},
		{"text", transform.ParserOptions{}, []string{long}, Text},
		{"key_past_limit", tight, []string{`{"x":"` + long + `","thought":"t"}`}, Text},
		{"blanks_past_limit", tight, []string{strings.Repeat("\n", 100) + "<think>x</think>"}, Text},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := NewAuto(tt.opts)
			evs := transformtest.RunStrings(a, tt.chunks...)
			if got := a.Detected(); got != tt.want {
				t.Fatalf("detected %q, want %q", got, tt.want)
			}
			input := []byte(strings.Join(tt.chunks, ""))
			if err := transformtest.WellFormed(evs); err != nil {
				t.Error(err)
			}
			if err := sameAsDirect(tt.opts, tt.want, input, evs); err != nil {
				t.Error(err)
			}
			if tt.want != ThinkingML {
				if err := transformtest.CheckStream(evs, input); err != nil {
					t.Error(err)
				}
			}
		})
	}
}

// TestAutoStreamsAfterDecision checks that once the format is known, each
// Feed's events come out at once: nothing is held any more.
func TestAutoStreamsAfterDecision(t *testing.T) {
	a := NewAuto(transform.ParserOptions{})
	var answer []string
	emit := func(ev transform.Event) {
		if ev.Kind == transform.KindAnswerDelta {
			answer = append(answer, string(ev.Text))
		}
	}
	a.Feed([]byte(`{"direct_`), emit)
	if a.Detected() != "" || len(answer) != 0 {
		t.Fatalf("decided %q, answer %q before the key ended", a.Detected(), answer)
	}
	a.Feed([]byte(`response":"ab`), emit)
	a.Feed([]byte(`cd`), emit)
	if a.Detected() != AIPlan || strings.Join(answer, "|") != "ab|cd" {
		t.Errorf("detected %q, answer %q; want aiplan, ab|cd", a.Detected(), answer)
	}
}

// TestAutoReset checks that a reset AutoParser detects the next reply
// afresh, with nothing held from the last one.
func TestAutoReset(t *testing.T) {
	a := NewAuto(transform.ParserOptions{})
	transformtest.RunStrings(a, `{"event":"thinking_start"}`+"\n")
	if a.Detected() != JSONL {
		t.Fatalf("detected %q, want jsonl", a.Detected())
	}
	a.Reset()
	if a.Detected() != "" {
		t.Errorf("detected %q after Reset", a.Detected())
	}
	a.Feed([]byte("  {\"thou"), func(transform.Event) {})
	a.Reset()
	in := "<think>x</think>"
	got := transformtest.Format(transformtest.RunStrings(a, in))
	want := transformtest.Format(transformtest.RunStrings(NewAuto(transform.ParserOptions{}), in))
	if a.Detected() != ThinkingML || got != want {
		t.Errorf("after Reset: detected %q, events %s; want thinkingml, %s", a.Detected(), got, want)
	}
}

// TestAutoSteadyStateAllocs checks that deltas fed after the decision
// allocate nothing: AutoParser only forwards them.
func TestAutoSteadyStateAllocs(t *testing.T) {
	for _, tc := range []struct {
		head, delta string
	}{
		{`{"thought":"t","direct_response":"`, `训练 \"x\" \u4f60 `},
		{"<think>x</think><thinking><phase id=\"1\"><title>T</title>", "推理 text a < b "},
		{"plain ", "训练计划 text "},
	} {
		a := NewAuto(transform.ParserOptions{})
		emit := func(transform.Event) {}
		a.Feed([]byte(tc.head), emit)
		delta := []byte(tc.delta)
		a.Feed(delta, emit) // warm up
		if allocs := testing.AllocsPerRun(100, func() { a.Feed(delta, emit) }); allocs != 0 {
			t.Errorf("%s: %v allocations per delta, want 0", a.Detected(), allocs)
		}
	}
}
