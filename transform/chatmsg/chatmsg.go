// Package chatmsg writes the OpenAI chat-completions messages llmstream
// builds itself: an assistant turn with its tool calls, the tool messages
// that answer them, and a user message. The validation retry, the agent
// loop's rounds, the conversation store's upstream rebuild and the
// protocol converters all write them, and a strict OpenAI-compatible server
// reads every one the same way, so there is one writer (CONTRACT.md §9: an
// assistant tool call is always answered by a tool message; §12: each round
// appends one assistant message and one tool message per call).
package chatmsg

import "github.com/llmstream/llmstream/transform/jsonout"

// ToolCall is one tool call of an assistant message, as the model made it.
type ToolCall struct {
	// ID is the call's id, which the tool message that answers it repeats.
	ID string
	// Name is the function's name.
	Name string
	// Arguments is the arguments JSON text as the model wrote it; it is
	// sent as a string, byte for byte, never re-encoded.
	Arguments string
}

// AppendAssistant appends an assistant message with content and calls. Its
// content is null when it has calls and no text: servers that refuse an
// empty text part accept that.
func AppendAssistant(dst []byte, content string, calls []ToolCall) []byte {
	dst = append(dst, `{"role":"assistant","content":`...)
	if content == "" && len(calls) > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = jsonout.AppendStringS(dst, content)
	}
	if len(calls) > 0 {
		dst = append(dst, `,"tool_calls":`...)
		dst = AppendToolCalls(dst, calls)
	}
	return append(dst, '}')
}

// AppendToolCalls appends calls as an OpenAI tool_calls array.
func AppendToolCalls(dst []byte, calls []ToolCall) []byte {
	dst = append(dst, '[')
	for i, c := range calls {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = jsonout.AppendStringS(dst, c.ID)
		dst = append(dst, `,"type":"function","function":{"name":`...)
		dst = jsonout.AppendStringS(dst, c.Name)
		dst = append(dst, `,"arguments":`...)
		dst = jsonout.AppendStringS(dst, c.Arguments)
		dst = append(dst, "}}"...)
	}
	return append(dst, ']')
}

// AppendTool appends the tool message that answers call id with content.
func AppendTool(dst []byte, id, content string) []byte {
	dst = append(dst, `{"role":"tool","tool_call_id":`...)
	dst = jsonout.AppendStringS(dst, id)
	dst = append(dst, `,"content":`...)
	dst = jsonout.AppendStringS(dst, content)
	return append(dst, '}')
}

// AppendUser appends a user message whose content is text.
func AppendUser(dst []byte, text string) []byte {
	dst = append(dst, `{"role":"user","content":`...)
	dst = jsonout.AppendStringS(dst, text)
	return append(dst, '}')
}

// Raw is a message whose values are JSON already: a protocol converter
// copies them from the client's body, which it checked.
type Raw struct {
	// Role is the message's role.
	Role string
	// Content is the content value; nil writes null (an assistant message
	// that only calls tools).
	Content []byte
	// ToolCallID is the tool_call_id value of a tool message, nil for none.
	ToolCallID []byte
	// ToolCalls holds the tool_calls array's elements, comma-joined; nil
	// for none.
	ToolCalls []byte
}

// AppendRaw appends m. Its values are copied as they are: they must be
// valid JSON on one line.
func AppendRaw(dst []byte, m Raw) []byte {
	dst = append(dst, `{"role":`...)
	dst = jsonout.AppendStringS(dst, m.Role)
	if m.ToolCallID != nil {
		dst = append(dst, `,"tool_call_id":`...)
		dst = append(dst, m.ToolCallID...)
	}
	dst = append(dst, `,"content":`...)
	if m.Content != nil {
		dst = append(dst, m.Content...)
	} else {
		dst = append(dst, "null"...)
	}
	if len(m.ToolCalls) > 0 {
		dst = append(dst, `,"tool_calls":[`...)
		dst = append(dst, m.ToolCalls...)
		dst = append(dst, ']')
	}
	return append(dst, '}')
}
