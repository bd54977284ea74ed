package aisdk

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// maxToolIndex bounds the tool call indices tracked in started, far above
// Limits.MaxToolCalls, so that a bad index cannot grow it without bound.
const maxToolIndex = 1 << 12

// appendToolInputStart appends tool-input-start {toolCallId, toolName}.
func (e *Encoder) appendToolInputStart(dst []byte, ev transform.Event) []byte {
	dst = e.closePart(dst)
	e.toolCalls = true
	if ev.Index >= 0 && ev.Index < maxToolIndex {
		for len(e.started) <= ev.Index {
			e.started = append(e.started, false)
		}
		e.started[ev.Index] = true
	}
	dst = appendToolHead(dst, "tool-input-start", ev)
	return append(dst, "}\n\n"...)
}

// appendToolInputDelta appends tool-input-delta {toolCallId,
// inputTextDelta} with the raw fragment. It does not close the open text
// or reasoning part: the SDK keys tool input by toolCallId, not by order.
// A fragment of a call that was never started is dropped: the SDK would
// throw on it (ai@6 processUIMessageStream), ending the client's stream.
func (e *Encoder) appendToolInputDelta(dst []byte, ev transform.Event) []byte {
	if len(ev.Text) == 0 || ev.Index < 0 || ev.Index >= len(e.started) || !e.started[ev.Index] {
		return dst
	}
	dst = append(dst, `data: {"type":"tool-input-delta","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	dst = append(dst, `,"inputTextDelta":`...)
	dst = jsonout.AppendString(dst, ev.Text)
	return append(dst, "}\n\n"...)
}

// appendToolInputEnd appends tool-input-available {toolCallId, toolName,
// input} with the complete arguments. Arguments that are not valid JSON
// become tool-input-error {toolCallId, toolName, input: the text as a
// string, errorText}, as the SDK's own streamText reports an invalid tool
// input: the part shows the error and the raw text instead of input that
// never parsed.
func (e *Encoder) appendToolInputEnd(dst []byte, ev transform.Event) []byte {
	e.toolCalls = true
	head := append(appendToolHead(dst, "tool-input-available", ev), `,"input":`...)
	if input, ok := jsonout.AppendCompact(head, ev.Text); ok {
		return append(input, "}\n\n"...)
	}
	dst = append(appendToolHead(dst, "tool-input-error", ev), `,"input":`...)
	dst = jsonout.AppendString(dst, ev.Text)
	dst = append(dst, `,"errorText":"invalid tool input: the arguments are not valid JSON"`...)
	return append(dst, "}\n\n"...)
}

// appendToolHead appends a tool chunk of type typ up to its toolCallId and
// toolName, the fields every tool input chunk but the delta starts with.
func appendToolHead(dst []byte, typ string, ev transform.Event) []byte {
	dst = append(dst, `data: {"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	dst = append(dst, `,"toolName":`...)
	return jsonout.AppendStringS(dst, ev.Name)
}
