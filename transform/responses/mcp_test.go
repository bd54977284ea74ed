package responses_test

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/responses"
)

// serverRoundsOutput is the output of the server_tools scenario's response
// (mcp.go), as a client that keeps the conversation itself sends it back:
// input = [...response.output, {role: user, …}] (the openai SDKs'
// documented pattern).
const serverRoundsOutput = `{"id":"rs_1","type":"reasoning","status":"completed","summary":[],"content":[{"type":"reasoning_text","text":"Need data."}]},` +
	`{"id":"msg_1","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Let me look.","annotations":[],"logprobs":[]}]},` +
	`{"id":"mcp_2","type":"mcp_call","status":"completed","server_label":"demo","name":"search_knowledge","arguments":"{\"query\":\"caddy\"}","approval_request_id":null,"output":"Caddy is a web server.","error":null},` +
	`{"id":"mcp_3","type":"mcp_call","status":"failed","server_label":"demo","name":"get_weather","arguments":"{\"city\":\"Paris\"}","approval_request_id":null,"output":null,` +
	`"error":{"type":"mcp_tool_execution_error","content":[{"type":"text","text":"get_weather timed out after 30s"}]}},` +
	`{"id":"rs_4","type":"reasoning","status":"completed","summary":[],"content":[{"type":"reasoning_text","text":"Got it."}]},` +
	`{"id":"msg_5","type":"message","status":"completed","role":"assistant","content":[{"type":"output_text","text":"Caddy is a web server.","annotations":[],"logprobs":[]}]}`

// TestConvertMCPItems: the mcp_call items a client sends back become the
// model's history, never a 400 (CONTRACT.md §12 "What comes back"); the
// MCP items without a chat counterpart are left out and named; an
// mcp_approval_response is an approval (CONTRACT.md §13).
func TestConvertMCPItems(t *testing.T) {
	tests := []struct {
		name, body, want, leftOut string
		approvals                 []request.Approval
	}{
		{name: "server_rounds", body: `{"input":[{"role":"user","content":"What is Caddy?"},` + serverRoundsOutput +
			`,{"role":"user","content":"And nginx?"}]}`,
			want: `{"messages":[{"role":"user","content":"What is Caddy?"},` +
				`{"role":"assistant","content":"Let me look.","tool_calls":[` +
				`{"id":"mcp_2","type":"function","function":{"name":"search_knowledge","arguments":"{\"query\":\"caddy\"}"}},` +
				`{"id":"mcp_3","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
				`{"role":"tool","tool_call_id":"mcp_2","content":"Caddy is a web server."},` +
				`{"role":"tool","tool_call_id":"mcp_3","content":"get_weather timed out after 30s"},` +
				`{"role":"assistant","content":"Caddy is a web server."},{"role":"user","content":"And nginx?"}]}`,
			leftOut: "item:reasoning"},
		{name: "hosted_mcp_items", body: `{"input":[{"role":"user","content":"roll"},` +
			`{"id":"mcpl_1","type":"mcp_list_tools","server_label":"dmcp","tools":[{"name":"roll","input_schema":{}}]},` +
			`{"id":"mcpr_1","type":"mcp_approval_request","server_label":"dmcp","name":"roll","arguments":"{}"},` +
			`{"type":"mcp_approval_response","approval_request_id":"mcpr_1","approve":true},` +
			`{"id":"mcp_1","type":"mcp_call","server_label":"dmcp","name":"roll","arguments":"{\"d\":\"2d4\"}","output":"5","error":null,"status":"completed"},` +
			`{"type":"mcp_call","server_label":"dmcp","name":"roll","arguments":{"d":"1d6"},"error":"HTTP 500: boom"},` +
			`{"id":"mcp_9","type":"mcp_call","server_label":"dmcp","name":"roll","status":"in_progress"},` +
			`{"id":"mcp_x","type":"mcp_call","server_label":"dmcp"}]}`,
			want: `{"messages":[{"role":"user","content":"roll"},{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"mcp_1","type":"function","function":{"name":"roll","arguments":"{\"d\":\"2d4\"}"}},` +
				`{"id":"mcp_5","type":"function","function":{"name":"roll","arguments":"{\"d\":\"1d6\"}"}},` +
				`{"id":"mcp_9","type":"function","function":{"name":"roll","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"mcp_1","content":"5"},{"role":"tool","tool_call_id":"mcp_5","content":"HTTP 500: boom"},` +
				`{"role":"tool","tool_call_id":"mcp_9","content":"The tool call did not finish."}]}`,
			leftOut: "item:mcp_list_tools item:mcp_approval_request item:mcp_call", approvals: []request.Approval{{ID: "mcpr_1", Approved: true}}},
		{name: "a_mixed_turn", body: `{"input":[{"role":"user","content":"both"},` +
			`{"id":"msg_0","type":"message","role":"assistant","content":[{"type":"output_text","text":"Both."}]},` +
			`{"id":"mcp_1","type":"mcp_call","server_label":"demo","name":"get_weather","arguments":"{}","output":null,` +
			`"error":{"type":"mcp_protocol_error","code":-32001,"message":"timed out"},"status":"failed"},` +
			`{"id":"fc_2","type":"function_call","call_id":"call_c","name":"client_fn","arguments":"{\"x\":1}"},` +
			`{"type":"function_call_output","call_id":"call_c","output":"done"}]}`,
			want: `{"messages":[{"role":"user","content":"both"},` +
				`{"role":"assistant","content":"Both.","tool_calls":[{"id":"mcp_1","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"mcp_1","content":"timed out"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_c","type":"function","function":{"name":"client_fn","arguments":"{\"x\":1}"}}]},` +
				`{"role":"tool","tool_call_id":"call_c","content":"done"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, e := responses.Convert([]byte(tt.body))
			if e != nil {
				t.Fatal(e)
			}
			if string(out) != tt.want {
				t.Errorf("converted\n %s\nwant\n %s", out, tt.want)
			}
			if info.LeftOut != tt.leftOut {
				t.Errorf("left out %q, want %q", info.LeftOut, tt.leftOut)
			}
			if !reflect.DeepEqual(info.Approvals, tt.approvals) {
				t.Errorf("approvals %+v, want %+v", info.Approvals, tt.approvals)
			}
		})
	}
}

// TestMCPOutputRoundTrip: what the encoder sends, a whole Response's
// output sent back as input, converts into the history of what happened,
// for every loop scenario.
func TestMCPOutputRoundTrip(t *testing.T) {
	for _, name := range []string{"server_tools", "mixed_turn", "max_rounds"} {
		enc := newWholeEncoder()
		out := encodertest.Run(enc, encodertest.ScenarioEvents(name))
		r, err := checkWhole(out, enc.Status())
		if err != nil {
			t.Fatal(err)
		}
		items := r["output"].([]any)
		body := `{"input":` + mustMarshal(t, items) + `}`
		conv, _, e := responses.Convert([]byte(body))
		if e != nil {
			t.Fatalf("%s: %v\n%s", name, e, body)
		}
		for _, it := range items {
			m := it.(map[string]any)
			if m["type"] != "mcp_call" {
				continue
			}
			if !strings.Contains(string(conv), `"tool_call_id":"`+m["id"].(string)+`"`) {
				t.Errorf("%s: %v is not in the history:\n%s", name, m["id"], conv)
			}
		}
	}
}

func mustMarshal(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestMCPApprovalRequest: a server call that waits for the user's approval
// (CONTRACT.md §13) ends its mcp_call incomplete and adds an
// mcp_approval_request {id, server_label, name, arguments} whose id is the
// approval id the client sends back; the whole Response holds both, and
// sent back with the client's mcp_approval_response the approval is read.
func TestMCPApprovalRequest(t *testing.T) {
	evs := []transform.Event{
		encodertest.ServerToolStart(0, "call_1", "delete_file", "删除文件", "files", 1),
		encodertest.ToolEnd(0, "call_1", "delete_file", `{"path":"a"}`),
		encodertest.ToolAwait(0, "call_1", "delete_file", transform.Await{Kind: transform.AwaitApproval, ID: "apr_p1_0", Message: "删除文件",
			Options: []transform.Option{{ID: transform.OptionApprove}, {ID: transform.OptionDeny}}}),
		encodertest.Finish("stop"),
	}
	out := encodertest.Run(newEncoder(), evs)
	if _, err := accumulate(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	r := lastResponse(t, out)
	items := r["output"].([]any)
	if len(items) != 2 {
		t.Fatalf("output: %v", items)
	}
	call, ask := items[0].(map[string]any), items[1].(map[string]any)
	if call["type"] != "mcp_call" || call["status"] != "incomplete" || call["output"] != nil {
		t.Errorf("the waiting call: %v", call)
	}
	if ask["type"] != "mcp_approval_request" || ask["id"] != "apr_p1_0" || ask["server_label"] != "files" ||
		ask["name"] != "delete_file" || ask["arguments"] != `{"path":"a"}` {
		t.Errorf("the approval request: %v", ask)
	}
	for _, ev := range []string{"response.mcp_call.completed", "response.mcp_call.failed"} {
		if strings.Contains(string(out), ev) {
			t.Errorf("%s for a call that did not run:\n%s", ev, out)
		}
	}
	// The whole Response says the same.
	enc := newWholeEncoder()
	whole := encodertest.Run(enc, evs)
	wr, err := checkWhole(whole, enc.Status())
	if err != nil {
		t.Fatal(err)
	}
	if got := mustMarshal(t, wr["output"]); got != mustMarshal(t, r["output"]) {
		t.Errorf("whole output\n %s\nstreamed\n %s", got, mustMarshal(t, r["output"]))
	}
	// The client answers: the output, then its mcp_approval_response.
	body := `{"input":[{"role":"user","content":"delete a"},` + mustMarshal(t, items[0]) + `,` + mustMarshal(t, items[1]) +
		`,{"type":"mcp_approval_response","approval_request_id":"apr_p1_0","approve":false,"reason":"not now"}]}`
	_, info, e := responses.Convert([]byte(body))
	if e != nil {
		t.Fatal(e)
	}
	if want := []request.Approval{{ID: "apr_p1_0", Approved: false, Reason: "not now"}}; !reflect.DeepEqual(info.Approvals, want) {
		t.Errorf("approvals %+v, want %+v", info.Approvals, want)
	}
	for _, bad := range []string{
		`{"type":"mcp_approval_response","approve":true}`,
		`{"type":"mcp_approval_response","approval_request_id":"","approve":true}`,
		`{"type":"mcp_approval_response","approval_request_id":"a","approve":"yes"}`,
		`{"type":"mcp_approval_response","approval_request_id":"a","approve":true,"reason":1}`,
	} {
		if _, _, e := responses.Convert([]byte(`{"input":[` + bad + `]}`)); e == nil || e.Status != 400 || !strings.Contains(e.Message, "input[0]") {
			t.Errorf("%s: %v, want a 400 naming input[0]", bad, e)
		}
	}
}

// TestMCPResumedRun: a call resumed after the user's approval runs in a
// new response, whose model round never opened its item: the run opens
// its mcp_call with the arguments, and the result completes it.
func TestMCPResumedRun(t *testing.T) {
	out := encodertest.Run(newEncoder(), []transform.Event{
		encodertest.ToolRun(0, "call_1", "delete_file", `{"path":"a"}`, "删除文件", "files", 1),
		encodertest.ToolResult(0, "call_1", "delete_file", transform.ToolCompleted, "deleted"),
		encodertest.Finish("stop"),
	})
	if _, err := accumulate(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	items := lastResponse(t, out)["output"].([]any)
	if len(items) != 1 {
		t.Fatalf("output: %v", items)
	}
	it := items[0].(map[string]any)
	if it["type"] != "mcp_call" || it["status"] != "completed" || it["arguments"] != `{"path":"a"}` || it["output"] != "deleted" || it["server_label"] != "files" {
		t.Errorf("the resumed call: %v", it)
	}
}
