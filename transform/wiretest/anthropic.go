package wiretest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// anthropicDeltas are the delta types each content block type takes.
var anthropicDeltas = map[string]map[string]bool{
	"text":     {"text_delta": true, "citations_delta": true},
	"thinking": {"thinking_delta": true, "signature_delta": true},
	"tool_use": {"input_json_delta": true},
	// The MCP connector's blocks (the mcp-client beta): a call to a tool
	// the gateway runs, and its result, which comes whole.
	"mcp_tool_use":    {"input_json_delta": true},
	"mcp_tool_result": {},
}

// anthropicClient reads the Messages API as the Anthropic SDKs and Claude
// Code do, and sends a request that turns thinking on. Reasoning goes out
// only to such a request: the wire property's requests do not turn it on
// (a choice of the protocol, like jsonseq's for free reasoning), so there
// it has nothing to compare.
var anthropicClient = &Client{
	Protocol: "anthropic", RequestFormat: "anthropic",
	Request: `{"model":"client-model","max_tokens":64,"thinking":{"type":"enabled","budget_tokens":32},` +
		`"messages":[{"role":"user","content":"hi"}],"stream":true}`,
	Missing: missingMessages, Codes: true, CheckReasoning: noReasoning,
	Heartbeat: func(ev encodertest.SSEEvent) bool { return ev.Name == "ping" },
	stream:    checkAnthropic, body: checkAnthropicMessage,
}

// checkAnthropic checks an Anthropic Messages API reply as the API
// streams it and the SDKs accumulate it (@anthropic-ai/sdk MessageStream,
// anthropic-sdk-go Message.Accumulate): with meta.Stream, SSE events whose
// event: line names their type; message_start first (pings aside) and
// once; content
// blocks one at a time, content_block_start at the next index, its deltas
// (of a type its block takes) and content_block_stop only while it is the
// open block; message_delta once, after every block stopped; message_stop
// last; ping anywhere; an error event may end the stream instead. Tool
// use ids are unique. A call to a tool the gateway runs (CONTRACT.md §12)
// is an mcp_tool_use block {id, name, server_name, input}, its result an
// mcp_tool_result block {tool_use_id, is_error, content} for an
// mcp_tool_use before it, once. Without meta.Stream, one Message object,
// or one error object.
func checkAnthropic(out []byte, meta transform.Meta) (Seen, error) {
	if !meta.Stream {
		return checkAnthropicMessage(out)
	}
	var seen Seen
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return seen, err
	}
	var answer, reasoning strings.Builder
	started, delta, stopped := false, false, false
	blocks, open := 0, ""
	tools := map[string]int{}
	for i, e := range evs {
		if e.Comment {
			continue
		}
		fail := func(format string, args ...any) (Seen, error) {
			return seen, fmt.Errorf("event %d %s: %s", i, e.Name, fmt.Sprintf(format, args...))
		}
		if stopped || seen.Failed {
			return fail("after message_stop or error")
		}
		m, err := e.DecodeData()
		if err != nil {
			return seen, err
		}
		if typ, _ := m["type"].(string); typ != e.Name {
			return fail("the event: line names %q, the data's type is %q", e.Name, typ)
		}
		// "Event streams may also include any number of ping events"
		// (Messages API, streaming): one may come before message_start,
		// while the stream waits for the model, and the SDKs skip it.
		if !started && e.Name != "message_start" && e.Name != "error" && e.Name != "ping" {
			return fail("message_start comes first (pings aside)")
		}
		index := func() bool { k, ok := m["index"].(float64); return ok && int(k) == blocks-1 }
		switch e.Name {
		case "message_start":
			msg, _ := m["message"].(map[string]any)
			if started || msg["type"] != "message" || msg["role"] != "assistant" {
				return fail("a second message_start, or no assistant message")
			}
			started = true
		case "content_block_start":
			b, _ := m["content_block"].(map[string]any)
			typ, _ := b["type"].(string)
			if k, _ := m["index"].(float64); open != "" || delta || int(k) != blocks || anthropicDeltas[typ] == nil {
				return fail("block %v of type %q while %q is open, want index %d", m["index"], typ, open, blocks)
			}
			if err := checkToolBlock(b, tools); err != nil {
				return fail("%v", err)
			}
			if typ == "tool_use" {
				name, _ := b["name"].(string)
				seen.ToolCalls = append(seen.ToolCalls, name)
			}
			blocks++
			open = typ
		case "content_block_delta":
			d, _ := m["delta"].(map[string]any)
			typ, _ := d["type"].(string)
			if open == "" || !index() || !anthropicDeltas[open][typ] {
				return fail("%s for block %v, open block %d is %q", typ, m["index"], blocks-1, open)
			}
			switch typ {
			case "text_delta":
				s, _ := d["text"].(string)
				answer.WriteString(s)
			case "thinking_delta":
				s, _ := d["thinking"].(string)
				reasoning.WriteString(s)
			}
		case "content_block_stop":
			if open == "" || !index() {
				return fail("block %v stops, open block %d is %q", m["index"], blocks-1, open)
			}
			open = ""
		case "message_delta":
			if open != "" || delta {
				return fail("message_delta with a block open, or twice")
			}
			delta = true
			d, _ := m["delta"].(map[string]any)
			seen.ToolUse = d["stop_reason"] == "tool_use"
		case "message_stop":
			if !delta {
				return fail("message_stop before message_delta")
			}
			stopped = true
		case "ping":
		case "error":
			if seen = anthropicError(m, seen); seen.Message == "" {
				return fail("error without a message")
			}
		default:
			return fail("no Messages API event")
		}
	}
	if !stopped && !seen.Failed {
		return seen, fmt.Errorf("no message_stop and no error")
	}
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	return seen, nil
}

// anthropicError records the error object of an error event or body,
// {"type": "error", "error": {"type", "message", "details": {"error_code"}}}:
// the code is llmstream's, under details, where Anthropic's own errors
// have none.
func anthropicError(m map[string]any, seen Seen) Seen {
	e, _ := m["error"].(map[string]any)
	details, _ := e["details"].(map[string]any)
	seen.Failed = true
	seen.Code, _ = details["error_code"].(string)
	seen.Message, _ = e["message"].(string)
	return seen
}

// checkAnthropicMessage checks one Message object (or an error object)
// and returns what it holds.
func checkAnthropicMessage(out []byte) (Seen, error) {
	var seen Seen
	var msg struct {
		Type       string            `json:"type"`
		Role       string            `json:"role"`
		StopReason string            `json:"stop_reason"`
		Content    []json.RawMessage `json:"content"`
	}
	if err := json.Unmarshal(out, &msg); err != nil {
		return seen, fmt.Errorf("not one JSON object: %v", err)
	}
	if msg.Type == "error" {
		var m map[string]any
		_ = json.Unmarshal(out, &m)
		if seen = anthropicError(m, seen); seen.Message == "" {
			return seen, fmt.Errorf("error without a message")
		}
		return seen, nil
	}
	if msg.Type != "message" || msg.Role != "assistant" {
		return seen, fmt.Errorf("not an assistant Message: %s", out)
	}
	tools := map[string]int{}
	var answer, reasoning strings.Builder
	for _, raw := range msg.Content {
		var b struct {
			Type     string `json:"type"`
			Text     string `json:"text"`
			Thinking string `json:"thinking"`
			Name     string `json:"name"`
		}
		var block map[string]any
		if json.Unmarshal(raw, &b) != nil || json.Unmarshal(raw, &block) != nil {
			return seen, fmt.Errorf("content block %s", raw)
		}
		switch b.Type {
		case "text":
			answer.WriteString(b.Text)
		case "thinking":
			reasoning.WriteString(b.Thinking)
		case "tool_use", "mcp_tool_use", "mcp_tool_result":
			if err := checkToolBlock(block, tools); err != nil {
				return seen, err
			}
			if b.Type == "tool_use" {
				seen.ToolCalls = append(seen.ToolCalls, b.Name)
			}
		default:
			return seen, fmt.Errorf("content block type %q", b.Type)
		}
	}
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	seen.ToolUse = msg.StopReason == "tool_use"
	return seen, nil
}

// checkToolBlock checks a tool block as it starts (a stream) or whole (a
// Message): tool_use and mcp_tool_use {id, name, input} with an id used
// once (mcp_tool_use also with server_name), mcp_tool_result
// {tool_use_id, is_error, content} for an mcp_tool_use before it, once,
// its content a string or text blocks. tools holds the ids seen: 1 a
// call, 2 an mcp_tool_use whose result came. Other blocks pass.
func checkToolBlock(b map[string]any, tools map[string]int) error {
	typ, _ := b["type"].(string)
	switch typ {
	case "tool_use", "mcp_tool_use":
		id, _ := b["id"].(string)
		name, _ := b["name"].(string)
		_, server := b["server_name"].(string)
		if id == "" || tools[id] != 0 || name == "" || typ == "mcp_tool_use" && !server {
			return fmt.Errorf("%s without a name (or server_name), or id %q empty or used before", typ, id)
		}
		if _, ok := b["input"]; !ok {
			return fmt.Errorf("%s without input", typ)
		}
		tools[id] = 1
		if typ == "mcp_tool_use" {
			tools["mcp:"+id] = 1
		}
	case "mcp_tool_result":
		id, _ := b["tool_use_id"].(string)
		if _, ok := b["is_error"].(bool); !ok || tools["mcp:"+id] != 1 {
			return fmt.Errorf("mcp_tool_result without is_error, or for %q, which is no mcp_tool_use without a result", id)
		}
		tools["mcp:"+id] = 2
		switch c := b["content"].(type) {
		case string:
		case []any:
			for _, p := range c {
				if pm, _ := p.(map[string]any); pm["type"] != "text" {
					return fmt.Errorf("mcp_tool_result content %v is no text block", p)
				}
			}
		default:
			return fmt.Errorf("mcp_tool_result content %v", b["content"])
		}
	}
	return nil
}
