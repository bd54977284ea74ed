package agui_test

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agui"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// newEncoder returns an agui encoder for encodertest's checks.
func newEncoder() transform.Encoder { return agui.New(encodertest.Meta()) }

// check reads out as an AG-UI client does (wiretest's agui client: the
// schemas and the verifier of @ag-ui/client 1.0 and 0.0.59).
func check(out []byte) (wiretest.Seen, error) {
	return wiretest.Check("agui", out, encodertest.Meta())
}

func TestScenarios(t *testing.T) {
	encodertest.CheckScenarios(t, "", func(evs []transform.Event) ([]byte, error) {
		out := encodertest.Run(newEncoder(), evs)
		_, err := check(out)
		return out, err
	})
}

// TestEvents checks the events of small sequences (data lines, without
// RUN_STARTED).
func TestEvents(t *testing.T) {
	const (
		start = `{"type":"RUN_STARTED","threadId":"msg-1","runId":"msg-1","protocolVersion":"1.0"}`
		done  = `{"type":"RUN_FINISHED","threadId":"msg-1","runId":"msg-1","metadata":{"llmstream":{"finishReason":"stop"}}}`
	)
	tests := []struct {
		name string
		evs  []transform.Event
		want []string
	}{
		{"empty_reply", []transform.Event{
			encodertest.Event(transform.KindReasoningStart), encodertest.Reasoning(""), encodertest.Event(transform.KindReasoningEnd),
			encodertest.Event(transform.KindAnswerStart), encodertest.Answer(""), encodertest.Event(transform.KindAnswerEnd),
			encodertest.Finish("stop"),
		}, []string{done}},
		{"answer_spans_reasoning_and_custom", []transform.Event{
			encodertest.Answer("a"), encodertest.Reasoning("r"), encodertest.Event(transform.KindReasoningEnd),
			{Kind: transform.KindSerpQueries, List: []string{"q"}}, encodertest.Answer("b"), encodertest.Finish("stop"),
		}, []string{
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"a"}`,
			`{"type":"REASONING_START","messageId":"msg-1-reasoning-1"}`,
			`{"type":"REASONING_MESSAGE_START","messageId":"msg-1-thought-1","role":"reasoning"}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"msg-1-thought-1","delta":"r"}`,
			`{"type":"REASONING_MESSAGE_END","messageId":"msg-1-thought-1"}`,
			`{"type":"REASONING_END","messageId":"msg-1-reasoning-1"}`,
			`{"type":"CUSTOM","name":"llmstream.serp_queries","value":{"queries":["q"]}}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"b"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			done,
		}},
		{"answer_ends_reasoning", []transform.Event{
			encodertest.Reasoning("r"), encodertest.Answer("a"), encodertest.Finish("stop"),
		}, []string{
			`{"type":"REASONING_START","messageId":"msg-1-reasoning-1"}`,
			`{"type":"REASONING_MESSAGE_START","messageId":"msg-1-thought-1","role":"reasoning"}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"msg-1-thought-1","delta":"r"}`,
			`{"type":"REASONING_MESSAGE_END","messageId":"msg-1-thought-1"}`,
			`{"type":"REASONING_END","messageId":"msg-1-reasoning-1"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"a"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			done,
		}},
		{"phase_without_start_or_title", []transform.Event{
			encodertest.PhaseDelta(3, "x"), encodertest.Phase(4, ""), encodertest.PhaseDelta(4, "y"),
			encodertest.Event(transform.KindThinkingEnd), encodertest.Finish("stop"),
		}, []string{
			`{"type":"REASONING_START","messageId":"msg-1-reasoning-1"}`,
			`{"type":"REASONING_MESSAGE_START","messageId":"msg-1-thought-1","role":"reasoning","metadata":{"llmstream":{"phase":3}}}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"msg-1-thought-1","delta":"x"}`,
			`{"type":"REASONING_MESSAGE_END","messageId":"msg-1-thought-1"}`,
			`{"type":"REASONING_MESSAGE_START","messageId":"msg-1-thought-2","role":"reasoning","metadata":{"llmstream":{"phase":4,"title":""}}}`,
			`{"type":"REASONING_MESSAGE_CONTENT","messageId":"msg-1-thought-2","delta":"y"}`,
			`{"type":"REASONING_MESSAGE_END","messageId":"msg-1-thought-2"}`,
			`{"type":"REASONING_END","messageId":"msg-1-reasoning-1"}`,
			done,
		}},
		{"tool_call_without_args_deltas", []transform.Event{
			encodertest.ToolStart(0, "c1", "f"), encodertest.ToolEnd(0, "c1", "f", `{}`), encodertest.Finish("tool_calls"),
		}, []string{
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
			`{"type":"RUN_FINISHED","threadId":"msg-1","runId":"msg-1","metadata":{"llmstream":{"finishReason":"tool_calls"}}}`,
		}},
		{"tool_call_ids_kept_unique", []transform.Event{
			encodertest.ToolStart(0, "c1", "f"), encodertest.ToolStart(1, "c1", "g"), encodertest.ToolStart(2, "", "h"),
			encodertest.ToolArgs(1, "c1", "g", "{}"), encodertest.ToolEnd(0, "c1", "f", "{}"), encodertest.ToolEnd(1, "c1", "g", "{}"),
			encodertest.ToolEnd(2, "", "h", "{}"), encodertest.Finish("stop"),
		}, []string{
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"msg-1-call-1","toolCallName":"g","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"msg-1-call-2","toolCallName":"h","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"msg-1-call-1","delta":"{}"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"msg-1-call-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"msg-1-call-2","delta":"{}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"msg-1-call-2"}`,
			`{"type":"RUN_FINISHED","threadId":"msg-1","runId":"msg-1","metadata":{"llmstream":{"finishReason":"tool_calls"}}}`,
		}},
		{"finish_ends_a_streaming_call", []transform.Event{
			encodertest.ToolStart(0, "c1", "f"), encodertest.ToolArgs(0, "c1", "f", `{"a"`), encodertest.Finish("length"),
		}, []string{
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"msg-1"}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"c1","delta":"{\"a\""}`,
			`{"type":"TOOL_CALL_END","toolCallId":"c1"}`,
			`{"type":"RUN_FINISHED","threadId":"msg-1","runId":"msg-1","metadata":{"llmstream":{"finishReason":"length"}}}`,
		}},
		{"error_leaves_a_streaming_call", []transform.Event{
			encodertest.Answer("a"), encodertest.ToolStart(0, "c1", "f"), encodertest.Failure("upstream_error", "cut"),
		}, []string{
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"a"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"c1","toolCallName":"f","parentMessageId":"msg-1"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"RUN_ERROR","message":"cut","code":"upstream_error"}`,
		}},
		{"error_without_message", []transform.Event{encodertest.Failure("upstream_timeout", "")},
			[]string{`{"type":"RUN_ERROR","message":"upstream_timeout","code":"upstream_timeout"}`}},
		{"custom_events", []transform.Event{
			{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Q?", Options: []string{"a"}}},
			encodertest.Text(transform.KindArtifacts, "[\n\"a\"\n]"), encodertest.Text(transform.KindArtifacts, "[oops"),
			encodertest.Text(transform.KindSerpSummary, "s"), encodertest.Violation("unknown_tag", 7, "note"),
			{Kind: transform.KindClarify}, encodertest.Finish("stop"),
		}, []string{
			`{"type":"CUSTOM","name":"llmstream.clarify","value":{"question":"Q?","options":["a"],"hint":null}}`,
			`{"type":"CUSTOM","name":"llmstream.artifacts","value":{"items":["a"]}}`,
			`{"type":"CUSTOM","name":"llmstream.artifacts","value":{"items":"[oops"}}`,
			`{"type":"CUSTOM","name":"llmstream.serp_summary","value":{"text":"s"}}`,
			`{"type":"CUSTOM","name":"llmstream.violation","value":{"code":"unknown_tag","offset":7,"detail":"note"}}`,
			done,
		}},
		{"rounds_number_on", []transform.Event{
			encodertest.RoundStart(3), encodertest.RoundStart(2), encodertest.Answer("x"), encodertest.Finish("stop"),
		}, []string{
			`{"type":"STEP_STARTED","stepName":"round 3"}`,
			`{"type":"STEP_FINISHED","stepName":"round 3"}`,
			`{"type":"STEP_STARTED","stepName":"round 4"}`,
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"x"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"STEP_FINISHED","stepName":"round 4"}`,
			done,
		}},
		{"progress_and_result_of_a_call_not_running", []transform.Event{
			encodertest.ServerToolStart(0, "s1", "f", "F", "demo", 1), encodertest.ServerToolEnd(0, "s1", "f", "{}"),
			encodertest.ToolProgress(0, "s1", "f", 1, 0, ""), encodertest.ToolResult(0, "s1", "f", transform.ToolCompleted, "x"),
			encodertest.Finish("stop"),
		}, []string{
			`{"type":"TOOL_CALL_START","toolCallId":"s1","toolCallName":"f","parentMessageId":"msg-1","metadata":{"llmstream":{"server":"demo","label":"F"}}}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"s1","delta":"{}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"s1"}`,
			done,
		}},
		{"run_of_a_call_never_streamed", []transform.Event{
			encodertest.Answer("a"), encodertest.ToolRun(0, "s1", "f", `{"q":1}`, "", "demo", 1),
			{Kind: transform.KindToolResult, Index: 0, ID: "s1", Name: "f"}, encodertest.Finish("stop"),
		}, []string{
			`{"type":"TEXT_MESSAGE_START","messageId":"msg-1","role":"assistant"}`,
			`{"type":"TEXT_MESSAGE_CONTENT","messageId":"msg-1","delta":"a"}`,
			`{"type":"TEXT_MESSAGE_END","messageId":"msg-1"}`,
			`{"type":"TOOL_CALL_START","toolCallId":"s1","toolCallName":"f","parentMessageId":"msg-1-message-2","metadata":{"llmstream":{"server":"demo","label":"f"}}}`,
			`{"type":"TOOL_CALL_ARGS","toolCallId":"s1","delta":"{\"q\":1}"}`,
			`{"type":"TOOL_CALL_END","toolCallId":"s1"}`,
			`{"type":"TOOL_CALL_RESULT","messageId":"msg-1-result-0","toolCallId":"s1","content":"","role":"tool","metadata":{"llmstream":{"status":"error"}}}`,
			done,
		}},
		{"ignored_kinds", []transform.Event{
			encodertest.Raw("x"), encodertest.Event(transform.KindThinkingStart), encodertest.Event(transform.KindAnswerStart),
			encodertest.Event(transform.KindAnswerEnd), encodertest.Event(transform.KindReasoningEnd), encodertest.PhaseEnd(1),
			encodertest.Finish(""),
		}, []string{done}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := encodertest.Run(newEncoder(), tt.evs)
			if _, err := check(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sse, err := encodertest.ReadSSE(out)
			if err != nil {
				t.Fatal(err)
			}
			if sse[0].Data != start {
				t.Errorf("first event %s", sse[0].Data)
			}
			var got []string
			for _, e := range sse[1:] {
				got = append(got, e.Data)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestRunIDs: RUN_STARTED and RUN_FINISHED repeat the request's threadId
// and runId, which the client's run is keyed by; without them (a route
// whose clients send OpenAI bodies), the message id.
func TestRunIDs(t *testing.T) {
	meta := encodertest.Meta()
	meta.Request = agui.Request{ThreadID: "thread-\"7\"", RunID: "run-9"}
	out := string(encodertest.Run(agui.New(meta), []transform.Event{encodertest.Finish("stop")}))
	if !strings.HasPrefix(out, `data: {"type":"RUN_STARTED","threadId":"thread-\"7\"","runId":"run-9",`) ||
		!strings.Contains(out, `{"type":"RUN_FINISHED","threadId":"thread-\"7\"","runId":"run-9",`) {
		t.Errorf("ids not the request's:\n%s", out)
	}
	meta.Request = agui.Request{RunID: "run-9"}
	if out := string(agui.New(meta).Begin(nil)); !strings.Contains(out, `"threadId":"msg-1","runId":"run-9"`) {
		t.Errorf("no threadId: %s", out)
	}
	if got := string(newEncoder().AppendHeartbeat(nil, encodertest.Created)); got != ": keep-alive\n\n" {
		t.Errorf("heartbeat %q", got)
	}
}

// TestUsage: RUN_FINISHED and RUN_ERROR carry the upstream's usage as one
// TokenUsage entry, with the counts it gave, as the schemas type them
// (non-negative integers), and the model it reported.
func TestUsage(t *testing.T) {
	tests := []struct{ usage, want string }{
		{`{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}`,
			`"usage":[{"provider":"openai","model":"up-model","inputTokens":10,"outputTokens":20,"totalTokens":30}]`},
		{`{"prompt_tokens":10.0,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4},"completion_tokens_details":{"reasoning_tokens":1}}`,
			`"usage":[{"provider":"openai","model":"up-model","inputTokens":10,"outputTokens":2,"totalTokens":12,"reasoningTokens":1,"cachedInputTokens":4}]`},
		{`{"prompt_tokens":-3,"completion_tokens":1e300,"total_tokens":2.6}`,
			`"usage":[{"provider":"openai","model":"up-model","inputTokens":0,"outputTokens":9007199254740991,"totalTokens":3}]`},
		{`{"queue_time":1}`, ""},
		{`not json`, ""},
	}
	for _, tt := range tests {
		for _, end := range []transform.Event{encodertest.Finish("stop"), encodertest.Failure("upstream_error", "x")} {
			evs := []transform.Event{encodertest.Routed("up-model", ""), encodertest.Text(transform.KindUsage, tt.usage), end}
			out := encodertest.Run(newEncoder(), evs)
			if _, err := check(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if tt.want == "" && strings.Contains(string(out), `"usage"`) || !strings.Contains(string(out), tt.want) {
				t.Errorf("usage %s:\n%s\nwant %s", tt.usage, out, tt.want)
			}
		}
	}
}

func TestNothingAfterTerminal(t *testing.T) {
	encodertest.CheckNothingAfterTerminal(t, newEncoder)
}

// TestZeroAllocs: every delta kind, and a heartbeat, in steady state, with
// the round's text message and a reasoning message open.
func TestZeroAllocs(t *testing.T) {
	encodertest.CheckZeroAllocs(t, newEncoder, nil,
		encodertest.AllocsCase{Name: "answer_in_round_2", Event: encodertest.Answer("more text"),
			Setup: []transform.Event{encodertest.RoundStart(2), encodertest.Answer("a")}},
		encodertest.AllocsCase{Name: "client_tool_args", Event: encodertest.ToolArgs(5, "c5", "f", `"x":1`),
			Setup: []transform.Event{encodertest.ToolStart(5, "c5", "f")}},
	)
}

func BenchmarkEncoder(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), nil, transform.KindReasoningDelta, transform.KindAnswerDelta)
}

// FuzzEncoder feeds arbitrary event sequences, whether or not they keep
// the pipeline's promises: the encoder must not panic, and what it writes
// must keep every rule the AG-UI clients verify, ended or not.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{14, 1, 15, 1, 16, 1, 25, 4, 18, 3, 23, 1}, `{"questions":[{"text":"q","choices":["a"]}]}`)
	f.Add([]byte{30, 1, 31, 5, 31, 9, 26, 1, 27, 1, 29, 2, 28, 1, 11, 0, 22, 0}, "abc")
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1, 21, 0, 29, 3, 7, 1, 14, 2}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		evs := encodertest.FuzzEvents(ops, pool)
		if n := len(evs); n == 0 || evs[n-1].Kind != transform.KindFinish && evs[n-1].Kind != transform.KindError {
			evs = append(evs, encodertest.Finish("stop"))
		}
		out := encodertest.Run(newEncoder(), evs)
		if _, err := check(out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
