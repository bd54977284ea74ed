package openai

import (
	"strconv"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// chunkTail ends a chunk whose choice has no finish reason yet.
const chunkTail = `,"logprobs":null,"finish_reason":null}]}` + "\n\n"

// appendRoleChunk appends the first chunk, delta {"role": "assistant",
// "content": ""}, as OpenAI sends it, once; it fixes the chunks' prefix,
// so every chunk carries the same id, created and model.
func (e *Encoder) appendRoleChunk(dst []byte) []byte {
	if e.prefix != nil {
		return dst
	}
	p := append([]byte(nil), `{"id":"chatcmpl-`...)
	p = jsonout.AppendStringBodyS(p, e.meta.MessageID)
	p = append(p, `","object":"chat.completion.chunk","created":`...)
	p = strconv.AppendInt(p, e.meta.Created.Unix(), 10)
	p = append(p, `,"model":`...)
	p = jsonout.AppendStringS(p, e.model)
	e.prefix = append(p, `,"choices":`...)
	dst = e.appendChunkHead(dst)
	dst = append(dst, `{"role":"assistant","content":""}`...)
	return append(dst, chunkTail...)
}

// appendChunkHead appends a chunk up to its choice's delta value, sending
// the role chunk first if the upstream was never routed (KindRouted is
// promised before content; this keeps the stream valid if it is missing).
func (e *Encoder) appendChunkHead(dst []byte) []byte {
	if e.prefix == nil {
		dst = e.appendRoleChunk(dst)
	}
	dst = append(dst, "data: "...)
	dst = append(dst, e.prefix...)
	return append(dst, `[{"index":0,"delta":`...)
}

// appendReasoning sends pre, text and post as reasoning_content, after
// "\n\n" when they open a new reasoning block after earlier reasoning, so
// that blocks read as paragraphs (CONTRACT.md §5: phases as
// "**<title>**\n\n<text>"). Empty text sends nothing.
func (e *Encoder) appendReasoning(dst []byte, pre string, text []byte, post string) []byte {
	if len(text) == 0 {
		return dst
	}
	sep := ""
	if e.newBlock && e.thought {
		sep = "\n\n"
	}
	e.newBlock = false
	e.thought = true
	if !e.meta.Stream {
		e.whole.reasoning = append(e.whole.reasoning, sep...)
		e.whole.reasoning = append(e.whole.reasoning, pre...)
		e.whole.reasoning = append(e.whole.reasoning, text...)
		e.whole.reasoning = append(e.whole.reasoning, post...)
		return dst
	}
	dst = e.appendChunkHead(dst)
	dst = append(dst, `{"reasoning_content":"`...)
	dst = jsonout.AppendStringBodyS(dst, sep)
	dst = jsonout.AppendStringBodyS(dst, pre)
	dst = jsonout.AppendStringBody(dst, text)
	dst = jsonout.AppendStringBodyS(dst, post)
	dst = append(dst, `"}`...)
	return append(dst, chunkTail...)
}

// appendContent sends answer text as content, after "\n\n" when it opens
// the answer of a new round after earlier answer text (loop.go), so that
// the rounds read as paragraphs of the one message. Empty text sends
// nothing.
func (e *Encoder) appendContent(dst, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	sep := ""
	if e.newRound && e.answered {
		sep = "\n\n"
	}
	e.newRound, e.answered = false, true
	if !e.meta.Stream {
		e.whole.content = append(e.whole.content, sep...)
		e.whole.content = append(e.whole.content, text...)
		return dst
	}
	dst = e.appendChunkHead(dst)
	dst = append(dst, `{"content":"`...)
	dst = jsonout.AppendStringBodyS(dst, sep)
	dst = jsonout.AppendStringBody(dst, text)
	dst = append(dst, `"}`...)
	return append(dst, chunkTail...)
}

// appendFinishChunks ends a streamed completion: a chunk with an empty
// delta and the finish reason, the usage chunk (choices empty, as OpenAI
// sends it for stream_options.include_usage) when usage came and the
// client asked for it, and [DONE].
func (e *Encoder) appendFinishChunks(dst []byte, reason string) []byte {
	dst = e.appendChunkHead(dst)
	dst = append(dst, `{},"logprobs":null,"finish_reason":`...)
	dst = jsonout.AppendStringS(dst, reason)
	dst = append(dst, "}]}\n\n"...)
	if e.usage != nil && e.meta.IncludeUsage {
		dst = append(dst, "data: "...)
		dst = append(dst, e.prefix...)
		dst = append(dst, `[],"usage":`...)
		dst = append(dst, e.usage...)
		dst = append(dst, "}\n\n"...)
	}
	return append(dst, "data: [DONE]\n\n"...)
}
