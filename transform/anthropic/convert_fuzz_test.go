package anthropic_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/anthropic"
	"github.com/llmstream/llmstream/transform/request"
)

var convertSeeds = []string{
	`{"model":"claude-x","max_tokens":1024,"messages":[{"role":"user","content":"Hello"}]}`,
	`{"model":"m","system":[{"type":"text","text":"S","cache_control":{"type":"ephemeral"}}],"messages":[{"role":"user","content":[` +
		`{"type":"text","text":"a"},{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBO"}}]},` +
		`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":"s"},{"type":"text","text":"b"},` +
		`{"type":"tool_use","id":"toolu_1","name":"f","input":{"x":[1,"\u00e9"]}}]},` +
		`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","is_error":true,"content":[{"type":"text","text":"boom"},` +
		`{"type":"image","source":{"type":"url","url":"https://x/i.png"}}]},{"type":"text","text":"go on"}]}],` +
		`"tools":[{"name":"f","description":"d","input_schema":{"type":"object"}}],"tool_choice":{"type":"auto","disable_parallel_tool_use":true},` +
		`"stream":true,"thinking":{"type":"enabled","budget_tokens":1024},"stop_sequences":["x"],"temperature":1}`,
	`{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"content","content":"doc"}},` +
		`{"type":"document","source":{"type":"base64","media_type":"application/pdf","data":"JVBE"}}]}]}`,
	`{"messages":[{"role":"system","content":"s"},{"role":"assistant","content":[]}],"tools":[{"type":"web_search_20250305","name":"web_search"}]}`,
	`{"messages":[{"role":"user","content":"x"}],"tool_choice":{"type":"tool","name":"f"},"thinking":{"type":"adaptive"},"mcp_servers":[]}`,
	`{"messages":[{"role":"user","content":[{"type":"text","text":"a\ud800"}]}],"model":"\u00e9","max_tokens":1e3}`,
	`{"messages":null}`, `[]`, `{`, ``, `{"messages":[{"role":"user","content":[{"type":"x"}]}]}`,
	// The agent loop's rounds sent back (CONTRACT.md §12).
	`{"messages":[{"role":"user","content":"q"},` + mcpTurn + `,{"role":"user","content":[` +
		`{"type":"mcp_tool_result","tool_use_id":"call_9","is_error":true,"content":"x"},{"type":"text","text":"next"}]}]}`,
	`{"messages":[{"role":"assistant","content":[{"type":"mcp_tool_use","id":"a","name":"f","server_name":"s","input":{}},` +
		`{"type":"tool_use","id":"b","name":"g","input":{}},{"type":"text","text":"t"}]},{"role":"system","content":"s"}]}`,
}

// FuzzConvert: whatever the body, Convert never panics; it refuses with a
// 400 naming a code, or returns a chat-completions body that the openai
// rules accept, whose messages are well-formed, and which keeps every text
// the client wrote.
func FuzzConvert(f *testing.F) {
	for _, s := range convertSeeds {
		f.Add([]byte(s))
	}
	shaper := request.Shaper{
		Format: &request.Format{Name: "anthropic", Convert: anthropic.Convert},
		Tools:  [][]byte{[]byte(`{"type":"function","function":{"name":"search","parameters":{}}}`)},
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		_ = anthropic.EstimateTokens(body) // any bytes: no panic
		out, info, e := anthropic.Convert(body)
		if e != nil {
			if e.Status != 400 || e.Code == "" || e.Message == "" || out != nil {
				t.Fatalf("refusal %+v with body %q", e, out)
			}
			return
		}
		if facts, _ := info.Facts.(anthropic.Request); facts.InputTokens != anthropic.EstimateTokens(out) {
			t.Fatalf("InputTokens %d, estimate %d", facts.InputTokens, anthropic.EstimateTokens(out))
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

// checkChat checks a converted body's messages and returns every text in
// them, joined.
func checkChat(t *testing.T, out []byte) string {
	t.Helper()
	var body struct {
		Messages []chatMessage `json:"messages"`
	}
	if err := json.Unmarshal(out, &body); err != nil || body.Messages == nil {
		t.Fatalf("not a chat body (%v): %s", err, out)
	}
	var texts strings.Builder
	for i, m := range body.Messages {
		var s string
		isString := false
		var parts []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		}
		switch {
		case string(m.Content) == "null":
			if m.Role != "assistant" || len(m.ToolCalls) == 0 {
				t.Fatalf("message %d: null content without tool calls: %s", i, out)
			}
		case json.Unmarshal(m.Content, &s) == nil:
			isString = true
			texts.WriteString(s + "\x00")
		case json.Unmarshal(m.Content, &parts) == nil && m.Role == "user" && len(parts) > 0:
			for _, p := range parts {
				texts.WriteString(p.Text + "\x00")
			}
		default:
			t.Fatalf("message %d: content %s", i, m.Content)
		}
		switch m.Role {
		case "tool":
			if m.ToolCallID == nil || !isString {
				t.Fatalf("message %d: tool message %s", i, out)
			}
		case "system", "user", "assistant":
		default:
			t.Fatalf("message %d: role %q", i, m.Role)
		}
		for _, c := range m.ToolCalls {
			var args map[string]any
			if c.Type != "function" || json.Unmarshal([]byte(c.Function.Arguments), &args) != nil {
				t.Fatalf("message %d: tool call %+v", i, c)
			}
		}
	}
	return texts.String()
}

// clientTexts returns the texts a Messages API body holds for the model:
// string contents, text blocks and string tool results, of every role.
func clientTexts(body []byte) []string {
	var req struct {
		System   json.RawMessage `json:"system"`
		Messages []struct {
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if json.Unmarshal(body, &req) != nil {
		return nil
	}
	var out []string
	var add func(raw json.RawMessage)
	add = func(raw json.RawMessage) {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			out = append(out, s)
			return
		}
		var blocks []struct {
			Type    string          `json:"type"`
			Text    string          `json:"text"`
			Content json.RawMessage `json:"content"`
		}
		if json.Unmarshal(raw, &blocks) != nil {
			return
		}
		for _, b := range blocks {
			switch b.Type {
			case "text":
				out = append(out, b.Text)
			case "tool_result":
				if len(b.Content) > 0 {
					add(b.Content)
				}
			}
		}
	}
	add(req.System)
	for _, m := range req.Messages {
		add(m.Content)
	}
	return out
}
