package responses

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"

	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// Format is the responses request format (CONTRACT.md §11): a Responses
// API body, converted by Convert, refused in OpenAI's error shape.
var Format = &request.Format{Name: "responses", Convert: Convert, AppendError: AppendError}

// Convert turns a Responses API request body (POST /v1/responses) into an
// OpenAI chat-completions body; the route's shaping (system prompt, tools,
// forced streaming) applies to it next. Its Facts are a Request.
//
// What has a chat-completions counterpart is mapped: instructions become
// the first system message, input items become messages (developer and
// system roles become system, function_call items assistant tool_calls,
// function_call_output items tool messages), function tools become chat
// tools, and tool_choice, parallel_tool_calls, max_output_tokens
// (max_tokens), temperature, top_p, presence_penalty, frequency_penalty,
// user, text.format (response_format) and reasoning.effort
// (reasoning_effort) are carried over. A compaction item becomes the
// summary it carries (OpenSummary must have opened it first: Convert
// alone refuses one, as it cannot check it).
//
// What a chat-completions upstream cannot do and what has no counterpart
// is left out and named in Info.LeftOut: hosted tools (web_search, which
// Codex sends on every request, file_search, code_interpreter, custom,
// namespace, …), reasoning items and items of hosted tools. Parameters
// without a counterpart (store, include, metadata, prompt_cache_key,
// truncation, …) are ignored. What would change the answer if it were
// dropped is refused with a 400 naming it, and nothing goes upstream:
// a previous_response_id the HTTP layer did not resolve (Splice removes
// the ones it did), conversation, prompt, background, item_reference
// items, a tool_choice forcing a hosted tool, an image known only by its
// file id.
//
// Convert reads the body once with encoding/json; it never panics, and the
// body's size is bounded by max_request_body before it is called.
func Convert(body []byte) ([]byte, request.Info, *request.Error) {
	root, e := parseBody(body)
	if e != nil {
		return nil, request.Info{}, e
	}
	if e := refuseStored(root); e != nil {
		return nil, request.Info{}, e
	}
	var info request.Info
	switch kindOf(root["stream"]) {
	case 't':
		info.Stream = true
	case 0, 'n', 'f':
	default:
		return nil, request.Info{}, badRequest(CodeInvalidParam, "stream", `"stream" must be a boolean`)
	}

	c := converter{}
	if e := c.instructions(root["instructions"]); e != nil {
		return nil, request.Info{}, e
	}
	if e := c.input(root["input"]); e != nil {
		return nil, request.Info{}, e
	}
	choice, allowed, e := toolChoice(root["tool_choice"])
	if e != nil {
		return nil, request.Info{}, e
	}
	tools, n, e := c.tools(root["tools"], allowed)
	if e != nil {
		return nil, request.Info{}, e
	}

	out := make([]byte, 0, len(body)+256)
	out = append(out, '{')
	first := true
	member := func(name string, raw []byte) {
		if !first {
			out = append(out, ',')
		}
		first = false
		out = jsonout.AppendStringS(out, name)
		out = append(out, ':')
		out = append(out, raw...)
	}
	model := root["model"]
	switch kindOf(model) {
	case '"':
		member("model", model)
	case 0, 'n':
	default:
		return nil, request.Info{}, badRequest(CodeInvalidParam, "model", `"model" must be a string`)
	}
	member("messages", c.appendMessages(nil))
	// tool_choice and parallel_tool_calls mean nothing without tools, and
	// OpenAI refuses them alone; they go only with a function tool.
	if n > 0 {
		member("tools", tools)
		if choice != nil {
			member("tool_choice", choice)
		}
	}
	for _, p := range []struct {
		name, as string
		want     byte // the JSON kind the value must have
	}{
		{"parallel_tool_calls", "parallel_tool_calls", 'b'},
		// max_tokens, not max_completion_tokens: every OpenAI-compatible
		// server knows it.
		{"max_output_tokens", "max_tokens", '0'},
		{"temperature", "temperature", '0'},
		{"top_p", "top_p", '0'},
		{"presence_penalty", "presence_penalty", '0'},
		{"frequency_penalty", "frequency_penalty", '0'},
		{"user", "user", '"'},
	} {
		raw := root[p.name]
		k := kindOf(raw)
		if k == 't' || k == 'f' {
			k = 'b'
		}
		switch {
		case k == 0 || k == 'n':
			continue
		case k != p.want:
			return nil, request.Info{}, badRequest(CodeInvalidParam, p.name, `"`+p.name+`" has the wrong type`)
		case p.name == "parallel_tool_calls" && n == 0:
			continue
		}
		v, _ := jsonout.AppendCompact(nil, raw)
		if v == nil {
			v = raw // invalid UTF-8 in a user string: forwarded as sent
		}
		member(p.as, v)
	}
	format, e := responseFormat(root["text"])
	if e != nil {
		return nil, request.Info{}, e
	}
	if format != nil {
		member("response_format", format)
	}
	effort, e := reasoningEffort(root["reasoning"])
	if e != nil {
		return nil, request.Info{}, e
	}
	if effort != nil {
		member("reasoning_effort", effort)
	}
	out = append(out, '}')

	info.Facts = echo(root)
	info.LeftOut = strings.Join(c.leftOut, " ")
	info.Approvals = c.approvals
	return out, info, nil
}

// parseBody decodes the body's top level, each member's value kept raw.
// A map keys members exactly (a struct would match them case-blind), and a
// member sent twice counts once, the last, as most JSON servers read it.
func parseBody(body []byte) (map[string]json.RawMessage, *request.Error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest(request.CodeInvalidJSON, "", "request body is empty")
	}
	if !json.Valid(body) {
		return nil, badRequest(request.CodeInvalidJSON, "", "request body is not valid JSON")
	}
	if kindOf(body) != '{' {
		return nil, badRequest(request.CodeInvalidBody, "", "request body must be a JSON object")
	}
	var root map[string]json.RawMessage
	if err := json.Unmarshal(body, &root); err != nil {
		return nil, badRequest(request.CodeInvalidBody, "", "request body must be a JSON object")
	}
	return root, nil
}

// refuseStored refuses what needs state kept between requests that the
// HTTP layer did not provide, or a run llmstream does not do: the answer
// would change if it were dropped. A previous_response_id still in the
// body was not resolved by the HTTP layer (it found no such response for
// this client, or the route keeps none): OpenAI's own answer for an
// unknown id.
func refuseStored(root map[string]json.RawMessage) *request.Error {
	switch prev := root["previous_response_id"]; kindOf(prev) {
	case 0, 'n':
	case '"':
		var id string
		_ = json.Unmarshal(prev, &id)
		if id != "" {
			return badRequest(CodePreviousResponseNotFound, "previous_response_id",
				"previous response with id '"+printable(id)+"' not found")
		}
	default:
		return badRequest(CodeInvalidParam, "previous_response_id", `"previous_response_id" must be a string`)
	}
	for _, name := range []string{"conversation", "prompt"} {
		if k := kindOf(root[name]); k != 0 && k != 'n' {
			return badRequest(CodeUnsupported, name, `"`+name+`" refers to state stored by OpenAI, which llmstream does not have: `+
				"send the conversation in input, or continue it with previous_response_id")
		}
	}
	if kindOf(root["background"]) == 't' {
		return badRequest(CodeUnsupported, "background", "background responses are not supported: stream the response instead")
	}
	return nil
}

// printable returns s cut to 64 bytes of printable ASCII, for an id
// echoed in an error message.
func printable(s string) string {
	b := make([]byte, 0, min(len(s), 64))
	for i := 0; i < len(s) && len(b) < 64; i++ {
		if c := s[i]; c >= 0x20 && c < 0x7f {
			b = append(b, c)
		}
	}
	return string(b)
}

// kindOf returns the kind of a raw JSON value by its first byte: '{', '[',
// '"', 't', 'f', 'n', '0' for a number, and 0 for none (absent).
func kindOf(raw []byte) byte {
	for _, b := range raw {
		switch b {
		case ' ', '\t', '\n', '\r':
			continue
		case '{', '[', '"', 't', 'f', 'n':
			return b
		case '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
			return '0'
		}
		return b
	}
	return 0
}

// responseFormat returns the response_format for the text parameter:
// text.format json_schema {name, schema, strict, description} becomes
// {"type":"json_schema","json_schema":{…}}, json_object stays itself, and
// text (the default) gives none.
func responseFormat(raw json.RawMessage) ([]byte, *request.Error) {
	switch kindOf(raw) {
	case 0, 'n':
		return nil, nil
	case '{':
	default:
		return nil, badRequest(CodeInvalidParam, "text", `"text" must be an object`)
	}
	var text struct {
		Format map[string]json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(raw, &text); err != nil {
		return nil, badRequest(CodeInvalidParam, "text.format", `"text.format" must be an object`)
	}
	if text.Format == nil {
		return nil, nil
	}
	switch typ := stringOf(text.Format["type"]); typ {
	case "", "text":
		return nil, nil
	case "json_object":
		return []byte(`{"type":"json_object"}`), nil
	case "json_schema":
		out := []byte(`{"type":"json_schema","json_schema":{`)
		n := 0
		for _, name := range []string{"name", "description", "schema", "strict"} {
			v, ok := jsonout.AppendCompact(nil, text.Format[name])
			if !ok || kindOf(v) == 'n' {
				continue
			}
			if n > 0 {
				out = append(out, ',')
			}
			n++
			out = jsonout.AppendStringS(out, name)
			out = append(out, ':')
			out = append(out, v...)
		}
		return append(out, "}}"...), nil
	default:
		return nil, badRequest(CodeInvalidParam, "text.format.type", "text.format type "+safeName(typ)+" is not text, json_object or json_schema")
	}
}

// reasoningEffort returns the reasoning_effort for the reasoning
// parameter's effort; its summary has no counterpart.
func reasoningEffort(raw json.RawMessage) ([]byte, *request.Error) {
	switch kindOf(raw) {
	case 0, 'n':
		return nil, nil
	case '{':
	default:
		return nil, badRequest(CodeInvalidParam, "reasoning", `"reasoning" must be an object`)
	}
	var r map[string]json.RawMessage
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, badRequest(CodeInvalidParam, "reasoning", `"reasoning" must be an object`)
	}
	if kindOf(r["effort"]) != '"' {
		return nil, nil
	}
	v, _ := jsonout.AppendCompact(nil, r["effort"])
	return v, nil
}

// stringOf returns the value of a raw JSON string, "" for anything else.
func stringOf(raw json.RawMessage) string {
	var s string
	if kindOf(raw) != '"' || json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// safeName returns a type or tool kind the client sent as it may appear in
// a log or an error message: lower-case letters, digits and _.- up to 48
// bytes, else "other". Those names are protocol vocabulary, and anything
// else could be prompt text, which never reaches a log.
func safeName(s string) string {
	if s == "" || len(s) > 48 {
		return "other"
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '_' || c == '.' || c == '-') {
			return "other"
		}
	}
	return s
}

// echo returns the Request the encoder repeats in the Response object.
func echo(root map[string]json.RawMessage) Request {
	get := func(name string) json.RawMessage {
		raw := root[name]
		if k := kindOf(raw); k == 0 || k == 'n' {
			return nil
		}
		v, ok := jsonout.AppendCompact(nil, raw)
		if !ok {
			return nil
		}
		return v
	}
	return Request{
		Instructions:      get("instructions"),
		MaxOutputTokens:   get("max_output_tokens"),
		ParallelToolCalls: get("parallel_tool_calls"),
		Reasoning:         get("reasoning"),
		Temperature:       get("temperature"),
		Text:              get("text"),
		ToolChoice:        get("tool_choice"),
		Tools:             get("tools"),
		TopP:              get("top_p"),
		Truncation:        get("truncation"),
		User:              get("user"),
		Metadata:          get("metadata"),
		PresencePenalty:   get("presence_penalty"),
		FrequencyPenalty:  get("frequency_penalty"),
		TopLogprobs:       get("top_logprobs"),
		MaxToolCalls:      get("max_tool_calls"),
		SafetyIdentifier:  get("safety_identifier"),
		PromptCacheKey:    get("prompt_cache_key"),
		// OpenAI's default: a response is stored unless the client says
		// store: false.
		Store: kindOf(root["store"]) != 'f',
	}
}

// unsupported returns the 400 for something that cannot be left out.
func unsupported(param, msg string) *request.Error {
	return &request.Error{Status: http.StatusBadRequest, Code: CodeUnsupported, Param: param, Message: msg}
}
