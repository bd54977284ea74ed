package agui_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agui"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// streamRun runs an upstream body, cut into chunks, through the pipeline
// of format f and the agui encoder, and returns the client's bytes.
func streamRun(t *testing.T, f format.Name, chunks [][]byte) []byte {
	t.Helper()
	p, err := pipeline.New(pipeline.Config{Format: f, Parser: transform.ParserOptions{TextTools: "hermes"}})
	if err != nil {
		t.Fatal(err)
	}
	meta := encodertest.Meta()
	meta.Request = agui.Request{ThreadID: "th", RunID: "run"}
	p.Reset(agui.New(meta), meta)
	out := p.Start(nil, "text/event-stream", "up-1")
	for _, c := range chunks {
		out = p.Feed(out, c)
	}
	return p.Close(out)
}

// assembled is what HttpAgent makes of a run: its messages in the order
// they were created (assistant text and calls, reasoning, tool results,
// activities), the CUSTOM events, and RUN_FINISHED.
type assembled struct {
	Messages []map[string]any
	Custom   []any
	Finished map[string]any
}

// assemble checks out with the agui client and assembles it as
// HttpAgent's defaultApplyEvents does.
func assemble(t *testing.T, out []byte) assembled {
	t.Helper()
	if _, err := check(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		t.Fatal(err)
	}
	var a assembled
	byID := map[string]map[string]any{}
	message := func(id, role string) map[string]any {
		if m, ok := byID[id]; ok {
			return m
		}
		m := map[string]any{"id": id, "role": role, "content": ""}
		byID[id] = m
		a.Messages = append(a.Messages, m)
		return m
	}
	calls := map[string]map[string]any{}
	for _, e := range evs {
		if e.Comment {
			continue
		}
		var ev map[string]any
		if err := json.Unmarshal([]byte(e.Data), &ev); err != nil {
			t.Fatal(err)
		}
		id, _ := ev["messageId"].(string)
		delta, _ := ev["delta"].(string)
		switch ev["type"] {
		case "TEXT_MESSAGE_START":
			message(id, "assistant")
		case "TEXT_MESSAGE_CONTENT":
			byID[id]["content"] = byID[id]["content"].(string) + delta
		case "REASONING_MESSAGE_START":
			message(id, "reasoning")["metadata"] = ev["metadata"]
		case "REASONING_MESSAGE_CONTENT":
			byID[id]["content"] = byID[id]["content"].(string) + delta
		case "TOOL_CALL_START":
			m := message(ev["parentMessageId"].(string), "assistant")
			call := map[string]any{"id": ev["toolCallId"], "name": ev["toolCallName"], "arguments": ""}
			calls[ev["toolCallId"].(string)] = call
			list, _ := m["toolCalls"].([]any)
			m["toolCalls"] = append(list, call)
		case "TOOL_CALL_ARGS":
			call := calls[ev["toolCallId"].(string)]
			call["arguments"] = call["arguments"].(string) + delta
		case "TOOL_CALL_RESULT", "ACTIVITY_SNAPSHOT":
			a.Messages = append(a.Messages, ev)
		case "CUSTOM":
			a.Custom = append(a.Custom, ev)
		case "RUN_FINISHED":
			a.Finished = ev
		}
	}
	return a
}

// TestSplitInvariance: however the upstream cut its reply into deltas and
// however those bytes arrived, the client assembles the same messages,
// CUSTOM events and RUN_FINISHED (events may be cut differently; what
// they add up to may not).
func TestSplitInvariance(t *testing.T) {
	read := func(name string) string {
		b, err := os.ReadFile("../../examples/fixtures/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tests := []struct {
		name, reasoning, reply string
		calls                  [][2]string
		format                 format.Name
		answer                 string // what the client must read, a part of it
	}{
		{name: "thinkingml_and_native_reasoning", reasoning: "先想一想：三天？", reply: read("thinkingml.txt"), format: format.Auto, answer: "# 三分化训练方案"},
		{name: "think_tags_hermes_and_native_calls", reply: "<think>Need \"data\" \\ first.</think>Let me search — 稍等。" +
			`<tool_call>{"name": "lookup", "arguments": {"q": "x"}}</tool_call> then.`,
			calls:  [][2]string{{"search", `{"q":"三分化 \"split\""}`}, {"ask_user", `{"questions":[{"question":"Why?","choices":["a","b"]}]}`}},
			format: format.Text, answer: "Let me search — 稍等。"},
		{name: "aiplan_calls", reply: read("aiplan_tools.json"), format: format.AIPlan},
		{name: "jsonl", reply: read("jsonl.txt"), format: format.JSONL},
		{name: "final_result_clarify", reply: read("final_result_clarify.json"), format: format.FinalResult},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := assemble(t, streamRun(t, tt.format, [][]byte{transformtest.SSEReply(tt.reasoning, tt.reply, tt.calls, 1<<20)}))
			if want.Finished == nil || len(want.Messages) == 0 {
				t.Fatalf("the reference reply assembled to %+v", want)
			}
			if tt.answer != "" && !strings.Contains(want.Messages[len(want.Messages)-1]["content"].(string)+want.Messages[0]["content"].(string), tt.answer) {
				t.Fatalf("the answer %q is not in %+v", tt.answer, want.Messages)
			}
			runs := 0
			for _, size := range []int{1, 2, 5, 13, 64} {
				body := transformtest.SSEReply(tt.reasoning, tt.reply, tt.calls, size)
				splits := transformtest.Splits(body, int64(size), 20)
				singles := len(splits) - 22 // whole, one byte each, 20 random
				for i, chunks := range splits {
					if i >= 1 && i <= singles && i%31 != 0 {
						continue // every 31st single split point: all of them cost O(n²)
					}
					runs++
					got := assemble(t, streamRun(t, tt.format, chunks))
					if !reflect.DeepEqual(got, want) {
						t.Fatalf("deltas of %d bytes, split %d %s: the run differs:\n got %+v\nwant %+v",
							size, i, transformtest.Describe(chunks), got, want)
					}
				}
			}
			if runs < 5*22 {
				t.Errorf("only %d splits compared", runs)
			}
		})
	}
}
