package aisdk_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/aisdk"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// checkStream checks a UI message stream the way ai@6 reads it: data lines
// only (and keep-alive comments), every chunk valid against the schema
// extract, start first, deltas and ends only for open parts of that id
// (processUIMessageStream throws otherwise), ids unique, at most one text
// or reasoning part open at a time and none at the terminal chunk, and
// [DONE] right after the terminal chunk, last.
func checkStream(out []byte) error {
	schema, err := loadSchema()
	if err != nil {
		return err
	}
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return err
	}
	openText, openReasoning := "", ""
	seen := map[string]bool{}
	tools := map[string]bool{}
	inputs, outputs := map[string]bool{}, map[string]bool{}
	terminal, done := -1, -1
	for i, e := range evs {
		if e.Comment {
			if e.Data != "" {
				return fmt.Errorf("comment with data")
			}
			continue
		}
		if e.Name != "" {
			return fmt.Errorf("event %d has an event: line; the SDK reads data only", i)
		}
		if done >= 0 {
			return fmt.Errorf("chunk %d after [DONE]", i)
		}
		if e.Data == "[DONE]" {
			if terminal != i-1 {
				return fmt.Errorf("[DONE] does not follow finish or error")
			}
			done = i
			continue
		}
		if terminal >= 0 {
			return fmt.Errorf("chunk %d after the terminal chunk: %s", i, e.Data)
		}
		m, err := e.DecodeData()
		if err != nil {
			return err
		}
		if err := validateChunk(schema, m); err != nil {
			return fmt.Errorf("chunk %d: %v", i, err)
		}
		typ := m["type"].(string)
		if (i == 0) != (typ == "start") {
			return fmt.Errorf("chunk %d is %s; start comes first and once", i, typ)
		}
		id, _ := m["id"].(string)
		switch typ {
		case "text-start", "reasoning-start":
			if openText != "" || openReasoning != "" {
				return fmt.Errorf("%s while a part is open", typ)
			}
			if seen[typ+id] {
				return fmt.Errorf("%s id %s reused", typ, id)
			}
			seen[typ+id] = true
			if typ == "text-start" {
				openText = id
			} else {
				openReasoning = id
			}
		case "text-delta", "text-end":
			if id != openText || id == "" {
				return fmt.Errorf("%s for text part %q, open %q", typ, id, openText)
			}
			if typ == "text-end" {
				openText = ""
			}
		case "reasoning-delta", "reasoning-end":
			if id != openReasoning || id == "" {
				return fmt.Errorf("%s for reasoning part %q, open %q", typ, id, openReasoning)
			}
			if typ == "reasoning-end" {
				openReasoning = ""
			}
		case "tool-input-start":
			tools[m["toolCallId"].(string)] = true
		case "tool-input-delta":
			if !tools[m["toolCallId"].(string)] {
				return fmt.Errorf("tool-input-delta without tool-input-start")
			}
		case "tool-input-available":
			inputs[m["toolCallId"].(string)] = true
		case "tool-output-available", "tool-output-error":
			// A server call's result (CONTRACT.md §12) completes a part
			// whose input the client has, once.
			id := m["toolCallId"].(string)
			if !inputs[id] || outputs[id] || m["providerExecuted"] != true {
				return fmt.Errorf("%s for call %q without its input, twice, or not providerExecuted", typ, id)
			}
			outputs[id] = true
		case "tool-approval-request", "tool-output-denied":
			// A server call waiting for the user's approval (CONTRACT.md
			// §13), or declined: a part whose input the client has.
			id := m["toolCallId"].(string)
			if !inputs[id] || outputs[id] {
				return fmt.Errorf("%s for call %q without its input, or twice", typ, id)
			}
			outputs[id] = true
		case "finish-step":
			if openText != "" || openReasoning != "" {
				return fmt.Errorf("finish-step with a part open")
			}
		case "data-tool-progress":
			if id == "" || !inputs[id] || outputs[id] {
				return fmt.Errorf("data-tool-progress for %q, which is not running", id)
			}
		case "finish", "error":
			terminal = i
			if openText != "" || openReasoning != "" {
				return fmt.Errorf("%s with a part open", typ)
			}
		}
	}
	if terminal >= 0 && done < 0 {
		return fmt.Errorf("no [DONE] after the terminal chunk")
	}
	return nil
}

// newEncoder returns an aisdk encoder for encodertest's checks.
func newEncoder() transform.Encoder { return aisdk.New(encodertest.Meta()) }

func TestScenarios(t *testing.T) {
	encodertest.CheckScenarios(t, "", func(evs []transform.Event) ([]byte, error) {
		out := encodertest.Run(newEncoder(), evs)
		return out, checkStream(out)
	})
}

// TestEvents checks the chunks of small sequences (data lines, without
// the start chunk).
func TestEvents(t *testing.T) {
	tests := []struct {
		name string
		evs  []transform.Event
		want []string
	}{
		{"lazy_parts", []transform.Event{
			encodertest.Event(transform.KindReasoningStart), encodertest.Event(transform.KindReasoningEnd),
			encodertest.Event(transform.KindAnswerStart), encodertest.Event(transform.KindAnswerEnd),
		}, nil},
		{"text_closed_by_data_part", []transform.Event{
			encodertest.Event(transform.KindAnswerStart), encodertest.Answer("a"), {Kind: transform.KindSerpQueries, List: []string{"q"}}, encodertest.Answer("b"), encodertest.Event(transform.KindAnswerEnd),
		}, []string{
			`{"type":"text-start","id":"text-0"}`, `{"type":"text-delta","id":"text-0","delta":"a"}`, `{"type":"text-end","id":"text-0"}`,
			`{"type":"data-serp-queries","data":{"queries":["q"]}}`,
			`{"type":"text-start","id":"text-1"}`, `{"type":"text-delta","id":"text-1","delta":"b"}`, `{"type":"text-end","id":"text-1"}`,
		}},
		{"phases", []transform.Event{
			encodertest.Event(transform.KindThinkingStart), encodertest.Phase(1, "Scope"), encodertest.PhaseDelta(1, "x"), encodertest.PhaseEnd(1), encodertest.Phase(2, "Plan"), encodertest.PhaseEnd(2), encodertest.Event(transform.KindThinkingEnd),
		}, []string{
			`{"type":"data-phase","data":{"id":1,"title":"Scope"}}`,
			`{"type":"reasoning-start","id":"reasoning-0"}`, `{"type":"reasoning-delta","id":"reasoning-0","delta":"x"}`, `{"type":"reasoning-end","id":"reasoning-0"}`,
			`{"type":"data-phase","data":{"id":2,"title":"Plan"}}`,
		}},
		{"serp_summary", []transform.Event{encodertest.Text(transform.KindSerpSummary, "s")},
			[]string{`{"type":"data-serp-summary","data":{"text":"s"}}`}},
		{"tool_input", []transform.Event{
			encodertest.ToolStart(0, "c1", "f"), encodertest.ToolArgs(0, "c1", "f", `{"a":`), encodertest.ToolArgs(0, "c1", "f", ""), encodertest.ToolArgs(0, "c1", "f", `1}`), encodertest.ToolEnd(0, "c1", "f", `{"a":1}`),
		}, []string{
			`{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}`,
			`{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\"a\":"}`,
			`{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"1}"}`,
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":{"a":1}}`,
		}},
		{"tool_input_invalid", []transform.Event{encodertest.ToolStart(0, "c1", "f"), encodertest.ToolEnd(0, "c1", "f", `{"a":`)},
			[]string{
				`{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}`,
				`{"type":"tool-input-error","toolCallId":"c1","toolName":"f","input":"{\"a\":","errorText":"invalid tool input: the arguments are not valid JSON"}`,
			}},
		{"tool_closes_text", []transform.Event{encodertest.Event(transform.KindAnswerStart), encodertest.Answer("a"), encodertest.ToolStart(0, "c1", "f")},
			[]string{`{"type":"text-start","id":"text-0"}`, `{"type":"text-delta","id":"text-0","delta":"a"}`, `{"type":"text-end","id":"text-0"}`,
				`{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}`}},
		{"clarify_artifacts", []transform.Event{
			{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Q?"}},
			encodertest.Text(transform.KindArtifacts, "[\n\"a\"\n]"), encodertest.Text(transform.KindArtifacts, "[oops"),
		}, []string{
			`{"type":"data-clarify","data":{"question":"Q?","options":[],"hint":null}}`,
			`{"type":"data-artifacts","data":{"items":["a"]}}`,
			`{"type":"data-artifacts","data":{"items":"[oops"}}`,
		}},
		{"violations_before_finish", []transform.Event{encodertest.Violation("a", 1, "x"), encodertest.Violation("b", 2, ""), encodertest.Finish("stop")},
			[]string{`{"type":"data-violations","data":{"violations":[{"code":"a","offset":1,"detail":"x"},{"code":"b","offset":2,"detail":""}]}}`,
				`{"type":"finish","finishReason":"stop"}`, `[DONE]`}},
		{"violations_before_error", []transform.Event{encodertest.Violation("a", 1, "x"), encodertest.Failure("upstream_error", "")},
			[]string{`{"type":"data-violations","data":{"violations":[{"code":"a","offset":1,"detail":"x"}]}}`,
				`{"type":"error","errorText":"upstream_error"}`, `[DONE]`}},
		{"error_closes_parts", []transform.Event{encodertest.Event(transform.KindAnswerStart), encodertest.Answer("a"), encodertest.Failure("upstream_error", "cut")},
			[]string{`{"type":"text-start","id":"text-0"}`, `{"type":"text-delta","id":"text-0","delta":"a"}`, `{"type":"text-end","id":"text-0"}`,
				`{"type":"error","errorText":"cut"}`, `[DONE]`}},
		{"approval_request", []transform.Event{
			encodertest.ToolRun(0, "c1", "delete_file", `{"path":"a"}`, "删除文件", "files", 1),
			encodertest.ToolAwait(0, "c1", "delete_file", transform.Await{Kind: transform.AwaitApproval, ID: "apr_1", Message: "ok?",
				Options: []transform.Option{{ID: "approve"}, {ID: "deny"}}}),
			encodertest.Finish("tool_calls"),
		}, []string{
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"delete_file","input":{"path":"a"},"providerExecuted":true,"dynamic":true,"title":"删除文件"}`,
			`{"type":"tool-approval-request","approvalId":"apr_1","toolCallId":"c1"}`,
			`{"type":"finish","finishReason":"tool-calls"}`, `[DONE]`,
		}},
		{"artifacts_after_output", []transform.Event{
			encodertest.ToolRun(0, "c1", "generate_pptx", `{}`, "PPT", "s", 1),
			{Kind: transform.KindToolResult, Index: 0, ID: "c1", Name: "generate_pptx", Tool: &transform.Tool{Status: transform.ToolCompleted, Output: "ok",
				Artifacts: []transform.Artifact{{Kind: "file-ready", URL: "/a?llmstream_file=f1", Name: "deck.pptx", Type: "application/pptx"},
					{Kind: "pptx-outline", Data: []byte(`{"slides":2}`)}}}},
		}, []string{
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"generate_pptx","input":{},"providerExecuted":true,"dynamic":true,"title":"PPT"}`,
			`{"type":"tool-output-available","toolCallId":"c1","output":"ok","providerExecuted":true,"dynamic":true}`,
			`{"type":"data-file-ready","data":{"url":"/a?llmstream_file=f1","name":"deck.pptx","type":"application/pptx"}}`,
			`{"type":"data-pptx-outline","data":{"slides":2}}`,
		}},
		{"resource_updated_in_place", []transform.Event{
			{Kind: transform.KindResourceUpdated, Name: "plan", Text: []byte(`{"v":1}`)},
		}, []string{`{"type":"data-resource-updated","id":"plan","data":{"key":"plan","snapshot":{"v":1}}}`}},
		{"approval_denied", []transform.Event{
			encodertest.ToolRun(0, "c1", "delete_file", `{"path":"a"}`, "删除文件", "files", 1),
			encodertest.ToolResult(0, "c1", "delete_file", transform.ToolDenied, "The user declined."),
		}, []string{
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"delete_file","input":{"path":"a"},"providerExecuted":true,"dynamic":true,"title":"删除文件"}`,
			`{"type":"tool-output-denied","toolCallId":"c1"}`,
		}},
		{"ignored_kinds", []transform.Event{encodertest.Routed("m", "u"), encodertest.Raw("x"), encodertest.Text(transform.KindUsage, `{"a":1}`), encodertest.Event(transform.KindThinkingStart), encodertest.Event(transform.KindThinkingEnd)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := encodertest.Run(aisdk.New(encodertest.Meta()), tt.evs)
			if err := checkStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sse, _ := encodertest.ReadSSE(out)
			var got []string
			for _, e := range sse[1:] {
				got = append(got, e.Data)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("chunks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestFinishReason checks the AI SDK spelling of each finish reason.
func TestFinishReason(t *testing.T) {
	tests := []struct {
		openai    string
		toolCalls bool
		want      string
	}{
		{"stop", false, "stop"},
		{"", false, "stop"},
		{"stop", true, "tool-calls"},
		{"length", false, "length"},
		{"length", true, "length"},
		{"tool_calls", true, "tool-calls"},
		{"function_call", false, "tool-calls"},
		{"content_filter", false, "content-filter"},
		{"eos", false, "other"},
	}
	for _, tt := range tests {
		t.Run(tt.openai+"_"+map[bool]string{true: "tools", false: "text"}[tt.toolCalls], func(t *testing.T) {
			evs := []transform.Event{}
			if tt.toolCalls {
				evs = append(evs, encodertest.ToolStart(0, "c", "f"), encodertest.ToolEnd(0, "c", "f", "{}"))
			}
			out := string(encodertest.Run(aisdk.New(encodertest.Meta()), append(evs, encodertest.Finish(tt.openai))))
			want := `data: {"type":"finish","finishReason":"` + tt.want + `"}` + "\n\ndata: [DONE]\n\n"
			if !strings.HasSuffix(out, want) {
				t.Errorf("got\n%s\nwant suffix\n%s", out, want)
			}
		})
	}
}

func TestBeginAndHeartbeat(t *testing.T) {
	meta := encodertest.Meta()
	enc := aisdk.New(meta)
	if got := string(enc.Begin(nil)); got != "data: {\"type\":\"start\",\"messageId\":\"msg-1\"}\n\n" {
		t.Errorf("start %q", got)
	}
	if got := string(enc.AppendHeartbeat(nil, encodertest.Created)); got != ": keep-alive\n\n" {
		t.Errorf("heartbeat %q", got)
	}
	meta.MessageID = ""
	if got := string(aisdk.New(meta).Begin(nil)); got != "data: {\"type\":\"start\"}\n\n" {
		t.Errorf("start without message id %q", got)
	}
}

func TestNothingAfterTerminal(t *testing.T) {
	encodertest.CheckNothingAfterTerminal(t, newEncoder)
}

func TestZeroAllocs(t *testing.T) {
	encodertest.CheckZeroAllocs(t, newEncoder, nil)
}

func BenchmarkEncoder(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), nil, transform.KindReasoningDelta, transform.KindAnswerDelta)
}

// FuzzEncoder feeds arbitrary event sequences: the encoder must not panic
// and every chunk must validate and keep the SDK's part bookkeeping, since
// the encoder opens and closes text and reasoning parts itself.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{14, 1, 15, 1, 16, 1, 25, 4, 18, 3, 23, 1}, `{"questions":[{"text":"q","choices":["a"]}]}`)
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1, 21, 0}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		out := encodertest.Run(aisdk.New(encodertest.Meta()), encodertest.FuzzEvents(ops, pool))
		if err := checkStream(out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
