package anthropic_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/anthropic"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// mcpTurn is an assistant message as the MCP connector returns it (the
// beta SDKs' BetaMCPToolUseBlock and BetaMCPToolResultBlock) and as the
// encoder streams the agent loop's rounds (mcp.go), which a client sends
// back as it got it.
const mcpTurn = `{"role":"assistant","content":[{"type":"thinking","thinking":"Need data.","signature":""},` +
	`{"type":"text","text":"Let me look."},` +
	`{"type":"mcp_tool_use","id":"call_1","name":"search_knowledge","server_name":"demo","input":{"query":"caddy"}},` +
	`{"type":"mcp_tool_use","id":"call_2","name":"get_weather","server_name":"demo","input":{"city":"Paris"}},` +
	`{"type":"mcp_tool_result","tool_use_id":"call_2","is_error":true,"content":[{"type":"text","text":"timed out"}]},` +
	`{"type":"mcp_tool_result","tool_use_id":"call_1","is_error":false,"content":[{"type":"text","text":"Caddy is"},{"type":"text","text":"a web server."}]},` +
	`{"type":"thinking","thinking":"Got it.","signature":""},{"type":"text","text":"Caddy is a web server."}]}`

// TestConvertMCPBlocks: the rounds a client sends back become the model's
// history (CONTRACT.md §12 "What comes back"), never a 400.
func TestConvertMCPBlocks(t *testing.T) {
	tests := []struct {
		name, body, want string
	}{
		{"rounds", `{"messages":[{"role":"user","content":"What is Caddy?"},` + mcpTurn + `,{"role":"user","content":"And nginx?"}]}`,
			`{"messages":[{"role":"user","content":"What is Caddy?"},` +
				`{"role":"assistant","content":"Let me look.","tool_calls":[` +
				`{"id":"call_1","type":"function","function":{"name":"search_knowledge","arguments":"{\"query\":\"caddy\"}"}},` +
				`{"id":"call_2","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
				`{"role":"tool","tool_call_id":"call_2","content":"Error: timed out"},` +
				`{"role":"tool","tool_call_id":"call_1","content":"Caddy is\n\na web server."},` +
				`{"role":"assistant","content":"Caddy is a web server."},{"role":"user","content":"And nginx?"}]}`},
		// A mixed turn: the client's own call goes last, answered by its
		// next user message; the server call's result is in the turn.
		{"mixed_turn", `{"messages":[{"role":"user","content":"both"},{"role":"assistant","content":[{"type":"text","text":"Both."},` +
			`{"type":"mcp_tool_use","id":"call_s","name":"get_weather","server_name":"demo","input":{"city":"Oslo"}},` +
			`{"type":"tool_use","id":"call_c","name":"client_fn","input":{"x":1}},` +
			`{"type":"mcp_tool_result","tool_use_id":"call_s","is_error":false,"content":"-3°C"}]},` +
			`{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_c","content":"done"},{"type":"text","text":"next"}]}]}`,
			`{"messages":[{"role":"user","content":"both"},{"role":"assistant","content":"Both.","tool_calls":[` +
				`{"id":"call_s","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},` +
				`{"id":"call_c","type":"function","function":{"name":"client_fn","arguments":"{\"x\":1}"}}]},` +
				`{"role":"tool","tool_call_id":"call_s","content":"-3°C"},{"role":"tool","tool_call_id":"call_c","content":"done"},` +
				`{"role":"user","content":"next"}]}`},
		// The result in the next user message; a result for no call is
		// dropped; a call whose result never came is answered with a note.
		{"results_elsewhere_or_missing", `{"messages":[{"role":"assistant","content":[` +
			`{"type":"mcp_tool_use","id":"a","name":"f","server_name":"s","input":{}},{"type":"mcp_tool_use","id":"b","name":"g","server_name":"s","input":{}}]},` +
			`{"role":"user","content":[{"type":"mcp_tool_result","tool_use_id":"a","content":[{"type":"text","text":"A"}]},` +
			`{"type":"mcp_tool_result","tool_use_id":"zzz","content":"lost"},{"type":"text","text":"ok?"}]},` +
			`{"role":"assistant","content":[{"type":"mcp_tool_use","id":"c","name":"h","server_name":"s","input":{}}]}]}`,
			`{"messages":[{"role":"assistant","content":null,"tool_calls":[` +
				`{"id":"a","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"a","content":"A"},{"role":"tool","tool_call_id":"b","content":"The tool call did not finish."},` +
				`{"role":"user","content":"ok?"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"h","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"c","content":"The tool call did not finish."}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, e := anthropic.Convert([]byte(tt.body))
			if e != nil {
				t.Fatal(e)
			}
			if string(out) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out, tt.want)
			}
			checkChat(t, out)
		})
	}
}

// TestMCPMessageRoundTrip: a whole Message of the agent loop, its content
// sent back as the assistant turn, converts into the history of its calls
// and results.
func TestMCPMessageRoundTrip(t *testing.T) {
	for _, name := range []string{"server_tools", "mixed_turn", "max_rounds"} {
		enc := newWholeEncoder()
		out := encodertest.Run(enc, encodertest.ScenarioEvents(name))
		var msg struct {
			Content []map[string]any `json:"content"`
		}
		if err := json.Unmarshal(out, &msg); err != nil {
			t.Fatal(err)
		}
		content, _ := json.Marshal(msg.Content)
		body := `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":` + string(content) + `}]}`
		conv, _, e := anthropic.Convert([]byte(body))
		if e != nil {
			t.Fatalf("%s: %v\n%s", name, e, body)
		}
		for _, b := range msg.Content {
			if b["type"] == "mcp_tool_result" && !strings.Contains(string(conv), `"tool_call_id":"`+b["tool_use_id"].(string)+`"`) {
				t.Errorf("%s: the result of %v is not in the history:\n%s", name, b["tool_use_id"], conv)
			}
		}
		checkChat(t, conv)
	}
}
