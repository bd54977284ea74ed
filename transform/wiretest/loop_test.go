package wiretest_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// TestScenariosOnTheWire holds every protocol's encoder to its checker on
// the sequences the pipeline promises, the agent loop's among them
// (CONTRACT.md §12: every round in one stream, "a client that follows its
// protocol's spec must accept it"), streamed and, where the client
// chooses, whole; and the client gets every round's answer text, in order
// (a protocol may put a paragraph break between two rounds' answers).
func TestScenariosOnTheWire(t *testing.T) {
	for _, s := range encodertest.Scenarios() {
		for _, pr := range protocol.Protocols() {
			streams := []bool{true}
			if pr.ClientChoosesStream {
				streams = append(streams, false)
			}
			for _, stream := range streams {
				meta := encodertest.Meta()
				meta.Stream = stream
				out := encodertest.Run(pr.NewEncoder(meta), s.Events)
				c, err := wiretest.For(pr.Name)
				if err != nil {
					t.Fatal(err)
				}
				seen, err := c.Read(out, meta)
				if err != nil {
					t.Errorf("%s, protocol %s (stream %v): %v\n%s", s.Name, pr.Name, stream, err, out)
					continue
				}
				if !stream && seen.Failed {
					continue // one error object instead of the reply
				}
				var answers []string
				whole := true
				for _, ev := range s.Events {
					if ev.Kind == transform.KindAnswerDelta && !c.RawAnswer || ev.Kind == transform.KindRaw && c.RawAnswer {
						answers = append(answers, string(ev.Text))
						whole = whole && utf8.Valid(ev.Text)
					}
				}
				if !whole {
					continue // the client gets U+FFFD for what is not UTF-8
				}
				if want := strings.Join(answers, ""); !inOrder(seen.Answer, answers) || len(seen.Answer) > len(want)+2*len(answers) {
					t.Errorf("%s, protocol %s (stream %v): the client got the answer %q, the rounds had %q", s.Name, pr.Name, stream, seen.Answer, answers)
				}
			}
		}
	}
}

// TestCheckersRejectBrokenLoops: each checker refuses what its client
// would refuse or misread in the agent loop's events, so that accepting
// the encoders' streams means something.
func TestCheckersRejectBrokenLoops(t *testing.T) {
	const aiStart = `data: {"type":"start"}` + "\n\n"
	const aiEnd = `data: {"type":"finish","finishReason":"stop"}` + "\n\ndata: [DONE]\n\n"
	aiServerCall := `data: {"type":"tool-input-start","toolCallId":"c1","toolName":"f","providerExecuted":true,"dynamic":true,"title":"F"}` + "\n\n" +
		`data: {"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":{},"providerExecuted":true,"dynamic":true,"title":"F"}` + "\n\n"
	anStart := "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\",\"model\":\"x\",\"content\":[],\"stop_reason\":null,\"stop_sequence\":null,\"usage\":{\"input_tokens\":1,\"output_tokens\":0}}}\n\n"
	anEnd := "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\",\"stop_sequence\":null},\"usage\":{\"output_tokens\":1}}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"
	anBlock := func(i int, block string) string {
		return "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":" + string(rune('0'+i)) + ",\"content_block\":" + block + "}\n\n" +
			"event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":" + string(rune('0'+i)) + "}\n\n"
	}
	mcpUse := `{"type":"mcp_tool_use","id":"c1","name":"f","server_name":"demo","input":{}}`
	mcpResult := func(id string) string {
		return `{"type":"mcp_tool_result","tool_use_id":"` + id + `","is_error":false,"content":[{"type":"text","text":"ok"}]}`
	}
	sp := func(name, data string) string { return "event: " + name + "\ndata: " + data + "\n\n" }
	spDone := sp("done", `{"conversationId":"c"}`)
	ids := `"message_id":"msg-1","request_id":"req-1"`
	gy := func(name, fields string) string { return sp(name, "{"+ids+fields+"}") }
	gyStart := gy("status", `,"state":"queued"`) + gy("status", `,"state":"working"`) +
		gy("status", `,"state":"routed","provider":"p","resolved_model":"m","endpoint_id":1,"upstream_request_id":null`)
	gyCall := gy("status", `,"state":"working","tool":{"event":"call","id":"c1","name":"f","label":"F","server":"demo","args":{}}`)
	gyEnd := gy("completed", `,"provider":"p","resolved_model":"m","endpoint_id":1,"upstream_request_id":null,"reply_len":0,"metadata":{"finish_reason":"stop","usage":null,"violations":[]}`)
	jsEnd := gy("final_delta", `,"text":""`) + gy("final_end", "") + gyEnd
	rs := func(seq int, typ, fields string) string {
		return sp(typ, `{"type":"`+typ+`","sequence_number":`+itoa(seq)+fields+`}`)
	}
	resp := `,"response":{"id":"resp_1","object":"response","status":"in_progress"}`
	rsStart := rs(0, "response.created", resp) + rs(1, "response.in_progress", resp) +
		rs(2, "response.output_item.added", `,"output_index":0,"item":{"id":"mcp_1","type":"mcp_call","status":"in_progress","server_label":"demo","name":"f","arguments":"","approval_request_id":null,"output":null,"error":null}`)
	ref := `,"item_id":"mcp_1","output_index":0`

	tests := []struct {
		protocol, name, wire string
	}{
		{"aisdk", "output for a call never started", aiStart +
			`data: {"type":"tool-output-available","toolCallId":"nope","output":"x","providerExecuted":true,"dynamic":true}` + "\n\n" + aiEnd},
		{"aisdk", "output before the input is available", aiStart +
			`data: {"type":"tool-input-start","toolCallId":"c1","toolName":"f","providerExecuted":true,"dynamic":true}` + "\n\n" +
			`data: {"type":"tool-output-available","toolCallId":"c1","output":"x","providerExecuted":true,"dynamic":true}` + "\n\n" + aiEnd},
		{"aisdk", "two outputs", aiStart + aiServerCall +
			`data: {"type":"tool-output-error","toolCallId":"c1","errorText":"x","providerExecuted":true,"dynamic":true}` + "\n\n" +
			`data: {"type":"tool-output-available","toolCallId":"c1","output":"x","providerExecuted":true,"dynamic":true}` + "\n\n" + aiEnd},
		{"aisdk", "finish-step with a text part open", aiStart +
			`data: {"type":"text-start","id":"t0"}` + "\n\n" + `data: {"type":"finish-step"}` + "\n\n" + `data: {"type":"start-step"}` + "\n\n" +
			`data: {"type":"text-end","id":"t0"}` + "\n\n" + aiEnd},
		{"aisdk", "finish-step not followed by start-step", aiStart +
			`data: {"type":"finish-step"}` + "\n\n" + `data: {"type":"text-start","id":"t0"}` + "\n\n" + `data: {"type":"text-end","id":"t0"}` + "\n\n" + aiEnd},
		{"aisdk", "progress of a call that is not running", aiStart +
			`data: {"type":"data-tool-progress","id":"c9","data":{"toolCallId":"c9","toolName":"f","progress":1,"total":null,"message":null}}` + "\n\n" + aiEnd},
		{"anthropic", "non-contiguous block indices", anStart + anBlock(0, mcpUse) + anBlock(2, mcpResult("c1")) + anEnd},
		{"anthropic", "an mcp_tool_result for no mcp_tool_use", anStart + anBlock(0, mcpResult("c1")) + anEnd},
		{"anthropic", "two results for one call", anStart + anBlock(0, mcpUse) + anBlock(1, mcpResult("c1")) + anBlock(2, mcpResult("c1")) + anEnd},
		{"anthropic", "an mcp_tool_use without server_name", anStart + anBlock(0, `{"type":"mcp_tool_use","id":"c1","name":"f","input":{}}`) + anEnd},
		{"skillpet", "thinking after thinking_done without round_start",
			sp("thinking", `{"content":"a"}`) + sp("thinking_done", `{}`) + sp("token", `{"content":"x"}`) + sp("thinking", `{"content":"b"}`) + spDone},
		{"skillpet", "a tool_result without its tool_start", sp("tool_result", `{"id":"c1","name":"f","label":"F","mode":"auto","status":"completed","message":"ok"}`) + spDone},
		{"skillpet", "a tool_result twice", sp("tool_start", `{"id":"c1","name":"f","label":"F"}`) +
			sp("tool_result", `{"id":"c1","name":"f","label":"F","mode":"auto","status":"completed","message":"ok"}`) +
			sp("tool_result", `{"id":"c1","name":"f","label":"F","mode":"auto","status":"error","message":"x"}`) + spDone},
		{"skillpet", "a tool_result status outside the spec", sp("tool_start", `{"id":"c1","name":"f","label":"F"}`) +
			sp("tool_result", `{"id":"c1","name":"f","label":"F","mode":"auto","status":"done","message":"ok"}`) + spDone},
		{"skillpet", "round 3 after round 1", sp("token", `{"content":"x"}`) + sp("round_start", `{"round":3}`) + spDone},
		{"jsonseq", "a tool_result for no server tool_call", gyStart + gy("tool_result", `,"id":"c1","name":"f","status":"completed","output":"ok"`) + jsEnd},
		{"jsonseq", "a round_start after final_end", gyStart + gy("final_delta", `,"text":"x"`) + gy("final_end", "") + gy("round_start", `,"round":2`) + gyEnd},
		{"gymbro", "a tool result for no call", gyStart + gy("status", `,"state":"working","tool":{"event":"result","id":"c1","name":"f","status":"completed","output":"ok"}`) + gyEnd},
		{"gymbro", "a loop status before routed", gy("status", `,"state":"queued"`) + gyCall + gyEnd},
		{"gymbro", "round 3 after round 1", gyStart + gyCall + gy("status", `,"state":"working","round":3`) + gyEnd},
		{"responses", "mcp_call.completed before it ran", rsStart +
			rs(3, "response.mcp_call_arguments.done", ref+`,"arguments":""`) + rs(4, "response.mcp_call.completed", ref)},
		{"responses", "an mcp_call done without its outcome", rsStart +
			rs(3, "response.mcp_call_arguments.done", ref+`,"arguments":""`) + rs(4, "response.mcp_call.in_progress", ref) +
			rs(5, "response.output_item.done", `,"output_index":0,"item":{"id":"mcp_1","type":"mcp_call","status":"completed","server_label":"demo","name":"f","arguments":"","approval_request_id":null,"output":"ok","error":null}`)},
		{"responses", "arguments after they were done", rsStart +
			rs(3, "response.mcp_call_arguments.done", ref+`,"arguments":""`) + rs(4, "response.mcp_call_arguments.delta", ref+`,"delta":"{}"`)},
		{"openai", "tool call index 1 without 0",
			`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
				`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]},"logprobs":null,"finish_reason":null}]}` + "\n\n" +
				`data: {"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{},"logprobs":null,"finish_reason":"tool_calls"}]}` + "\n\ndata: [DONE]\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.protocol+"/"+tt.name, func(t *testing.T) {
			meta := encodertest.Meta()
			_, err := wiretest.Check(tt.protocol, []byte(tt.wire), meta)
			if err == nil {
				t.Fatalf("accepted:\n%s", tt.wire)
			}
			t.Log(err)
		})
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// inOrder reports whether s holds parts in order.
func inOrder(s string, parts []string) bool {
	for _, p := range parts {
		i := strings.Index(s, p)
		if i < 0 {
			return false
		}
		s = s[i+len(p):]
	}
	return true
}
