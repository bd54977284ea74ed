package aisdk

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
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
	dst = append(dst, `data: {"type":"tool-input-start","toolCallId":`...)
	dst = transform.AppendJSONStringS(dst, ev.ID)
	dst = append(dst, `,"toolName":`...)
	dst = transform.AppendJSONStringS(dst, ev.Name)
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
	dst = transform.AppendJSONStringS(dst, ev.ID)
	dst = append(dst, `,"inputTextDelta":`...)
	dst = transform.AppendJSONString(dst, ev.Text)
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
	mark := len(dst)
	dst = append(dst, `data: {"type":"tool-input-available","toolCallId":`...)
	dst = transform.AppendJSONStringS(dst, ev.ID)
	dst = append(dst, `,"toolName":`...)
	dst = transform.AppendJSONStringS(dst, ev.Name)
	dst = append(dst, `,"input":`...)
	if input, ok := appendCompactJSON(dst, ev.Text); ok {
		return append(input, "}\n\n"...)
	}
	dst = append(dst[:mark], `data: {"type":"tool-input-error","toolCallId":`...)
	dst = transform.AppendJSONStringS(dst, ev.ID)
	dst = append(dst, `,"toolName":`...)
	dst = transform.AppendJSONStringS(dst, ev.Name)
	dst = append(dst, `,"input":`...)
	dst = transform.AppendJSONString(dst, ev.Text)
	dst = append(dst, `,"errorText":"invalid tool input: the arguments are not valid JSON"`...)
	return append(dst, "}\n\n"...)
}

// appendCompactJSON appends raw without insignificant whitespace, so that a
// JSON value the model pretty-printed fits on one SSE data line. It reports
// false when raw is not valid JSON or not valid UTF-8 (encoding/json
// accepts invalid UTF-8 inside strings; JSON.parse would see U+FFFD). It
// runs once per tool call or artifacts list, not per delta, so
// encoding/json's allocation is acceptable here.
func appendCompactJSON(dst, raw []byte) ([]byte, bool) {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return dst, false
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, false
	}
	return buf.Bytes(), true
}
