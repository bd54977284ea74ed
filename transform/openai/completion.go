package openai

import (
	"slices"
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// completion is what a non-streamed completion accumulates until the
// terminal event. It is the only encoder state that grows with the reply;
// the upstream's reply limit (Limits.MaxReplyBytes) bounds it.
type completion struct {
	content, reasoning []byte
	tools              []toolCall
}

// toolCall is a complete tool call of a non-streamed completion.
type toolCall struct {
	index    int
	id, name string
	args     []byte
}

// addTool keeps a complete tool call; ev.Text is copied, being borrowed.
func (c *completion) addTool(ev transform.Event) {
	c.tools = append(c.tools, toolCall{
		index: ev.Index, id: ev.ID, name: ev.Name,
		args: append([]byte(nil), ev.Text...),
	})
}

// appendCompletion appends the chat.completion object: one choice whose
// message has role, content (null when there is none but tool calls, as
// OpenAI sends it), reasoning_content and tool_calls only when there are
// any, and refusal null; then usage when it came.
func (e *Encoder) appendCompletion(dst []byte, reason string) []byte {
	c := &e.whole
	dst = append(dst, `{"id":"chatcmpl-`...)
	dst = jsonout.AppendStringBodyS(dst, e.meta.MessageID)
	dst = append(dst, `","object":"chat.completion","created":`...)
	dst = strconv.AppendInt(dst, e.meta.Created.Unix(), 10)
	dst = append(dst, `,"model":`...)
	dst = jsonout.AppendStringS(dst, e.model)
	dst = append(dst, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	if len(c.content) == 0 && len(c.tools) > 0 {
		dst = append(dst, "null"...)
	} else {
		dst = jsonout.AppendString(dst, c.content)
	}
	if len(c.reasoning) > 0 {
		dst = append(dst, `,"reasoning_content":`...)
		dst = jsonout.AppendString(dst, c.reasoning)
	}
	if len(c.tools) > 0 {
		// Calls end in any order when they interleave; the message lists
		// them by index, the order they appeared in.
		slices.SortStableFunc(c.tools, func(a, b toolCall) int { return a.index - b.index })
		dst = append(dst, `,"tool_calls":[`...)
		for i, t := range c.tools {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = jsonout.AppendStringS(dst, t.id)
			dst = append(dst, `,"type":"function","function":{"name":`...)
			dst = jsonout.AppendStringS(dst, t.name)
			dst = append(dst, `,"arguments":`...)
			dst = jsonout.AppendString(dst, t.args)
			dst = append(dst, "}}"...)
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"refusal":null},"logprobs":null,"finish_reason":`...)
	dst = jsonout.AppendStringS(dst, reason)
	dst = append(dst, "}]"...)
	if e.usage != nil {
		dst = append(dst, `,"usage":`...)
		dst = append(dst, e.usage...)
	}
	return append(dst, "}\n"...)
}
