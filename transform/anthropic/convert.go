package anthropic

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// Convert turns a Messages API body (POST /v1/messages, or the
// count_tokens body, which is the same without max_tokens) into an OpenAI
// chat-completions body for request.Format.Convert; the openai rules
// (system prompt, tools, forced streaming) apply to it next.
//
//   - system (a string or text blocks) becomes the first system message;
//     messages become OpenAI messages (convertMessages); tools with an
//     input_schema become function tools and tool_choice its OpenAI
//     counterpart (convertTools).
//   - model, max_tokens, temperature and top_p are copied, stop_sequences
//     becomes stop. top_k has no chat-completions field (OpenAI refuses
//     unknown ones) and metadata.user_id identifies a user to Anthropic,
//     not to the upstream: neither is forwarded. Neither are
//     cache_control, service_tier, container and the other Anthropic-only
//     settings, which change how Anthropic serves a request, not what the
//     model reads. thinking is not forwarded either (chat completions has
//     no portable switch for it) but decides whether the reply's reasoning
//     reaches the client (Request.Thinking).
//   - stream says whether the client gets events or one Message
//     (Info.Stream; false when absent, the Messages API default).
//
// What an OpenAI-compatible upstream cannot do is refused with a 400 that
// names it, rather than silently dropped: server tools and Anthropic-
// defined tools (web_search, bash, text_editor, computer, …), MCP
// servers, Files API sources, and block types it does not know.
func Convert(body []byte) ([]byte, request.Info, *request.Error) {
	if len(body) == 0 {
		return nil, request.Info{}, badRequest(request.CodeInvalidJSON, "request body is empty")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		if !json.Valid(body) {
			return nil, request.Info{}, badRequest(request.CodeInvalidJSON, "request body is not valid JSON")
		}
		return nil, request.Info{}, badRequest(request.CodeInvalidBody, "request body must be a JSON object")
	}
	c := converter{out: make([]byte, 0, len(body)+256)}
	info, e := c.convert(top)
	if e != nil {
		return nil, request.Info{}, e
	}
	return c.out, info, nil
}

// converter writes the chat-completions body. The Messages API body is
// decoded with encoding/json once per request: it is the client's, read
// once, and bounded by max_request_body.
type converter struct {
	out []byte
}

func (c *converter) convert(top map[string]json.RawMessage) (request.Info, *request.Error) {
	var info request.Info
	var facts Request
	c.out = append(c.out, '{')
	if raw := present(top["model"]); raw != nil {
		var model string
		if json.Unmarshal(raw, &model) != nil {
			return info, invalid("model: must be a string")
		}
		c.out = append(c.out, `"model":`...)
		c.out = jsonout.AppendStringS(c.out, model)
		c.out = append(c.out, ',')
	}
	c.out = append(c.out, `"messages":[`...)
	msgs := present(top["messages"])
	if msgs == nil {
		return info, badRequest(request.CodeMissingMessages, "messages: field required")
	}
	var list []json.RawMessage
	if json.Unmarshal(msgs, &list) != nil {
		return info, badRequest(request.CodeInvalidMessages, "messages: must be an array")
	}
	tools, e := readTools(top["tools"])
	if e != nil {
		return info, e
	}
	w := messageWriter{c: c, tools: tools}
	if e := w.system(top["system"]); e != nil {
		return info, e
	}
	for i, m := range list {
		if e := w.message(i, m); e != nil {
			return info, e
		}
	}
	w.settle()
	c.out = append(c.out, ']')

	for _, name := range [...]string{"max_tokens", "temperature", "top_p"} {
		if e := c.number(top, name, name); e != nil {
			return info, e
		}
	}
	if e := c.stop(top["stop_sequences"]); e != nil {
		return info, e
	}
	if e := c.tools(tools, top["tool_choice"]); e != nil {
		return info, e
	}
	if raw := present(top["mcp_servers"]); raw != nil && !bytes.Equal(raw, []byte("[]")) {
		return info, unsupported("mcp_servers: the MCP connector runs on Anthropic's servers; an OpenAI-compatible upstream cannot reach MCP servers")
	}
	c.out = append(c.out, '}')

	if raw := present(top["stream"]); raw != nil {
		if json.Unmarshal(raw, &info.Stream) != nil {
			return info, invalid("stream: must be a boolean")
		}
	}
	if facts.Thinking, e = thinking(top["thinking"]); e != nil {
		return info, e
	}
	facts.InputTokens = EstimateTokens(c.out)
	info.Facts = facts
	return info, nil
}

// number copies top-level member name, which must be a number, as the
// chat-completions member as.
func (c *converter) number(top map[string]json.RawMessage, name, as string) *request.Error {
	raw := present(top[name])
	if raw == nil {
		return nil
	}
	var n json.Number
	if json.Unmarshal(raw, &n) != nil {
		return invalid(name + ": must be a number")
	}
	c.out = append(c.out, ',')
	c.out = jsonout.AppendStringS(c.out, as)
	c.out = append(c.out, ':')
	c.out = append(c.out, n...)
	return nil
}

// stop copies stop_sequences as stop; an empty list sends none.
func (c *converter) stop(raw json.RawMessage) *request.Error {
	if raw = present(raw); raw == nil {
		return nil
	}
	var seqs []string
	if json.Unmarshal(raw, &seqs) != nil {
		return invalid("stop_sequences: must be an array of strings")
	}
	if len(seqs) == 0 {
		return nil
	}
	c.out = append(c.out, `,"stop":`...)
	c.out = jsonout.AppendStrings(c.out, seqs)
	return nil
}

// thinking reads the thinking setting: enabled, adaptive and
// between_tools show the reasoning, unless its display is "omitted";
// disabled or absent leave it out.
func thinking(raw json.RawMessage) (bool, *request.Error) {
	if raw = present(raw); raw == nil {
		return false, nil
	}
	var t struct {
		Type    string `json:"type"`
		Display string `json:"display"`
	}
	if json.Unmarshal(raw, &t) != nil {
		return false, invalid("thinking: must be an object")
	}
	switch t.Type {
	case "enabled", "adaptive", "between_tools":
		return t.Display != "omitted", nil
	case "disabled":
		return false, nil
	}
	return false, invalid("thinking.type: must be enabled, adaptive, between_tools or disabled, got " + strconv.Quote(t.Type))
}

// present returns raw, or nil when it is absent or JSON null: the SDKs
// send null for optional fields left unset.
func present(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// badRequest returns a 400 with code.
func badRequest(code, msg string) *request.Error {
	return &request.Error{Status: http.StatusBadRequest, Code: code, Message: msg}
}

// invalid returns the 400 of a field with the wrong type or value.
func invalid(msg string) *request.Error { return badRequest(CodeInvalidRequest, msg) }

// unsupported returns the 400 of something an OpenAI-compatible upstream
// cannot serve.
func unsupported(msg string) *request.Error { return badRequest(CodeUnsupported, msg) }
