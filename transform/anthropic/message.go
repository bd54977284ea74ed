package anthropic

import (
	"bytes"
	"encoding/json"
	"strconv"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// wholeBlock is a content block of a Message that is not streamed.
type wholeBlock struct {
	kind             blockKind
	id, name, server string
	// text is the block's text, thinking, tool arguments or tool result;
	// failed is set for a tool result that is an error.
	text   []byte
	failed bool
}

// appendMessageStart sends message_start once: a Message with the id, the
// model, no content yet and the estimated input tokens (Request), which
// the upstream's count replaces in message_delta.
func (e *Encoder) appendMessageStart(dst []byte) []byte {
	if e.started {
		return dst
	}
	e.started = true
	if !e.meta.Stream {
		return dst
	}
	dst = append(dst, "event: message_start\ndata: {\"type\":\"message_start\",\"message\":"...)
	dst = e.appendMessageHead(dst)
	dst = append(dst, `[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(e.req.InputTokens), 10)
	return append(dst, ",\"output_tokens\":0}}}\n\n"...)
}

// appendMessageHead appends a Message object up to its content's value.
func (e *Encoder) appendMessageHead(dst []byte) []byte {
	dst = append(dst, `{"id":`...)
	dst = jsonout.AppendStringS(dst, e.meta.MessageID)
	dst = append(dst, `,"type":"message","role":"assistant","model":`...)
	dst = jsonout.AppendStringS(dst, e.model)
	return append(dst, `,"content":`...)
}

// appendMessageEnd ends a stream: message_delta with the stop reason and
// the usage, then message_stop.
func (e *Encoder) appendMessageEnd(dst []byte, reason string) []byte {
	dst = append(dst, "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"...)
	dst = jsonout.AppendStringS(dst, reason)
	dst = append(dst, `,"stop_sequence":null},"usage":`...)
	dst = e.appendUsage(dst, false)
	dst = append(dst, "}\n\nevent: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"...)
	return dst
}

// appendMessage appends the whole Message: its blocks in order (a
// tool_use input is the arguments' JSON value, or the model's text as a
// JSON string when it wrote no valid JSON: the SDKs type input as any
// JSON, and nothing the model wrote is lost), the stop reason and the
// usage.
func (e *Encoder) appendMessage(dst []byte, reason string) []byte {
	dst = e.appendMessageHead(dst)
	dst = append(dst, '[')
	for i, b := range e.whole {
		if i > 0 {
			dst = append(dst, ',')
		}
		switch b.kind {
		case blockThinking:
			dst = append(dst, `{"type":"thinking","thinking":`...)
			dst = jsonout.AppendString(dst, b.text)
			dst = append(dst, `,"signature":""}`...)
		case blockText:
			dst = append(dst, `{"type":"text","text":`...)
			dst = jsonout.AppendString(dst, b.text)
			dst = append(dst, '}')
		case blockTool:
			dst = append(dst, `{"type":"tool_use","id":`...)
			dst = jsonout.AppendStringS(dst, b.id)
			dst = append(dst, `,"name":`...)
			dst = jsonout.AppendStringS(dst, b.name)
			dst = append(dst, `,"input":`...)
			if len(bytes.TrimSpace(b.text)) == 0 {
				dst = append(dst, "{}"...)
			} else {
				dst = jsonout.AppendOrString(dst, b.text)
			}
			dst = append(dst, '}')
		case blockMCPTool, blockMCPResult:
			dst = appendWholeMCP(dst, &e.whole[i])
		}
	}
	dst = append(dst, `],"stop_reason":`...)
	dst = jsonout.AppendStringS(dst, reason)
	dst = append(dst, `,"stop_sequence":null,"usage":`...)
	dst = e.appendUsage(dst, true)
	return append(dst, "}\n"...)
}

// usage is the upstream's usage object, kept raw until the reply ends:
// some upstreams repeat it in every chunk, and copying it allocates
// nothing once the buffer has grown.
type usage struct {
	raw []byte
}

// note keeps the latest usage object.
func (u *usage) note(raw []byte) { u.raw = append(u.raw[:0], raw...) }

// appendUsage appends the Messages API usage: input_tokens (the
// upstream's prompt tokens less its cached ones, which are
// cache_read_input_tokens, as Anthropic counts them), output_tokens (its
// completion tokens). Without the upstream's count, input_tokens is the
// estimate in a whole Message and left out of message_delta, so that the
// SDKs keep message_start's; output_tokens is then 0.
func (e *Encoder) appendUsage(dst []byte, whole bool) []byte {
	var v struct {
		Prompt     *int64 `json:"prompt_tokens"`
		Completion int64  `json:"completion_tokens"`
		Details    struct {
			Cached int64 `json:"cached_tokens"`
		} `json:"prompt_tokens_details"`
	}
	if len(e.usage.raw) > 0 && json.Unmarshal(e.usage.raw, &v) != nil {
		v.Prompt = nil
	}
	dst = append(dst, '{')
	switch {
	case v.Prompt != nil:
		cached := min(max(v.Details.Cached, 0), *v.Prompt)
		dst = append(dst, `"input_tokens":`...)
		dst = strconv.AppendInt(dst, *v.Prompt-cached, 10)
		if cached > 0 {
			dst = append(dst, `,"cache_read_input_tokens":`...)
			dst = strconv.AppendInt(dst, cached, 10)
		}
		dst = append(dst, ',')
	case whole:
		dst = append(dst, `"input_tokens":`...)
		dst = strconv.AppendInt(dst, int64(e.req.InputTokens), 10)
		dst = append(dst, ',')
	}
	dst = append(dst, `"output_tokens":`...)
	dst = strconv.AppendInt(dst, max(v.Completion, 0), 10)
	return append(dst, '}')
}
