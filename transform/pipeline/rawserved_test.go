package pipeline

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// runConfigBytes streams body chunks through a pipeline for cfg.
func runConfigBytes(t *testing.T, cfg Config, chunks [][]byte) *recorder {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p.Reset(rec, transform.Meta{MessageID: "m1"})
	p.Start(nil, "text/event-stream", "up-1")
	for _, c := range chunks {
		p.Feed(nil, c)
	}
	p.Close(nil)
	return rec
}

// modelChunk is an SSE chunk delta (the JSON of choices[0].delta) from an
// upstream that reports model.
func modelChunk(model, delta string) string {
	return `{"choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}],"model":"` + model + `"}`
}

// TestRawServed covers models served raw (CONTRACT.md §8): the reasoning
// and the tool calls they write in their content, through the whole
// router, cut at every byte.
func TestRawServed(t *testing.T) {
	const sseType = "text/event-stream"
	prefilled := transform.ParserOptions{ThinkTags: transform.ThinkTagsPrefilled}
	hermes := transform.ParserOptions{TextTools: "hermes"}
	off := transform.ParserOptions{ThinkTags: transform.ThinkTagsOff}
	cases := []struct {
		name string
		cfg  Config
		body string
		want string
	}{
		{"an R1 distill under auto, known by its name", Config{Format: format.Auto},
			sseBody(modelChunk("DeepSeek-R1-Distill-Qwen-7B", `{"content":"reasoning here</th"}`),
				modelChunk("DeepSeek-R1-Distill-Qwen-7B", `{"content":"ink>\n\nThe answer."}`), "finish:stop"),
			`R{ R"reasoning here" R} F{ F"The answer." F} FIN(stop)`},
		{"the same reply from another model under auto is text", Config{Format: format.Auto},
			sseBody(`{"content":"reasoning here</think>\n\nThe answer."}`, "finish:stop"),
			`F{ F"reasoning here</think>\n\nThe answer." F} FIN(stop)`},
		{"prefilled, format text", Config{Format: format.Text, Parser: prefilled},
			sseBody(`{"content":"reasoning here</think>\n\nThe answer."}`, "finish:stop"),
			`R{ R"reasoning here" R} F{ F"The answer." F} FIN(stop)`},
		{"prefilled, format thinkingml (TM08)", Config{Format: format.ThinkingML, Parser: prefilled},
			sseBody(`{"content":"reasoning here</think>\n\n<final>The answer.</final>"}`, "finish:stop"),
			`R{ R"reasoning here" R} V(missing_thinking@24) V(missing_phase@24) F{ F"The answer." V(missing_serp_queries@42) F} FIN(stop)`},
		{"auto detects what follows the reasoning", Config{Format: format.Auto},
			sseBody(`{"content":"<think>plan</think>\n\n{\"status\":\"answer_ready\",\"message\":\"Hi\"}"}`, "finish:stop"),
			`R{ R"plan" R} F{ F"Hi" F} FIN(stop)`},
		{"prefilled, never closed", Config{Format: format.Text, Parser: prefilled},
			sseBody(`{"content":"Paris is the capital."}`, "finish:stop"),
			`R{ R"Paris is the capital." R} V(think_unclosed@21:the reply never closed its reasoning with </think>: it is repeated as the answer) F{ F"Paris is the capital." F} FIN(stop)`},
		{"prefilled, with native reasoning first", Config{Format: format.Text, Parser: prefilled},
			sseBody(`{"reasoning_content":"r"}`, `{"content":"The answer."}`, "finish:stop"),
			`R{ R"r" R} F{ F"The answer." F} FIN(stop)`},
		// Issue 22: Qwen3.5's template opens <think>; and a route adds a
		// family the table lacks (think_prefilled).
		{"auto knows Qwen3.5", Config{Format: format.Text},
			sseBody(modelChunk("Qwen/Qwen3.5-35B-A3B", `{"content":"reasoning</think>answer"}`), "finish:stop"),
			`R{ R"reasoning" R} F{ F"answer" F} FIN(stop)`},
		{"a route's think_prefilled pattern", Config{Format: format.Text, Parser: transform.ParserOptions{ThinkPrefilled: []*regexp.Regexp{regexp.MustCompile("(?i)acme-r[0-9]")}}},
			sseBody(modelChunk("ACME-R2-70B", `{"content":"reasoning</think>answer"}`), "finish:stop"),
			`R{ R"reasoning" R} F{ F"answer" F} FIN(stop)`},
		{"off leaves the tags", Config{Format: format.Text, Parser: off},
			sseBody(`{"content":"<think>x</think>y"}`, "finish:stop"),
			`F{ F"<think>x</think>y" F} FIN(stop)`},
		{"hermes tool call", Config{Format: format.Text, Parser: hermes},
			sseBody(`{"content":"<tool_call>\n{\"name\": \"get_weather\", "}`, `{"content":"\"arguments\": {\"city\": \"Paris\"}}\n</tool_call>"}`, "finish:stop"),
			`TC{0 call_m1_0 get_weather} TA0"{\"city\": \"Paris\"}" TC}0 {"city": "Paris"} FIN(tool_calls)`},
		{"hermes under auto, after reasoning", Config{Format: format.Auto, Parser: hermes},
			sseBody(modelChunk("Qwen/Qwen3-30B-A3B-Thinking-2507", `{"content":"I should call it.</think>\n\n<tool_call>{\"name\":\"f\",\"arguments\":\"{}\"}</tool_call>"}`), "finish:stop"),
			`R{ R"I should call it." R} TC{0 call_m1_0 f} TA0"{}" TC}0 {} FIN(tool_calls)`},
		{"hermes and native calls share one index space", Config{Format: format.Text, Parser: hermes},
			sseBody(`{"tool_calls":[{"index":0,"id":"n1","type":"function","function":{"name":"native","arguments":"{}"}}]}`,
				`{"content":"ok <tool_call>{\"name\":\"g\"}</tool_call>"}`, "finish:tool_calls"),
			`TC{0 n1 native} TA0"{}" F{ F"ok" TC{1 call_m1_1 g} TC}1 {} TC}0 {} F} FIN(tool_calls)`},
		{"a broken block is text", Config{Format: format.Text, Parser: hermes},
			sseBody(`{"content":"<tool_call>get_weather(Paris)</tool_call>"}`, "finish:stop"),
			`V(bad_tool_call@0:the tool call block is not one JSON object: expected_object) F{ F"<tool_call>get_weather(Paris)</tool_call>" F} FIN(stop)`},
		// Issue 22: a block cut off is text and no call, so that the
		// finish stays length and no client runs a half call.
		{"length cuts a block", Config{Format: format.Text, Parser: hermes},
			sseBody(`{"content":"<tool_call>{\"name\":\"f\",\"arguments\":{\"a\""}`, "finish:length"),
			`V(unterminated_tool_call@0:the reply ended inside the tool call block) F{ F"<tool_call>{\"name\":\"f\",\"arguments\":{\"a\"" F} FIN(length)`},
		{"stop cuts a block", Config{Format: format.Text, Parser: hermes},
			sseBody(`{"content":"Let me check. <tool_call>{\"name\":\"f\",\"arguments\":{\"ci"}`, "finish:stop"),
			`F{ F"Let me check." V(unterminated_tool_call@14:the reply ended inside the tool call block) F" <tool_call>{\"name\":\"f\",\"arguments\":{\"ci" F} FIN(stop)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := runConfig(t, tc.cfg, sseType, tc.body)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			body := []byte(tc.body)
			for i := 1; i < len(body); i++ {
				if cut := runConfig(t, tc.cfg, sseType, string(body[:i]), string(body[i:])); cut != got {
					t.Fatalf("cut at %d:\n got %s\nwant %s", i, cut, got)
				}
			}
		})
	}
}

// TestRawServedSummary: the summary names the format auto found after the
// reasoning.
func TestRawServedSummary(t *testing.T) {
	p, _ := New(Config{Format: format.Auto})
	p.Reset(&recorder{}, transform.Meta{MessageID: "m1"})
	p.Start(nil, "text/event-stream", "")
	p.Feed(nil, []byte(sseBody(`{"content":"<think>r</think>"}`, `{"content":"<final>a</final>"}`, "finish:stop")))
	p.Close(nil)
	if got := p.Summary().Format; got != string(format.ThinkingML) {
		t.Errorf("summary format %q", got)
	}
}

// TestRawServedEveryProtocol: a Hermes call and R1 reasoning in the wire
// format of every protocol (CONTRACT.md §8: "in every protocol"), each in
// the place that protocol has for them, as its client reads them
// (wiretest): the reasoning where the protocol shows it, the answer, and
// the call in its own shape, finishing as a tool call; a raw-reply
// protocol's answer is the reply as the model wrote it.
func TestRawServedEveryProtocol(t *testing.T) {
	const (
		reasoning = "think first"
		answer    = "Sure."
		call      = `<tool_call>{"name": "ask_user", "arguments": {"questions": [{"id": "q1", "prompt": "Which city?", "options": ["Paris", "Rome"]}]}}</tool_call>`
		reply     = reasoning + "</think>\n\n" + answer + " " + call
	)
	content, _ := json.Marshal(map[string]string{"content": reply})
	body := sseBody(modelChunk("deepseek-r1", string(content)), "finish:stop")
	for _, row := range protocol.Protocols() {
		t.Run(row.Name, func(t *testing.T) {
			c, err := wiretest.For(row.Name)
			if err != nil {
				t.Fatal(err)
			}
			p, err := New(Config{Format: format.Auto, Parser: transform.ParserOptions{TextTools: "hermes"}})
			if err != nil {
				t.Fatal(err)
			}
			meta := transform.Meta{MessageID: "m1", RequestID: "r1", Stream: true}
			p.Reset(row.NewEncoder(meta), meta)
			out := p.Begin(nil)
			out = p.Start(out, "text/event-stream", "")
			out = p.Feed(out, []byte(body))
			out = p.Close(out)
			seen, err := c.Read(out, meta)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			found := wiretest.Found{Reasoning: []string{reasoning}, Native: []string{reasoning}}
			if err := c.CheckReasoning(seen, found); err != nil {
				t.Errorf("%v\n%s", err, out)
			}
			wantAnswer, wantCalls := answer, []string{"ask_user"}
			if c.RawAnswer {
				wantAnswer, wantCalls = reply, nil
			}
			if seen.Answer != wantAnswer || !slices.Equal(seen.ToolCalls, wantCalls) || !seen.ToolUse {
				t.Errorf("answer %q, tool calls %q, tool use %v; want %q, %q, true\n%s",
					seen.Answer, seen.ToolCalls, seen.ToolUse, wantAnswer, wantCalls, out)
			}
			if !c.RawAnswer && strings.Contains(string(out), "tool_call>") {
				t.Errorf("%s shows the <tool_call> markup:\n%s", row.Name, out)
			}
		})
	}
}
