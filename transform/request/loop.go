package request

import "github.com/llmstream/llmstream/transform/jsonout"

// The request side of the agent loop (CONTRACT.md §12): the tools the
// gateway runs are offered beside the client's and the route's, and each
// round's request is the last one with the round's messages appended.

// CodeToolNameTaken: a client tool has the name of a tool the route runs
// itself. The model could not tell them apart, and the gateway would run
// a call the client meant for itself.
const CodeToolNameTaken = "tool_name_taken"

// ServerTool is a tool the gateway runs, as the request offers it.
type ServerTool struct {
	// Name is the function name the model sees; Server names the tool
	// server, for the error that names a clash.
	Name, Server string
	// JSON is the complete OpenAI tool object
	// {"type":"function","function":{…}}.
	JSON []byte
}

// AppendServerTools appends to dst body, a chat-completions request that
// Rewrite made, with tools added to its "tools" array (made if absent). A
// tool whose name one of routeTools has (the route's own tools, which
// replace a client's) is not offered: the route's tool wins. A client tool
// with the name of an offered one is a 400 naming it (CodeToolNameTaken).
func AppendServerTools(dst, body []byte, tools []ServerTool, routeTools []string) ([]byte, *Error) {
	d, root, e := parseObject(body, badRequest)
	if e != nil {
		return dst, e
	}
	cur := d.member(root, "tools")
	offered := make([]ServerTool, 0, len(tools))
	for _, t := range tools {
		if indexOf(routeTools, t.Name) < 0 {
			offered = append(offered, t)
		}
	}
	if len(offered) == 0 {
		return append(dst, body...), nil
	}
	var taken *Error
	if d.kind(cur) == '[' {
		d.elements(cur, func(el span) bool {
			name := functionName(d, el)
			if indexOf(routeTools, name) >= 0 {
				return true
			}
			for _, t := range offered {
				if t.Name == name {
					taken = &Error{Status: 400, Code: CodeToolNameTaken, Param: "tools",
						Message: `tools: "` + name + `" is the name of a tool this route runs itself (tool server ` +
							t.Server + `); give the client's tool another name`}
					return false
				}
			}
			return true
		})
	}
	if taken != nil {
		return dst, taken
	}
	if !cur.exists() || d.kind(cur) != '[' {
		// No tools (or null): a new array, as the last member.
		closing := d.spaceBefore(0, root.end-1)
		if cur.exists() { // "tools": null is replaced in place
			dst = append(dst, body[:cur.start]...)
			dst = appendToolArray(dst, offered)
			return append(dst, body[cur.end:]...), nil
		}
		dst = append(dst, body[:closing]...)
		if hasMembers(d, root) {
			dst = append(dst, ',')
		}
		dst = append(dst, `"tools":`...)
		dst = appendToolArray(dst, offered)
		return append(dst, body[closing:]...), nil
	}
	// Appended after the last element, before the whitespace that
	// precedes the closing bracket.
	at, empty := cur.start+1, true
	d.elements(cur, func(el span) bool {
		at, empty = el.end, false
		return true
	})
	dst = append(dst, body[:at]...)
	for i, t := range offered {
		if !empty || i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, t.JSON...)
	}
	return append(dst, body[at:]...), nil
}

// appendToolArray appends a tools array of the offered tools.
func appendToolArray(dst []byte, tools []ServerTool) []byte {
	dst = append(dst, '[')
	for i, t := range tools {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, t.JSON...)
	}
	return append(dst, ']')
}

// hasMembers reports whether the object obj has a member.
func hasMembers(d jsonDoc, obj span) bool {
	has := false
	d.members(obj, func(_, _ span) bool {
		has = true
		return false
	})
	return has
}

// AppendMessages appends to dst body, a chat-completions request, with
// msgs (messages, comma-separated) added at the end of its "messages"
// array: the next round's request of the agent loop, or a retry's
// (AppendRetry). Every other byte of body is copied as it is.
func AppendMessages(dst, body, msgs []byte) ([]byte, error) {
	d, root, e := parseObject(body, badRequest)
	if e != nil {
		return dst, e
	}
	arr := d.member(root, "messages")
	if d.kind(arr) != '[' {
		return dst, badRequest(CodeInvalidMessages, `"messages" must be an array, got `+d.typeName(arr))
	}
	// The messages go right after the last message (or the opening
	// bracket), before the whitespace that precedes the closing one.
	at, empty := arr.start+1, true
	d.elements(arr, func(e span) bool {
		at, empty = e.end, false
		return true
	})
	dst = append(dst, body[:at]...)
	if !empty {
		dst = append(dst, ',')
	}
	dst = append(dst, msgs...)
	return append(dst, body[at:]...), nil
}

// AppendToolsOff appends body with "tool_choice": "none": the agent loop's
// last round, in which the model is to answer with what it has. The tools
// stay declared, since the messages before refer to them (servers check
// that a tool message's call names a declared tool).
func AppendToolsOff(dst, body []byte) ([]byte, error) {
	d, root, e := parseObject(body, badRequest)
	if e != nil {
		return dst, e
	}
	if cur := d.member(root, "tool_choice"); cur.exists() {
		dst = append(dst, body[:cur.start]...)
		dst = jsonout.AppendStringS(dst, ToolChoiceNone)
		return append(dst, body[cur.end:]...), nil
	}
	closing := d.spaceBefore(0, root.end-1)
	dst = append(dst, body[:closing]...)
	if hasMembers(d, root) {
		dst = append(dst, ',')
	}
	dst = append(dst, `"tool_choice":"none"`...)
	return append(dst, body[closing:]...), nil
}
