package request

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"github.com/llmstream/llmstream/transform/chatmsg"
)

// A useChat page sends back the tool parts of the assistant messages it
// was shown (CONTRACT.md §12 "What comes back"): the calls to tools the
// gateway ran in a turn's rounds (providerExecuted, dynamic-tool parts, as
// the aisdk protocol streams them), and the calls to the page's own tools
// once it added their outputs (tool-<name> parts). Each part whose call is
// over (state output-available, output-error or output-denied) becomes
// upstream history: the call in an assistant message's tool_calls, its
// outcome in a tool message after it, so that the model sees what it did
// last turn. A part whose call is not over (input-streaming,
// input-available, approval-requested) has no outcome to give the model
// and is dropped, as before: a tool_calls entry without its tool message
// is refused by OpenAI-compatible servers.
//
// An assistant message with such parts becomes one assistant message per
// step (a round of the turn, which the aisdk protocol separates with
// start-step: step-start parts), each followed by its tool messages; text
// that follows a step's tool parts without a step-start opens the next
// step too, since the model wrote it after it saw the results. A step's
// content is its text parts joined; an assistant message has no place for
// images or reasoning, which are dropped.

// uiToolPart is the part of an AI SDK tool UI part (ai@6 ToolUIPart,
// DynamicToolUIPart) that history keeps.
type uiToolPart struct {
	Type       string          `json:"type"`
	ToolName   string          `json:"toolName"`
	ToolCallID string          `json:"toolCallId"`
	State      string          `json:"state"`
	Input      json.RawMessage `json:"input"`
	RawInput   json.RawMessage `json:"rawInput"`
	Output     json.RawMessage `json:"output"`
	ErrorText  string          `json:"errorText"`
	Approval   *struct {
		Reason string `json:"reason"`
	} `json:"approval"`
}

// isToolPartType reports whether a UI part type is a tool part:
// "dynamic-tool" or "tool-<name>".
func isToolPartType(t string) bool {
	return t == "dynamic-tool" || strings.HasPrefix(t, "tool-") && len(t) > len("tool-")
}

// finishedToolPart decodes UI part p when it is a tool part whose call is
// over, and returns its call and its outcome for the model.
func finishedToolPart(d jsonDoc, p span) (chatmsg.ToolCall, string, bool) {
	if t := d.memberStr(p, "type"); !isToolPartType(t) {
		return chatmsg.ToolCall{}, "", false
	}
	var tp uiToolPart
	if json.Unmarshal(d[p.start:p.end], &tp) != nil || tp.ToolCallID == "" {
		return chatmsg.ToolCall{}, "", false
	}
	name := tp.ToolName
	if tp.Type != "dynamic-tool" {
		name = strings.TrimPrefix(tp.Type, "tool-")
	}
	var result string
	switch tp.State {
	case "output-available":
		result = jsonText(tp.Output)
	case "output-error":
		result = tp.ErrorText
	case "output-denied":
		result = "Tool call execution denied."
		if tp.Approval != nil && tp.Approval.Reason != "" {
			result = tp.Approval.Reason
		}
	default:
		return chatmsg.ToolCall{}, "", false
	}
	if name == "" {
		return chatmsg.ToolCall{}, "", false
	}
	input := tp.Input
	if len(input) == 0 || bytes.Equal(input, []byte("null")) {
		input = tp.RawInput
	}
	args := jsonText(input)
	if args == "" {
		args = "{}"
	}
	return chatmsg.ToolCall{ID: tp.ToolCallID, Name: name, Arguments: args}, result, true
}

// jsonText returns a JSON value as the text the model reads: a string's
// value, any other value compacted, "" for none or null.
func jsonText(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 || bytes.Equal(v, []byte("null")) {
		return ""
	}
	if v[0] == '"' {
		var s string
		if json.Unmarshal(v, &s) == nil {
			return s
		}
	}
	var b bytes.Buffer
	if json.Compact(&b, v) != nil {
		return string(v)
	}
	return b.String()
}

// hasFinishedToolPart reports whether parts hold a tool part whose call is
// over.
func hasFinishedToolPart(d jsonDoc, parts span) bool {
	found := false
	d.elements(parts, func(p span) bool {
		_, _, found = finishedToolPart(d, p)
		return !found
	})
	return found
}

// appendAssistantSteps appends the assistant messages, and the tool
// messages after each, of an assistant UIMessage's parts, one per step
// (see above), and reports whether it appended any.
func appendAssistantSteps(dst []byte, d jsonDoc, parts span) ([]byte, bool) {
	var text strings.Builder
	var calls []chatmsg.ToolCall
	var results []string
	n := 0
	flush := func() {
		if text.Len() == 0 && len(calls) == 0 {
			return
		}
		if n > 0 {
			dst = append(dst, ',')
		}
		n++
		dst = chatmsg.AppendAssistant(dst, text.String(), calls)
		for i, c := range calls {
			dst = append(dst, ',')
			dst = chatmsg.AppendTool(dst, c.ID, results[i])
		}
		text.Reset()
		calls, results = calls[:0], results[:0]
	}
	d.elements(parts, func(p span) bool {
		if d.stringIs(d.member(p, "type"), "step-start") {
			flush()
			return true
		}
		if call, result, ok := finishedToolPart(d, p); ok {
			// One id, one call: a repeated part (the same call sent twice)
			// would be a second call answered twice.
			if !slices.ContainsFunc(calls, func(c chatmsg.ToolCall) bool { return c.ID == call.ID }) {
				calls = append(calls, call)
				results = append(results, result)
			}
			return true
		}
		if k, v := uiPart(d, p); k == partText {
			if len(calls) > 0 {
				flush() // text the model wrote after it saw the results
			}
			text.WriteString(d.str(v))
		}
		return true
	})
	flush()
	return dst, n > 0
}
