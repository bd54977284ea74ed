package chatmsg

import (
	"encoding/json"
	"testing"
)

func TestMessages(t *testing.T) {
	calls := []ToolCall{
		{ID: "call_1", Name: "get_weather", Arguments: `{"city": "Paris"}`},
		{ID: "call_\"2", Name: "no_args", Arguments: ""},
	}
	tests := []struct {
		name string
		got  []byte
		want string
	}{
		{"assistant text", AppendAssistant(nil, "Hi\n", nil), `{"role":"assistant","content":"Hi\n"}`},
		{"assistant empty", AppendAssistant(nil, "", nil), `{"role":"assistant","content":""}`},
		{"assistant calls only: null content", AppendAssistant(nil, "", calls[:1]),
			`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}}]}`},
		{"assistant text and calls", AppendAssistant(nil, "Checking.", calls),
			`{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\": \"Paris\"}"}},{"id":"call_\"2","type":"function","function":{"name":"no_args","arguments":""}}]}`},
		{"tool", AppendTool(nil, "call_1", "18°C </tool>"), `{"role":"tool","tool_call_id":"call_1","content":"18°C </tool>"}`},
		{"user", AppendUser(nil, "again"), `{"role":"user","content":"again"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if string(tt.got) != tt.want {
				t.Errorf("got  %s\nwant %s", tt.got, tt.want)
			}
			if !json.Valid(tt.got) {
				t.Errorf("not JSON: %s", tt.got)
			}
		})
	}
}

// FuzzMessages: whatever the texts, every message is one valid JSON object
// whose strings decode to the texts given (the model's arguments and a
// tool's result reach the upstream byte for byte).
func FuzzMessages(f *testing.F) {
	f.Add("Checking.", "call_1", "get_weather", `{"city":"Paris"}`, "18°C")
	f.Add("", "", "", "", "\x00\xff</script>\u2028")
	f.Fuzz(func(t *testing.T, content, id, name, args, result string) {
		var a struct {
			Content   *string
			ToolCalls []struct {
				ID       string
				Function struct{ Name, Arguments string }
			} `json:"tool_calls"`
		}
		b := AppendAssistant(nil, content, []ToolCall{{ID: id, Name: name, Arguments: args}})
		if err := json.Unmarshal(b, &a); err != nil {
			t.Fatalf("assistant %q: %v", b, err)
		}
		if len(a.ToolCalls) != 1 || !same(a.ToolCalls[0].ID, id) || !same(a.ToolCalls[0].Function.Arguments, args) ||
			!same(a.ToolCalls[0].Function.Name, name) || content != "" && !same(*a.Content, content) {
			t.Fatalf("assistant %q does not carry its inputs", b)
		}
		var m struct {
			ToolCallID string `json:"tool_call_id"`
			Content    string
		}
		b = AppendTool(nil, id, result)
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatalf("tool %q: %v", b, err)
		}
		if !same(m.ToolCallID, id) || !same(m.Content, result) {
			t.Fatalf("tool %q does not carry its inputs", b)
		}
	})
}

// same compares a decoded string with the text written: invalid UTF-8 is
// written as U+FFFD, which is what a JSON reader gets back.
func same(decoded, written string) bool {
	return decoded == string([]rune(written))
}
