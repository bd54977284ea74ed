package conversation

import (
	"encoding/json"
	"fmt"
)

// upstreamMessage is a message of a rebuilt request, decoded.
type upstreamMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
}

// decodeMessages decodes the fragment Messages wrote.
func decodeMessages(fragment []byte) ([]upstreamMessage, error) {
	var msgs []upstreamMessage
	if err := json.Unmarshal(append(append([]byte("["), fragment...), ']'), &msgs); err != nil {
		return nil, fmt.Errorf("not a JSON array fragment: %w: %s", err, fragment)
	}
	return msgs, nil
}

// checkStrict checks what the strictest OpenAI-compatible servers (and
// chat templates that demand alternating roles) require of a request's
// messages: every assistant tool call answered by exactly one tool
// message, right after it; no tool message without its call; no two user
// messages in a row; no empty assistant message; the last message the
// user's or a tool's.
func checkStrict(msgs []upstreamMessage) error {
	for i := 0; i < len(msgs); i++ {
		m := msgs[i]
		switch m.Role {
		case "user":
			if len(m.Content) == 0 || string(m.Content) == `""` || string(m.Content) == "null" {
				return fmt.Errorf("message %d: a user message without content", i)
			}
			if i > 0 && msgs[i-1].Role == "user" {
				return fmt.Errorf("message %d: two user messages in a row", i)
			}
		case "assistant":
			if string(m.Content) == "null" && len(m.ToolCalls) == 0 || string(m.Content) == `""` {
				return fmt.Errorf("message %d: an empty assistant message", i)
			}
			want := map[string]bool{}
			for _, c := range m.ToolCalls {
				if c.ID == "" || c.Type != "function" || c.Function.Name == "" || want[c.ID] {
					return fmt.Errorf("message %d: bad or repeated tool call %+v", i, c)
				}
				want[c.ID] = true
			}
			for len(want) > 0 {
				i++
				if i >= len(msgs) || msgs[i].Role != "tool" {
					return fmt.Errorf("message %d: tool calls %v not answered", i, want)
				}
				if !want[msgs[i].ToolCallID] {
					return fmt.Errorf("message %d: a tool message for %q, which is not an open call", i, msgs[i].ToolCallID)
				}
				var s string
				if json.Unmarshal(msgs[i].Content, &s) != nil || s == "" {
					return fmt.Errorf("message %d: tool content %s is not a non-empty string", i, msgs[i].Content)
				}
				delete(want, msgs[i].ToolCallID)
			}
		case "tool":
			return fmt.Errorf("message %d: a tool message that answers no call", i)
		default:
			return fmt.Errorf("message %d: role %q", i, m.Role)
		}
	}
	if n := len(msgs); n == 0 || msgs[n-1].Role == "assistant" {
		return fmt.Errorf("the request ends with no user or tool message")
	}
	return nil
}
