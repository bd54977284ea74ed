package skillpet

import "github.com/llmstream/llmstream/transform/jsonout"

// appendThinking appends a thinking event with text (specs/002 §3.2).
// Empty text and req.NoThinking send nothing.
func (e *Encoder) appendThinking(dst, text []byte) []byte {
	if e.req.NoThinking || len(text) == 0 {
		return dst
	}
	dst = e.openThinking(dst)
	dst = jsonout.AppendStringBody(dst, text)
	return append(dst, "\"}\n\n"...)
}

// appendThinkingTitle appends a thinking event with a phase title written
// as "**<title>**\n\n" (CONTRACT.md §5), which the phase text then follows.
func (e *Encoder) appendThinkingTitle(dst, title []byte) []byte {
	if e.req.NoThinking || len(title) == 0 {
		return dst
	}
	dst = e.openThinking(dst)
	dst = append(dst, "**"...)
	dst = jsonout.AppendStringBody(dst, title)
	return append(dst, "**\\n\\n\"}\n\n"...)
}

// openThinking appends the start of a thinking event up to the inside of
// its content string, with "\n\n" first when the content opens a new block
// after earlier thinking, so that the concatenated thinking reads as
// separate paragraphs.
func (e *Encoder) openThinking(dst []byte) []byte {
	dst = append(dst, "event: thinking\ndata: {\"content\":\""...)
	if e.newBlock && e.thought {
		dst = append(dst, `\n\n`...)
	}
	e.newBlock = false
	e.thought = true
	e.thinking = true
	return dst
}

// endThinking appends thinking_done when thinking events were sent that
// none ended (specs/002 §3.2: only if any thinking was sent). It runs when
// the reply begins (see order) and before done or error; no thinking
// follows it.
func (e *Encoder) endThinking(dst []byte) []byte {
	if !e.thinking {
		return dst
	}
	e.thinking = false
	return append(dst, "event: thinking_done\ndata: {}\n\n"...)
}
