package agui

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform/chatmsg"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// contextHeading opens the system message that carries a run's context.
const contextHeading = "## Context from the application\n"

// Convert turns a RunAgentInput (what HttpAgent posts: threadId, runId,
// messages, tools, context, state, forwardedProps, AG-UI 1.0 and 0.0.x)
// into an OpenAI chat-completions body for request.Format.Convert; the
// openai rules (the route's model, system prompt and tools, forced
// streaming) apply to it next. Its Facts are a Request.
//
//   - messages: developer and system messages become system messages,
//     user messages user messages (text parts joined; image parts, and
//     0.0.x binary parts of an image type, image_url parts), assistant
//     messages with their toolCalls assistant messages with tool_calls,
//     tool messages tool messages (their error appended to the content).
//     Reasoning and activity messages are not sent: reasoning was the
//     model's own, shown to the user, and activity messages are the UI's
//     (HttpAgent never sends them).
//   - Every tool call keeps its answer next to it, as chat-completions
//     servers require: the tool messages that answer an assistant
//     message's calls follow it directly, wherever the client put them; a
//     call nobody answered (a frontend tool the page did not run) and a
//     tool message answering no call are left out.
//   - tools become function tools; context entries become one system
//     message after the client's leading system messages, under "## Context
//     from the application", each "<description>:" and its value (the
//     shape CopilotKit's own agent gives them): with the default
//     system_prompt_mode prepend that follows the route's prompt. A route
//     with system_prompt_mode replace removes it with the client's other
//     system messages.
//   - state, forwardedProps and resume are not sent: the route, not the
//     page, decides what reaches the model (state a page wants the model
//     to read belongs in context). A non-empty state or resume is named in
//     Info.LeftOut, as are the content parts and messages left out.
//
// A body that is not JSON, has no messages or a member of the wrong type
// is refused with a 400 naming it. Convert reads the body once with
// encoding/json, never panics, and does not retain body.
func Convert(body []byte) ([]byte, request.Info, *request.Error) {
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, request.Info{}, badRequest(request.CodeInvalidJSON, "request body is empty")
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil || top == nil {
		if !json.Valid(body) {
			return nil, request.Info{}, badRequest(request.CodeInvalidJSON, "request body is not valid JSON")
		}
		return nil, request.Info{}, badRequest(request.CodeInvalidBody, "request body must be a JSON object (RunAgentInput)")
	}
	c := converter{}
	facts := Request{}
	var e *request.Error
	if facts.ThreadID, e = optString(top, "threadId"); e != nil {
		return nil, request.Info{}, e
	}
	if facts.RunID, e = optString(top, "runId"); e != nil {
		return nil, request.Info{}, e
	}
	if e := c.messages(top["messages"]); e != nil {
		return nil, request.Info{}, e
	}
	tools, e := c.tools(top["tools"])
	if e != nil {
		return nil, request.Info{}, e
	}
	context, e := readContext(top["context"])
	if e != nil {
		return nil, request.Info{}, e
	}
	if raw := present(top["state"]); raw != nil && !isEmpty(raw) {
		c.leaveOut("state")
	}
	if raw := present(top["resume"]); raw != nil && !isEmpty(raw) {
		c.leaveOut("resume")
	}

	for _, m := range c.msgs {
		for _, call := range m.calls {
			if facts.History == nil {
				facts.History = &History{callIDs: map[string]bool{}}
			}
			facts.History.callIDs[call.ID] = true
		}
		if m.callID != "" && facts.History != nil {
			facts.History.callIDs[m.callID] = true
		}
	}

	out := make([]byte, 0, len(body)+len(context)+64)
	out = append(out, `{"messages":[`...)
	out = c.appendMessages(out, context)
	out = append(out, ']')
	if len(tools) > 0 {
		out = append(out, `,"tools":`...)
		out = append(out, tools...)
	}
	out = append(out, '}')
	return out, request.Info{Stream: true, Facts: facts, LeftOut: strings.Join(c.leftOut, " ")}, nil
}

// message is one chat-completions message as converted, before the tool
// calls are paired with their answers.
type message struct {
	role string
	// text is the content as text; parts, when set, the content as a
	// JSON array of content parts (a user message with images).
	text  string
	parts []byte
	// calls are an assistant message's tool calls, callID a tool
	// message's tool_call_id.
	calls  []chatmsg.ToolCall
	callID string
}

// converter holds the messages read and what was left out of them.
type converter struct {
	msgs    []message
	leftOut []string
}

// leaveOut notes what is left out, each name once.
func (c *converter) leaveOut(name string) {
	for _, n := range c.leftOut {
		if n == name {
			return
		}
	}
	c.leftOut = append(c.leftOut, name)
}

// messages reads the messages array.
func (c *converter) messages(raw json.RawMessage) *request.Error {
	if raw = present(raw); raw == nil {
		return badRequest(request.CodeMissingMessages, `request body has no "messages" array`)
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return badRequest(request.CodeInvalidMessages, `"messages" must be an array`)
	}
	for i, m := range list {
		if e := c.message(i, m); e != nil {
			return e
		}
	}
	return nil
}

// message reads message i.
func (c *converter) message(i int, raw json.RawMessage) *request.Error {
	at := "messages[" + strconv.Itoa(i) + "]"
	invalid := func(msg string) *request.Error {
		return badRequest(request.CodeInvalidMessages, at+msg)
	}
	m, ok := object(raw)
	if !ok {
		return invalid(" must be an object")
	}
	role, isString := stringOf(m["role"])
	if !isString {
		return invalid(`.role must be a string`)
	}
	switch role {
	case "reasoning", "activity":
		c.leaveOut("message:" + role)
		return nil
	case "developer", "system", "user", "assistant", "tool":
	default:
		// A role this version does not know (a later AG-UI's): its
		// message is left out rather than the run refused.
		c.leaveOut("message:other")
		return nil
	}
	msg := message{role: role}
	if role == "developer" {
		msg.role = "system"
	}
	content := present(m["content"])
	var e *request.Error
	switch role {
	case "user":
		if msg.text, msg.parts, e = c.userContent(at, content); e != nil {
			return e
		}
		if msg.parts == nil && msg.text == "" && content != nil && content[0] == '[' {
			return nil // nothing the upstream can read was left
		}
	case "tool":
		id, ok := stringOf(m["toolCallId"])
		if !ok || id == "" {
			return invalid(`.toolCallId must be a non-empty string`)
		}
		msg.callID = id
		if msg.text, e = c.textContent(at, content); e != nil {
			return e
		}
		if raw := present(m["error"]); raw != nil {
			errText, ok := stringOf(raw)
			if !ok {
				return invalid(`.error must be a string`)
			}
			if errText != "" {
				if msg.text != "" {
					msg.text += "\n\n"
				}
				msg.text += "Error: " + errText
			}
		}
	case "assistant":
		if msg.text, e = c.textContent(at, content); e != nil {
			return e
		}
		if msg.calls, e = toolCalls(at, m["toolCalls"]); e != nil {
			return e
		}
	default: // system
		if msg.text, e = c.textContent(at, content); e != nil {
			return e
		}
	}
	c.msgs = append(c.msgs, msg)
	return nil
}

// textContent reads content that must be text: a string, or (a 1.0 tool
// message) a list of content parts, whose text parts are joined by
// newlines; its other parts are left out.
func (c *converter) textContent(at string, raw json.RawMessage) (string, *request.Error) {
	if raw == nil {
		return "", nil
	}
	if s, ok := stringOf(raw); ok {
		return s, nil
	}
	text, parts, e := c.userContent(at, raw)
	if e == nil && parts != nil {
		// Images cannot go in a system, assistant or tool message: only
		// their text is kept.
		c.leaveOut("part:image")
		text = partsText(parts)
	}
	return text, e
}

// userContent reads a user message's content: a string, or a list of
// content parts (AG-UI 1.0 text, image, audio, video and document parts,
// and 0.0.x binary parts). Text parts are joined by newlines; images
// (data and url sources, binary parts of an image type) become image_url
// parts, and then the content is the parts, in order. What a
// chat-completions upstream cannot read (audio, video, documents, files
// known by a provider's handle) is left out.
func (c *converter) userContent(at string, raw json.RawMessage) (string, []byte, *request.Error) {
	if raw == nil {
		return "", nil, nil
	}
	if s, ok := stringOf(raw); ok {
		return s, nil, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return "", nil, badRequest(request.CodeInvalidMessages, at+".content must be a string or an array of content parts")
	}
	type part struct {
		text string
		url  string // an image's, when set
	}
	var parts []part
	images := false
	for j, p := range list {
		pat := at + ".content[" + strconv.Itoa(j) + "]"
		o, ok := object(p)
		if !ok {
			return "", nil, badRequest(request.CodeInvalidMessages, pat+" must be an object")
		}
		typ, _ := stringOf(o["type"])
		switch typ {
		case "text":
			text, ok := stringOf(o["text"])
			if !ok {
				return "", nil, badRequest(request.CodeInvalidMessages, pat+".text must be a string")
			}
			parts = append(parts, part{text: text})
		case "image":
			url, kind := imageSource(o["source"])
			if url == "" {
				c.leaveOut("part:image_" + kind)
				continue
			}
			images = true
			parts = append(parts, part{url: url})
		case "binary":
			mime, _ := stringOf(o["mimeType"])
			url := ""
			if isImage(mime) {
				if data, ok := stringOf(o["data"]); ok && data != "" {
					url = "data:" + mime + ";base64," + data
				} else if u, ok := stringOf(o["url"]); ok && u != "" {
					url = u
				}
			}
			if url == "" {
				c.leaveOut("part:binary")
				continue
			}
			images = true
			parts = append(parts, part{url: url})
		case "audio", "video", "document":
			c.leaveOut("part:" + typ)
		default:
			c.leaveOut("part:other")
		}
	}
	if !images {
		texts := make([]string, len(parts))
		for j, p := range parts {
			texts[j] = p.text
		}
		return strings.Join(texts, "\n"), nil, nil
	}
	out := []byte{'['}
	for j, p := range parts {
		if j > 0 {
			out = append(out, ',')
		}
		if p.url == "" {
			out = append(out, `{"type":"text","text":`...)
			out = jsonout.AppendStringS(out, p.text)
		} else {
			out = append(out, `{"type":"image_url","image_url":{"url":`...)
			out = jsonout.AppendStringS(out, p.url)
			out = append(out, '}')
		}
		out = append(out, '}')
	}
	return "", append(out, ']'), nil
}

// imageSource returns the URL of an image part's source: a data URL for
// inline bytes, the URL of a url source; "" and the source's kind for a
// source the upstream cannot read (a file known by a provider's handle,
// a source without its bytes or type).
func imageSource(raw json.RawMessage) (string, string) {
	src, ok := object(raw)
	if !ok {
		return "", "other"
	}
	typ, _ := stringOf(src["type"])
	value, _ := stringOf(src["value"])
	mime, _ := stringOf(src["mimeType"])
	switch {
	case typ == "data" && value != "" && isImage(mime):
		return "data:" + mime + ";base64," + value, ""
	case typ == "url" && value != "":
		return value, ""
	case typ == "file":
		return "", "file"
	}
	return "", "other"
}

// partsText returns the text of a JSON array of chat content parts.
func partsText(parts []byte) string {
	var list []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(parts, &list)
	var texts []string
	for _, p := range list {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// toolCalls reads an assistant message's toolCalls: [{id, type:
// "function", function: {name, arguments}}]. Arguments are a JSON text in
// a string; arguments sent as a JSON value are taken as that value's text.
func toolCalls(at string, raw json.RawMessage) ([]chatmsg.ToolCall, *request.Error) {
	if raw = present(raw); raw == nil {
		return nil, nil
	}
	invalid := func(msg string) *request.Error {
		return badRequest(request.CodeInvalidMessages, at+".toolCalls"+msg)
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, invalid(" must be an array")
	}
	calls := make([]chatmsg.ToolCall, 0, len(list))
	for j, r := range list {
		jat := "[" + strconv.Itoa(j) + "]"
		tc, ok := object(r)
		fn, fnOK := object(tc["function"])
		if !ok || !fnOK {
			return nil, invalid(jat + " must be an object with a function")
		}
		id, ok := stringOf(tc["id"])
		if !ok || id == "" {
			return nil, invalid(jat + ".id must be a non-empty string")
		}
		name, ok := stringOf(fn["name"])
		if !ok {
			return nil, invalid(jat + ".function.name must be a string")
		}
		args, ok := stringOf(fn["arguments"])
		if raw := present(fn["arguments"]); !ok && raw != nil {
			compact, isJSON := jsonout.AppendCompact(nil, raw)
			if !isJSON {
				return nil, invalid(jat + ".function.arguments must be a string")
			}
			args = string(compact)
		}
		if args == "" {
			args = "{}"
		}
		calls = append(calls, chatmsg.ToolCall{ID: id, Name: name, Arguments: args})
	}
	return calls, nil
}

// tools reads the tools array, [{name, description, parameters}], as
// chat-completions function tools.
func (c *converter) tools(raw json.RawMessage) ([]byte, *request.Error) {
	if raw = present(raw); raw == nil {
		return nil, nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return nil, badRequest(request.CodeInvalidTools, `"tools" must be an array`)
	}
	if len(list) == 0 {
		return nil, nil
	}
	out := []byte{'['}
	for i, r := range list {
		at := "tools[" + strconv.Itoa(i) + "]"
		t, ok := object(r)
		if !ok {
			return nil, badRequest(request.CodeInvalidTools, at+" must be an object")
		}
		name, ok := stringOf(t["name"])
		if !ok || name == "" {
			return nil, badRequest(request.CodeInvalidTools, at+".name must be a non-empty string")
		}
		desc, isString := stringOf(t["description"])
		if !isString && present(t["description"]) != nil {
			return nil, badRequest(request.CodeInvalidTools, at+".description must be a string")
		}
		params := present(t["parameters"])
		if params != nil && params[0] != '{' {
			return nil, badRequest(request.CodeInvalidTools, at+".parameters must be a JSON Schema object")
		}
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, `{"type":"function","function":{"name":`...)
		out = jsonout.AppendStringS(out, name)
		if desc != "" {
			out = append(out, `,"description":`...)
			out = jsonout.AppendStringS(out, desc)
		}
		if params != nil {
			out = append(out, `,"parameters":`...)
			out = append(out, params...)
		}
		out = append(out, "}}"...)
	}
	return append(out, ']'), nil
}

// readContext reads the context array, [{description, value}], as the
// text of the system message that carries it; "" for none.
func readContext(raw json.RawMessage) (string, *request.Error) {
	if raw = present(raw); raw == nil {
		return "", nil
	}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) != nil {
		return "", badRequest(CodeInvalidContext, `"context" must be an array of {description, value} objects`)
	}
	if len(list) == 0 {
		return "", nil
	}
	var b strings.Builder
	b.WriteString(contextHeading)
	for i, r := range list {
		entry, ok := object(r)
		desc, ok1 := stringOf(entry["description"])
		value, ok2 := stringOf(entry["value"])
		if !ok || !ok1 || !ok2 {
			return "", badRequest(CodeInvalidContext, "context["+strconv.Itoa(i)+"]: description and value must be strings")
		}
		b.WriteString("\n")
		b.WriteString(desc)
		b.WriteString(":\n")
		b.WriteString(value)
		b.WriteString("\n")
	}
	return b.String(), nil
}

// appendMessages appends the messages, each call with its answer (see
// Convert), and the context's system message after the leading system
// messages.
func (c *converter) appendMessages(dst []byte, context string) []byte {
	// answer[id] is the index of the first tool message answering id;
	// claimed marks the tool messages written after their call.
	answer := map[string]int{}
	for i, m := range c.msgs {
		if m.role == "tool" {
			if _, ok := answer[m.callID]; !ok {
				answer[m.callID] = i
			}
		}
	}
	claimed := make([]bool, len(c.msgs))
	n := 0
	write := func(f func([]byte) []byte) {
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = f(dst)
	}
	contextDone := context == ""
	for i, m := range c.msgs {
		if !contextDone && m.role != "system" {
			contextDone = true
			write(func(b []byte) []byte { return appendSystem(b, context) })
		}
		switch m.role {
		case "tool":
			if !claimed[i] {
				c.leaveOut("message:tool_without_call")
			}
		case "assistant":
			var kept []chatmsg.ToolCall
			var answers []int
			for _, call := range m.calls {
				j, ok := answer[call.ID]
				if !ok || j < i || claimed[j] {
					c.leaveOut("tool_call:unanswered")
					continue
				}
				claimed[j] = true
				kept = append(kept, call)
				answers = append(answers, j)
			}
			if m.text == "" && len(kept) == 0 {
				continue // nothing left to say
			}
			write(func(b []byte) []byte { return chatmsg.AppendAssistant(b, m.text, kept) })
			for _, j := range answers {
				write(func(b []byte) []byte { return chatmsg.AppendTool(b, c.msgs[j].callID, c.msgs[j].text) })
			}
		case "user":
			if m.parts != nil {
				write(func(b []byte) []byte { return chatmsg.AppendRaw(b, chatmsg.Raw{Role: "user", Content: m.parts}) })
			} else {
				write(func(b []byte) []byte { return chatmsg.AppendUser(b, m.text) })
			}
		default:
			write(func(b []byte) []byte { return appendSystem(b, m.text) })
		}
	}
	if !contextDone {
		write(func(b []byte) []byte { return appendSystem(b, context) })
	}
	return dst
}

// appendSystem appends a system message with text.
func appendSystem(dst []byte, text string) []byte {
	dst = append(dst, `{"role":"system","content":`...)
	dst = jsonout.AppendStringS(dst, text)
	return append(dst, '}')
}

// optString reads top-level member name, which must be a string when
// present.
func optString(top map[string]json.RawMessage, name string) (string, *request.Error) {
	raw := present(top[name])
	if raw == nil {
		return "", nil
	}
	s, ok := stringOf(raw)
	if !ok {
		return "", badRequest(CodeInvalidParameter, `"`+name+`" must be a string`)
	}
	return s, nil
}

// object returns raw's members, reporting whether it is a JSON object.
// Members are matched by their exact names, as JavaScript reads them
// (encoding/json's struct fields would match "Role" for "role").
func object(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var m map[string]json.RawMessage
	if len(raw) == 0 || json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	return m, true
}

// stringOf returns raw as a string, reporting whether it is one.
func stringOf(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// present returns raw, or nil when it is absent or JSON null.
func present(raw json.RawMessage) json.RawMessage {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	return raw
}

// isEmpty reports whether raw is an empty object or array.
func isEmpty(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v := v.(type) {
	case map[string]any:
		return len(v) == 0
	case []any:
		return len(v) == 0
	}
	return false
}

// isImage reports whether mediaType is an image type (case-insensitive,
// RFC 2045 §5.1).
func isImage(mediaType string) bool {
	return len(mediaType) > len("image/") && strings.EqualFold(mediaType[:len("image/")], "image/")
}
