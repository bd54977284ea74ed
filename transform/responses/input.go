package responses

import (
	"encoding/json"
	"slices"
	"strconv"

	"github.com/llmstream/llmstream/transform/chatmsg"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// converter builds the chat messages of one request.
type converter struct {
	msgs []chatMessage
	// pending holds content parts of tool outputs that a tool message
	// cannot carry (images, files), comma-joined, for the user message
	// that follows the tool messages.
	pending []byte
	// leftOut is what Info.LeftOut names.
	leftOut []string
	// calls holds the call_id of every function_call so far.
	calls map[string]bool
	// approvals are the mcp_approval_response items (mcp_input.go).
	approvals []request.Approval
	// mcpGroup is 1 + the index of the assistant message that the last
	// mcp_call items went into, whose tool messages follow it to the end
	// of msgs; 0 when another item came since (mcp_input.go).
	mcpGroup int
}

// chatMessage is one chat-completions message, its values raw JSON.
type chatMessage struct {
	role string
	// content is the content value; nil for an assistant message that
	// only calls tools (content null).
	content []byte
	// calls holds the tool_calls elements, comma-joined.
	calls []byte
	// callID is the tool_call_id of a tool message.
	callID []byte
}

// leave records that something was left out, once.
func (c *converter) leave(what string) {
	if !slices.Contains(c.leftOut, what) {
		c.leftOut = append(c.leftOut, what)
	}
}

// instructions makes the instructions the first system message.
func (c *converter) instructions(raw json.RawMessage) *request.Error {
	switch kindOf(raw) {
	case 0, 'n':
		return nil
	case '"':
		c.msgs = append(c.msgs, chatMessage{role: "system", content: raw})
		return nil
	}
	return badRequest(CodeInvalidParam, "instructions", `"instructions" must be a string`)
}

// input converts the input: a string is one user message, an array its
// items in order.
func (c *converter) input(raw json.RawMessage) *request.Error {
	switch kindOf(raw) {
	case 0, 'n':
		return badRequest(CodeMissingInput, "input", `request body has no "input"`)
	case '"':
		c.msgs = append(c.msgs, chatMessage{role: "user", content: raw})
		return nil
	case '[':
	default:
		return badRequest(CodeInvalidInput, "input", `"input" must be a string or an array of items`)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return badRequest(CodeInvalidInput, "input", `"input" must be a string or an array of items`)
	}
	for i, item := range items {
		if e := c.item(i, item); e != nil {
			return e
		}
	}
	c.flushPending()
	return nil
}

// itemParam names input item i, for errors.
func itemParam(i int) string { return "input[" + strconv.Itoa(i) + "]" }

// item converts input item i.
func (c *converter) item(i int, raw json.RawMessage) *request.Error {
	var obj map[string]json.RawMessage
	if kindOf(raw) != '{' || json.Unmarshal(raw, &obj) != nil {
		return badRequest(CodeInvalidInput, itemParam(i), itemParam(i)+" must be an object")
	}
	typ := stringOf(obj["type"])
	_, hasRole := obj["role"]
	if typ == "mcp_call" {
		c.flushPending()
		c.mcpCall(i, obj)
		return nil
	}
	c.mcpGroup = 0
	switch {
	case typ == "message" || typ == "" && hasRole:
		c.flushPending()
		return c.message(i, obj)
	case typ == "function_call":
		c.flushPending()
		return c.functionCall(i, obj)
	case typ == "function_call_output":
		return c.functionCallOutput(i, obj)
	case typ == "compaction" || typ == "compaction_trigger":
		// Prepare opens compaction items and acts on triggers; one that
		// reaches here came to a route that keeps no compaction key.
		return unsupported(itemParam(i), itemParam(i)+" is a "+typ+" item, which this route cannot read: "+
			"it needs the responses store (the route's conversation settings)")
	case typ == "mcp_approval_response":
		return c.approval(i, obj)
	case typ == "item_reference":
		return unsupported(itemParam(i), itemParam(i)+" is an item_reference: llmstream stores no items, so send the item itself")
	case typ == "":
		return badRequest(CodeInvalidInput, itemParam(i), itemParam(i)+" has no type")
	}
	// Reasoning items (a chat request has no place for them) and the
	// items of hosted tools, calls and outputs alike, so that no output
	// is left without its call.
	c.leave("item:" + safeName(typ))
	return nil
}

// message converts a message item {role, content}. developer and system
// become system: few chat-completions servers besides OpenAI's know the
// developer role.
func (c *converter) message(i int, obj map[string]json.RawMessage) *request.Error {
	role := stringOf(obj["role"])
	switch role {
	case "user", "assistant", "system":
	case "developer":
		role = "system"
	default:
		return badRequest(CodeInvalidInput, itemParam(i)+".role", itemParam(i)+".role must be user, assistant, system or developer")
	}
	content, e := c.content(itemParam(i)+".content", role, obj["content"])
	if e != nil {
		return e
	}
	c.msgs = append(c.msgs, chatMessage{role: role, content: content})
	return nil
}

// content converts a message's content: a string as it is; an array of
// parts into one string when it holds text only (the parts' texts joined
// as written, since assistant and system messages must be strings for many
// servers), else into chat content parts.
func (c *converter) content(param, role string, raw json.RawMessage) ([]byte, *request.Error) {
	switch kindOf(raw) {
	case '"':
		return raw, nil
	case '[':
	default:
		return nil, badRequest(CodeInvalidInput, param, param+" must be a string or an array of content parts")
	}
	var parts []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &parts); err != nil {
		return nil, badRequest(CodeInvalidInput, param, param+" must be an array of content part objects")
	}
	chat := make([]chatPart, 0, len(parts))
	textOnly := true
	for j, p := range parts {
		pp := param + "[" + strconv.Itoa(j) + "]"
		cp, e := contentPart(pp, p)
		if e != nil {
			return nil, e
		}
		if !cp.text {
			if role != "user" {
				return nil, badRequest(CodeInvalidInput, pp, pp+": "+role+" messages hold text only")
			}
			textOnly = false
		}
		chat = append(chat, cp)
	}
	if textOnly {
		return joinText(chat), nil
	}
	out := []byte{'['}
	for j, cp := range chat {
		if j > 0 {
			out = append(out, ',')
		}
		if cp.text {
			out = append(out, `{"type":"text","text":`...)
			out = append(out, cp.part...)
			out = append(out, '}')
			continue
		}
		out = append(out, cp.part...)
	}
	return append(out, ']'), nil
}

// chatPart is one converted content part: a text (part is its JSON string
// literal) or another chat content part (part is the whole object).
type chatPart struct {
	text bool
	part []byte
}

// joinText joins text parts into one JSON string: the inside of a string
// literal is a valid string body whose escapes end within it, so bodies
// concatenate without decoding and the client's bytes pass unchanged.
func joinText(parts []chatPart) []byte {
	out := []byte{'"'}
	for _, p := range parts {
		if p.text {
			out = append(out, p.part[1:len(p.part)-1]...)
		}
	}
	return append(out, '"')
}

// contentPart converts one Responses content part. Texts (input_text, and
// in replayed assistant messages output_text and refusal) stay texts;
// input_image becomes an image_url part and input_file a file part. An
// image known only by a file id cannot be shown to the model, and a part
// the chat format has no place for would vanish: both are refused.
func contentPart(param string, p map[string]json.RawMessage) (chatPart, *request.Error) {
	typ := stringOf(p["type"])
	switch typ {
	case "input_text", "output_text", "text":
		if kindOf(p["text"]) != '"' {
			return chatPart{}, badRequest(CodeInvalidInput, param+".text", param+".text must be a string")
		}
		return chatPart{text: true, part: p["text"]}, nil
	case "refusal":
		if kindOf(p["refusal"]) != '"' {
			return chatPart{}, badRequest(CodeInvalidInput, param+".refusal", param+".refusal must be a string")
		}
		return chatPart{text: true, part: p["refusal"]}, nil
	case "input_image":
		u := p["image_url"]
		if kindOf(u) != '"' {
			if kindOf(p["file_id"]) == '"' {
				return chatPart{}, unsupported(param, param+" is an image known only by its file_id, which a chat-completions "+
					"upstream cannot resolve: send it as image_url (a URL or a data: URL)")
			}
			return chatPart{}, badRequest(CodeInvalidInput, param+".image_url", param+".image_url must be a string")
		}
		out := append([]byte(`{"type":"image_url","image_url":{"url":`), u...)
		if d := stringOf(p["detail"]); d == "low" || d == "high" || d == "auto" {
			out = append(out, `,"detail":"`+d+`"`...)
		}
		return chatPart{part: append(out, "}}"...)}, nil
	case "input_file":
		if kindOf(p["file_url"]) == '"' && kindOf(p["file_data"]) != '"' && kindOf(p["file_id"]) != '"' {
			return chatPart{}, unsupported(param+".file_url", param+" is a file known only by its URL, which chat "+
				"completions cannot take: send it as file_data")
		}
		out := []byte(`{"type":"file","file":{`)
		n := 0
		for _, name := range []string{"filename", "file_data", "file_id"} {
			if v := p[name]; kindOf(v) == '"' {
				if n > 0 {
					out = append(out, ',')
				}
				n++
				out = jsonout.AppendStringS(out, name)
				out = append(out, ':')
				out = append(out, v...)
			}
		}
		if n == 0 || kindOf(p["file_data"]) != '"' && kindOf(p["file_id"]) != '"' {
			return chatPart{}, badRequest(CodeInvalidInput, param, param+" has neither file_data nor file_id")
		}
		return chatPart{part: append(out, "}}"...)}, nil
	}
	return chatPart{}, unsupported(param+".type", param+" has type "+safeName(typ)+", which a chat-completions request cannot carry")
}

// functionCall converts a function_call item into an assistant tool call:
// into the previous assistant message when there is one (its text, or the
// calls made beside this one in parallel), else a new message.
func (c *converter) functionCall(i int, obj map[string]json.RawMessage) *request.Error {
	p := itemParam(i)
	for _, name := range []string{"call_id", "name", "arguments"} {
		if kindOf(obj[name]) != '"' {
			return badRequest(CodeInvalidInput, p+"."+name, p+"."+name+" must be a string")
		}
	}
	if c.calls == nil {
		c.calls = map[string]bool{}
	}
	c.calls[stringOf(obj["call_id"])] = true
	call := append([]byte(`{"id":`), obj["call_id"]...)
	call = append(call, `,"type":"function","function":{"name":`...)
	call = append(call, obj["name"]...)
	call = append(call, `,"arguments":`...)
	call = append(call, obj["arguments"]...)
	call = append(call, "}}"...)
	if n := len(c.msgs); n > 0 && c.msgs[n-1].role == "assistant" {
		m := &c.msgs[n-1]
		if len(m.calls) > 0 {
			m.calls = append(m.calls, ',')
		}
		m.calls = append(m.calls, call...)
		return nil
	}
	c.msgs = append(c.msgs, chatMessage{role: "assistant", calls: call})
	return nil
}

// functionCallOutput converts a function_call_output item into a tool
// message. An output given as content parts keeps its texts, joined; its
// images and files, which a tool message cannot carry, follow the tool
// messages in a user message.
func (c *converter) functionCallOutput(i int, obj map[string]json.RawMessage) *request.Error {
	p := itemParam(i)
	if kindOf(obj["call_id"]) != '"' {
		return badRequest(CodeInvalidInput, p+".call_id", p+".call_id must be a string")
	}
	// A tool output answers a call made before it (in the input or the
	// previous_response_id chain), as OpenAI requires: a strict upstream
	// refuses a tool message without its call, and the Open Responses
	// WebSocket rules make such a continuation a failed turn.
	if id := stringOf(obj["call_id"]); !c.calls[id] {
		return badRequest(CodeInvalidInput, p+".call_id", "no function_call found for the function_call_output with call_id '"+
			printable(id)+"': send the call before its output, or continue with previous_response_id")
	}
	out := obj["output"]
	switch kindOf(out) {
	case '"':
	case '[':
		var parts []map[string]json.RawMessage
		if err := json.Unmarshal(out, &parts); err != nil {
			return badRequest(CodeInvalidInput, p+".output", p+".output must be a string or an array of content parts")
		}
		var texts []chatPart
		for j, part := range parts {
			cp, e := contentPart(p+".output["+strconv.Itoa(j)+"]", part)
			if e != nil {
				return e
			}
			if cp.text {
				texts = append(texts, cp)
				continue
			}
			if len(c.pending) > 0 {
				c.pending = append(c.pending, ',')
			}
			c.pending = append(c.pending, cp.part...)
		}
		out = joinText(texts)
	default:
		return badRequest(CodeInvalidInput, p+".output", p+".output must be a string or an array of content parts")
	}
	c.msgs = append(c.msgs, chatMessage{role: "tool", callID: obj["call_id"], content: out})
	return nil
}

// flushPending adds the user message holding the tool outputs' images and
// files, after the tool messages they came with.
func (c *converter) flushPending() {
	if len(c.pending) == 0 {
		return
	}
	content := append(append([]byte{'['}, c.pending...), ']')
	c.msgs = append(c.msgs, chatMessage{role: "user", content: content})
	c.pending = nil
}

// appendMessages appends the messages as a JSON array.
func (c *converter) appendMessages(dst []byte) []byte {
	dst = append(dst, '[')
	for i, m := range c.msgs {
		if i > 0 {
			dst = append(dst, ',')
		}
		// Raw values of the valid body, or parts built from them: JSON on
		// one line already.
		dst = chatmsg.AppendRaw(dst, chatmsg.Raw{Role: m.role, Content: m.content, ToolCallID: m.callID, ToolCalls: m.calls})
	}
	return append(dst, ']')
}
