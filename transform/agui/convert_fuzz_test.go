package agui_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/agui"
	"github.com/llmstream/llmstream/transform/request"
)

var convertSeeds = []string{
	`{"threadId":"t","runId":"r","messages":[{"id":"u1","role":"user","content":"hi"}],"tools":[],"context":[],"state":{},"forwardedProps":{}}`,
	`{"threadId":"t","runId":"r2","messages":[{"id":"s","role":"developer","content":"be brief"},{"id":"u1","role":"user","content":"weather?"},` +
		`{"id":"r1","role":"reasoning","content":"think"},{"id":"a1","role":"assistant","content":"Checking.","toolCalls":[` +
		`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
		`{"id":"call_2","type":"function","function":{"name":"search","arguments":"{}"}}]},` +
		`{"id":"t1","role":"tool","toolCallId":"call_1","content":"18°C"},{"id":"t2","role":"tool","toolCallId":"call_2","content":"","error":"boom"}],` +
		`"tools":[{"name":"get_weather","description":"Weather","parameters":{"type":"object"}}],` +
		`"context":[{"description":"User","value":"Ada"}],"state":{"a":[1]},"resume":[]}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":"a\ud800"},{"type":"image","source":{"type":"data","value":"x","mimeType":"image/png"}},` +
		`{"type":"binary","mimeType":"image/gif","data":"R0lG"},{"type":"document","source":{"type":"file","value":"f"}}]}]}`,
	`{"messages":[{"role":"tool","toolCallId":"x","content":[{"type":"text","text":"r"}]},{"role":"assistant","toolCalls":[{"id":"x","function":{"name":"f","arguments":{"k":"v"}}}]}]}`,
	`{"messages":[{"role":"activity","activityType":"PLAN","content":{}},{"role":"assistant","content":""}]}`,
	`{"messages":null}`, `[]`, `{`, ``, `{"messages":[{"role":"user","content":[{"type":"x"}]}],"context":[{"description":"d","value":""}]}`,
}

// FuzzConvert: whatever the body, Convert never panics; it refuses with a
// 400 naming a code, or returns a chat-completions body the openai rules
// accept, whose messages chat-completions servers take (every tool call
// answered by the tool messages right after it, and no tool message
// elsewhere), and which keeps every text the client wrote in its system,
// user and assistant messages.
func FuzzConvert(f *testing.F) {
	for _, s := range convertSeeds {
		f.Add([]byte(s))
	}
	shaper := request.Shaper{
		Format: agui.Format, Model: "m",
		Tools: [][]byte{[]byte(`{"type":"function","function":{"name":"search","parameters":{}}}`)},
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, info, e := agui.Convert(body)
		if e != nil {
			if e.Status != 400 || e.Code == "" || e.Message == "" || out != nil {
				t.Fatalf("refusal %+v with body %q", e, out)
			}
			return
		}
		if _, ok := info.Facts.(agui.Request); !ok || !info.Stream {
			t.Fatalf("info %+v", info)
		}
		texts := checkChat(t, out)
		for _, want := range clientTexts(body) {
			if !strings.Contains(texts, want) {
				t.Fatalf("the client's text %q is lost in %s", want, out)
			}
		}
		if _, _, err := shaper.Rewrite(body, "prompt"); err != nil {
			var re *request.Error
			if !errors.As(err, &re) || re.Status != 400 {
				t.Fatalf("the shaper refused the converted body: %v\n%s", err, out)
			}
		}
	})
}

// chatMessage is an OpenAI message as checkChat reads it.
type chatMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID *string         `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// checkChat checks out, a chat-completions body, and returns its texts
// joined.
func checkChat(t *testing.T, out []byte) string {
	t.Helper()
	var body struct {
		Messages []chatMessage `json:"messages"`
		Tools    []struct {
			Type     string `json:"type"`
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(out, &body); err != nil || body.Messages == nil {
		t.Fatalf("not a chat body: %v\n%s", err, out)
	}
	for _, tool := range body.Tools {
		if tool.Type != "function" || tool.Function.Name == "" {
			t.Fatalf("bad tool in %s", out)
		}
	}
	var texts strings.Builder
	var pending []string // the calls the next messages must answer, in order
	for i, m := range body.Messages {
		if m.Role != "tool" && len(pending) > 0 {
			t.Fatalf("message %d (%s) before the answers to %v:\n%s", i, m.Role, pending, out)
		}
		switch m.Role {
		case "tool":
			if len(pending) == 0 || m.ToolCallID == nil || *m.ToolCallID != pending[0] {
				t.Fatalf("tool message %d answers no call of the message before it (want %v):\n%s", i, pending, out)
			}
			pending = pending[1:]
		case "assistant":
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Arguments == "" {
					t.Fatalf("bad tool call in message %d:\n%s", i, out)
				}
				pending = append(pending, c.ID)
			}
			if len(m.ToolCalls) == 0 && (len(m.Content) == 0 || string(m.Content) == `""` || string(m.Content) == "null") {
				t.Fatalf("an empty assistant message %d:\n%s", i, out)
			}
		case "system", "user":
		default:
			t.Fatalf("role %q:\n%s", m.Role, out)
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			texts.WriteString(s)
		} else {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				texts.WriteString(p.Text)
			}
		}
		texts.WriteString("\x00")
	}
	if len(pending) > 0 {
		t.Fatalf("calls %v unanswered:\n%s", pending, out)
	}
	return texts.String()
}

// clientTexts returns the string contents of the body's system,
// developer, user and assistant messages, and its context values: what
// must reach the model.
func clientTexts(body []byte) []string {
	top := members(body)
	var msgs, context []json.RawMessage
	_ = json.Unmarshal(top["messages"], &msgs)
	_ = json.Unmarshal(top["context"], &context)
	var out []string
	for _, raw := range msgs {
		m := members(raw)
		var role, s string
		_ = json.Unmarshal(m["role"], &role)
		if json.Unmarshal(m["content"], &s) != nil || s == "" {
			continue
		}
		switch role {
		case "system", "developer", "user", "assistant":
			out = append(out, s)
		}
	}
	for _, raw := range context {
		var v string
		if json.Unmarshal(members(raw)["value"], &v) == nil {
			out = append(out, v)
		}
	}
	return out
}

// members returns the members of a JSON object by their exact names, as
// a JavaScript client reads them (nil for anything else).
func members(raw []byte) map[string]json.RawMessage {
	var m map[string]json.RawMessage
	_ = json.Unmarshal(raw, &m)
	return m
}
