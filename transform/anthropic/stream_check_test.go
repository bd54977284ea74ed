package anthropic_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/llmstream/llmstream/transform/encodertest"
)

// assembled is a Message put together from a stream the way the SDKs'
// accumulators do (@anthropic-ai/sdk MessageStream#accumulateMessage,
// anthropic-sdk-go Message.Accumulate), checked by the rules they and
// Claude Code enforce.
type assembled struct {
	id, model   string
	blocks      []content
	stopReason  string
	usage       map[string]any
	inputAtOpen float64 // message_start's usage.input_tokens
	err         *apiError
	events      int
	ended       bool // message_stop or error came last
}

// content is one content block: its type, its text (text, thinking, or
// the concatenated partial_json of a tool_use), and a tool's id and name.
type content struct {
	Type, Text, ID, Name string
}

// String renders a block for test tables: "text:…", "thinking:…",
// "tool_use:id name input".
func (c content) String() string {
	switch c.Type {
	case "tool_use", "mcp_tool_use":
		return c.Type + ":" + c.ID + " " + c.Name + " " + c.Text
	case "mcp_tool_result":
		return c.Type + ":" + c.ID + " " + c.Name + " " + c.Text
	}
	return c.Type + ":" + c.Text
}

// checkMCPResult checks an mcp_tool_result block {type, tool_use_id,
// is_error, content: [{type: text, text}]} (the MCP connector's, as the
// beta SDKs type it) for a call whose mcp_tool_use came before, once, and
// fills b: ID the call, Name "error" or "ok", Text the result.
func checkMCPResult(cb map[string]any, b *content, calls map[string]int) error {
	if err := exactKeys(cb, "type", "tool_use_id", "is_error", "content"); err != nil {
		return err
	}
	b.ID, _ = cb["tool_use_id"].(string)
	isErr, ok := cb["is_error"].(bool)
	parts, _ := cb["content"].([]any)
	if !ok || calls[b.ID] != 1 || len(parts) != 1 {
		return fmt.Errorf("mcp_tool_result %v: no is_error, one text part, or mcp_tool_use before it", cb)
	}
	calls[b.ID] = 2
	p, _ := parts[0].(map[string]any)
	if err := exactKeys(p, "type", "text"); err != nil || p["type"] != "text" {
		return fmt.Errorf("mcp_tool_result content %v", p)
	}
	b.Text, _ = p["text"].(string)
	b.Name = "ok"
	if isErr {
		b.Name = "error"
	}
	return nil
}

type apiError struct {
	Type, Message, Code string
}

// checkStream reads an Anthropic event stream strictly: every event is
// named (the SDKs skip unnamed ones) and its data's type is its name;
// message_start comes first (pings aside), once; blocks start at the next
// index with no other block open (the Messages API's order: Claude Code
// refuses deltas to stopped blocks and runs a tool when its block stops),
// take only deltas of their own kind and stop once; message_delta comes
// with no block open, then message_stop ends the stream; or an error event
// ends it, with Anthropic's error shape. A stream fed no terminal event
// may stop anywhere; ended says whether it ended.
func checkStream(out []byte) (*assembled, error) {
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return nil, err
	}
	a := &assembled{}
	open := -1
	var delta, stopped bool
	mcpCalls := map[string]int{} // mcp_tool_use id: 1 started, 2 resulted
	for i, e := range evs {
		if e.Comment {
			return nil, fmt.Errorf("event %d: an SSE comment; the keep-alive is a ping event", i)
		}
		if a.err != nil || stopped {
			return nil, fmt.Errorf("event %d (%s) after the end", i, e.Name)
		}
		m, err := e.DecodeData()
		if err != nil {
			return nil, err
		}
		if e.Name == "" || m["type"] != e.Name {
			return nil, fmt.Errorf("event %d: name %q, data type %v", i, e.Name, m["type"])
		}
		a.events++
		if e.Name != "ping" && e.Name != "error" && e.Name != "message_start" && a.id == "" {
			return nil, fmt.Errorf("event %d (%s) before message_start", i, e.Name)
		}
		switch e.Name {
		case "ping":
			if len(m) != 1 {
				return nil, fmt.Errorf("ping with data %s", e.Data)
			}
		case "message_start":
			if a.id != "" {
				return nil, fmt.Errorf("a second message_start")
			}
			msg, _ := m["message"].(map[string]any)
			if err := exactKeys(msg, "id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"); err != nil {
				return nil, err
			}
			a.id, _ = msg["id"].(string)
			a.model, _ = msg["model"].(string)
			c, ok := msg["content"].([]any)
			usage, _ := msg["usage"].(map[string]any)
			in, inOK := usage["input_tokens"].(float64)
			_, outOK := usage["output_tokens"].(float64)
			if a.id == "" || msg["type"] != "message" || msg["role"] != "assistant" || !ok || len(c) != 0 ||
				msg["stop_reason"] != nil || msg["stop_sequence"] != nil || !inOK || !outOK {
				return nil, fmt.Errorf("message_start: %s", e.Data)
			}
			a.inputAtOpen = in
		case "content_block_start":
			idx, _ := m["index"].(float64)
			if open >= 0 || int(idx) != len(a.blocks) {
				return nil, fmt.Errorf("content_block_start %v while block %d is open, %d started", m["index"], open, len(a.blocks))
			}
			cb, _ := m["content_block"].(map[string]any)
			b := content{}
			b.Type, _ = cb["type"].(string)
			switch b.Type {
			case "text":
				err = exactKeys(cb, "type", "text")
				if err == nil && cb["text"] != "" {
					err = fmt.Errorf("text block starts with text %v", cb["text"])
				}
			case "thinking":
				err = exactKeys(cb, "type", "thinking", "signature")
				if err == nil && (cb["thinking"] != "" || cb["signature"] != "") {
					err = fmt.Errorf("thinking block starts with %s", e.Data)
				}
			case "tool_use":
				err = exactKeys(cb, "type", "id", "name", "input")
				b.ID, _ = cb["id"].(string)
				b.Name, _ = cb["name"].(string)
				if in, ok := cb["input"].(map[string]any); err == nil && (b.ID == "" || !ok || len(in) != 0) {
					err = fmt.Errorf("tool_use block starts without id or with input: %s", e.Data)
				}
			case "mcp_tool_use":
				err = exactKeys(cb, "type", "id", "name", "server_name", "input")
				b.ID, _ = cb["id"].(string)
				b.Name, _ = cb["name"].(string)
				_, srv := cb["server_name"].(string)
				if in, ok := cb["input"].(map[string]any); err == nil && (b.ID == "" || !srv || !ok || len(in) != 0 || mcpCalls[b.ID] != 0) {
					err = fmt.Errorf("mcp_tool_use block starts without id or server_name, with input, or twice: %s", e.Data)
				}
				mcpCalls[b.ID] = 1
			case "mcp_tool_result":
				err = checkMCPResult(cb, &b, mcpCalls)
			default:
				err = fmt.Errorf("block type %q", b.Type)
			}
			if err != nil {
				return nil, err
			}
			open = len(a.blocks)
			a.blocks = append(a.blocks, b)
		case "content_block_delta":
			idx, _ := m["index"].(float64)
			if open < 0 || int(idx) != open {
				return nil, fmt.Errorf("delta to block %v, open %d", m["index"], open)
			}
			d, _ := m["delta"].(map[string]any)
			b := &a.blocks[open]
			want := map[string]string{"text": "text_delta", "thinking": "thinking_delta", "tool_use": "input_json_delta", "mcp_tool_use": "input_json_delta"}[b.Type]
			field := map[string]string{"text": "text", "thinking": "thinking", "tool_use": "partial_json", "mcp_tool_use": "partial_json"}[b.Type]
			s, ok := d[field].(string)
			if d["type"] != want || !ok || len(d) != 2 {
				return nil, fmt.Errorf("delta %s to a %s block", e.Data, b.Type)
			}
			if s == "" {
				return nil, fmt.Errorf("empty delta: %s", e.Data)
			}
			b.Text += s
		case "content_block_stop":
			idx, _ := m["index"].(float64)
			if open < 0 || int(idx) != open || len(m) != 2 {
				return nil, fmt.Errorf("content_block_stop %v, open %d", m["index"], open)
			}
			open = -1
		case "message_delta":
			if open >= 0 || delta {
				return nil, fmt.Errorf("message_delta with block %d open, or twice", open)
			}
			delta = true
			d, _ := m["delta"].(map[string]any)
			a.stopReason, _ = d["stop_reason"].(string)
			switch a.stopReason {
			case "end_turn", "tool_use", "max_tokens", "refusal":
			default:
				return nil, fmt.Errorf("stop_reason %q", a.stopReason)
			}
			if _, ok := d["stop_sequence"]; !ok || d["stop_sequence"] != nil || len(d) != 2 {
				return nil, fmt.Errorf("message_delta.delta %s", e.Data)
			}
			a.usage, _ = m["usage"].(map[string]any)
			if _, ok := a.usage["output_tokens"].(float64); !ok {
				return nil, fmt.Errorf("message_delta without usage.output_tokens: %s", e.Data)
			}
		case "message_stop":
			if !delta || len(m) != 1 {
				return nil, fmt.Errorf("message_stop before message_delta")
			}
			stopped = true
		case "error":
			if a.err, err = readError(m); err != nil {
				return nil, err
			}
		default:
			return nil, fmt.Errorf("unknown event %q", e.Name)
		}
	}
	a.ended = a.err != nil || stopped
	return a, nil
}

// readError checks Anthropic's error shape {"type":"error","error":{type,
// message, details:{error_code}}, request_id}.
func readError(m map[string]any) (*apiError, error) {
	eo, _ := m["error"].(map[string]any)
	if err := exactKeys(m, "type", "error", "request_id"); err != nil {
		return nil, err
	}
	if err := exactKeys(eo, "type", "message", "details"); err != nil {
		return nil, err
	}
	details, _ := eo["details"].(map[string]any)
	e := &apiError{}
	e.Type, _ = eo["type"].(string)
	e.Message, _ = eo["message"].(string)
	e.Code, _ = details["error_code"].(string)
	if m["type"] != "error" || e.Type == "" || e.Message == "" || e.Code == "" || len(details) != 1 {
		return nil, fmt.Errorf("error object %v", m)
	}
	return e, nil
}

// whole is a Message as the SDKs type it.
type whole struct {
	ID           string `json:"id"`
	Type         string `json:"type"`
	Role         string `json:"role"`
	Model        string `json:"model"`
	Content      []json.RawMessage
	StopReason   string         `json:"stop_reason"`
	StopSequence any            `json:"stop_sequence"`
	Usage        map[string]any `json:"usage"`
}

// checkWhole checks a body that is not a stream: one JSON object and a
// newline, a Message with status 200 or an error with 502/504. It returns
// the Message assembled as checkStream does.
func checkWhole(out []byte, status int) (*assembled, error) {
	s := string(out)
	if !strings.HasSuffix(s, "\n") || strings.Count(s, "\n") != 1 {
		return nil, fmt.Errorf("body is not one line: %q", s)
	}
	var m map[string]any
	if err := json.Unmarshal(out, &m); err != nil {
		return nil, fmt.Errorf("body: %v: %s", err, s)
	}
	if m["type"] == "error" {
		if status != http.StatusBadGateway && status != http.StatusGatewayTimeout {
			return nil, fmt.Errorf("error body with status %d", status)
		}
		e, err := readError(m)
		return &assembled{err: e}, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("Message with status %d", status)
	}
	if err := exactKeys(m, "id", "type", "role", "model", "content", "stop_reason", "stop_sequence", "usage"); err != nil {
		return nil, err
	}
	var w whole
	if err := json.Unmarshal(out, &w); err != nil {
		return nil, err
	}
	if w.ID == "" || w.Type != "message" || w.Role != "assistant" || w.StopReason == "" || w.StopSequence != nil {
		return nil, fmt.Errorf("message: %s", s)
	}
	if _, ok := w.Usage["input_tokens"].(float64); !ok {
		return nil, fmt.Errorf("usage without input_tokens: %s", s)
	}
	if _, ok := w.Usage["output_tokens"].(float64); !ok {
		return nil, fmt.Errorf("usage without output_tokens: %s", s)
	}
	a := &assembled{id: w.ID, model: w.Model, stopReason: w.StopReason, usage: w.Usage}
	mcpCalls := map[string]int{}
	for _, raw := range w.Content {
		var cb map[string]any
		if err := json.Unmarshal(raw, &cb); err != nil {
			return nil, err
		}
		b := content{}
		b.Type, _ = cb["type"].(string)
		var err error
		switch b.Type {
		case "text":
			err = exactKeys(cb, "type", "text")
			b.Text, _ = cb["text"].(string)
		case "thinking":
			err = exactKeys(cb, "type", "thinking", "signature")
			b.Text, _ = cb["thinking"].(string)
		case "tool_use":
			err = exactKeys(cb, "type", "id", "name", "input")
			b.ID, _ = cb["id"].(string)
			b.Name, _ = cb["name"].(string)
			var in struct {
				Input json.RawMessage `json:"input"`
			}
			_ = json.Unmarshal(raw, &in)
			b.Text = string(in.Input)
		case "mcp_tool_use":
			err = exactKeys(cb, "type", "id", "name", "server_name", "input")
			b.ID, _ = cb["id"].(string)
			b.Name, _ = cb["name"].(string)
			mcpCalls[b.ID] = 1
			var in struct {
				Input json.RawMessage `json:"input"`
			}
			_ = json.Unmarshal(raw, &in)
			b.Text = string(in.Input)
		case "mcp_tool_result":
			err = checkMCPResult(cb, &b, mcpCalls)
		default:
			err = fmt.Errorf("block type %q", b.Type)
		}
		if err != nil {
			return nil, err
		}
		a.blocks = append(a.blocks, b)
	}
	return a, nil
}

func exactKeys(m map[string]any, keys ...string) error {
	if len(m) != len(keys) {
		return fmt.Errorf("fields %v, want %v", m, keys)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("fields %v lack %s", m, k)
		}
	}
	return nil
}
