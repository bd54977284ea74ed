package agui

import (
	"github.com/llmstream/llmstream/transform/jsonout"
)

// The answer and the reasoning as AG-UI messages.
//
// Each round's answer is one assistant text message, opened on its first
// text and kept open until the round's reply ends (the gateway runs the
// round's tools, the next round begins, or the run ends): the spec says
// no content follows TEXT_MESSAGE_END, and the round's tool calls join the
// same message (their parentMessageId), so the client's history holds the
// round as the upstream wrote it, one assistant message with its text and
// its calls, which is what the next run sends back. Reasoning, CUSTOM
// events and tool calls may come while it is open: the verifier tracks
// open messages by id and lets them interleave. An id never names two
// messages (claimMessage).
//
// Reasoning is a span (REASONING_START … REASONING_END) of reasoning
// messages: one for free reasoning, one per ThinkingML phase. The span
// closes when the reasoning ends or the answer or a tool call begins, so
// that a client's "thinking" indicator stops there; reasoning that comes
// later opens a span of its own.

// appendTextID appends the quoted id of the assistant message being
// written: the message id for the first, "<mid>-message-<n>" for the
// ones after it.
func (e *Encoder) appendTextID(dst []byte) []byte {
	if e.seg <= 1 {
		return jsonout.AppendStringS(dst, e.mid)
	}
	return e.appendID(dst, "message", e.seg)
}

// claimMessage makes the assistant message that text or a tool call is
// about to name: a new one when the last one is done (its text ended, or
// a round began since) and was named. One id never names two messages:
// the client would append to the first.
func (e *Encoder) claimMessage() {
	if e.segFresh && e.segUsed {
		e.seg++
		e.segUsed = false
	}
	e.segFresh = false
	e.segUsed = true
}

// appendText appends TEXT_MESSAGE_CONTENT with answer text, opening the
// round's message first (TEXT_MESSAGE_START {messageId, role:
// "assistant"}). The spec wants every delta non-empty: empty text sends
// nothing.
func (e *Encoder) appendText(dst, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	dst = e.closeReasoning(dst)
	if !e.text {
		e.text = true
		e.claimMessage()
		dst = append(dst, `data: {"type":"TEXT_MESSAGE_START","messageId":`...)
		dst = e.appendTextID(dst)
		dst = append(dst, `,"role":"assistant"}`+"\n\n"...)
	}
	dst = append(dst, `data: {"type":"TEXT_MESSAGE_CONTENT","messageId":`...)
	dst = e.appendTextID(dst)
	dst = append(dst, `,"delta":`...)
	dst = jsonout.AppendString(dst, text)
	return append(dst, "}\n\n"...)
}

// closeText appends TEXT_MESSAGE_END for the open text message, if any.
func (e *Encoder) closeText(dst []byte) []byte {
	if !e.text {
		return dst
	}
	e.text = false
	e.segFresh = true
	dst = append(dst, `data: {"type":"TEXT_MESSAGE_END","messageId":`...)
	dst = e.appendTextID(dst)
	return append(dst, "}\n\n"...)
}

// appendReasoning appends free reasoning text, in the open free reasoning
// message or a new one.
func (e *Encoder) appendReasoning(dst, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	if e.reasoning != reasoningFree {
		dst = e.closeReasoningMessage(dst)
		dst = e.openReasoning(dst, reasoningFree, 0, nil)
	}
	return e.appendReasoningContent(dst, text)
}

// appendPhaseStart opens the reasoning message of phase index. Its title
// leads the text as a Markdown heading, "**<title>**" and a blank line
// (as skillpet's thinking shows it, specs/002 §3.2), so that a client
// that renders reasoning messages shows it; the message's metadata
// carries the phase's id and title apart, {llmstream: {phase, title}},
// for a client that lays phases out itself.
func (e *Encoder) appendPhaseStart(dst []byte, index int, title []byte) []byte {
	dst = e.closeReasoningMessage(dst)
	if title == nil {
		title = []byte{} // a titled phase, even if the title is empty
	}
	dst = e.openReasoning(dst, reasoningPhase, index, title)
	if len(title) == 0 {
		return dst
	}
	dst = e.appendReasoningHead(dst)
	dst = append(dst, `"**`...)
	dst = jsonout.AppendStringBody(dst, title)
	return append(dst, `**\n\n"}`+"\n\n"...)
}

// appendPhaseDelta appends text of phase index, opening its message when
// the phase's is not the one open (a phase whose start never came).
func (e *Encoder) appendPhaseDelta(dst []byte, index int, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	if e.reasoning != reasoningPhase || e.phase != index {
		dst = e.closeReasoningMessage(dst)
		dst = e.openReasoning(dst, reasoningPhase, index, nil)
	}
	return e.appendReasoningContent(dst, text)
}

// openReasoning opens a reasoning message of kind, and the span around it
// when none is open: REASONING_START {messageId: "<mid>-reasoning-<n>"},
// then REASONING_MESSAGE_START {messageId: "<mid>-thought-<n>", role:
// "reasoning"}, with the phase's metadata for a phase (title nil: the
// phase's start never came).
func (e *Encoder) openReasoning(dst []byte, kind reasoningKind, phase int, title []byte) []byte {
	if !e.span {
		e.span = true
		e.nSpan++
		dst = append(dst, `data: {"type":"REASONING_START","messageId":`...)
		dst = e.appendID(dst, "reasoning", e.nSpan)
		dst = append(dst, "}\n\n"...)
	}
	e.reasoning, e.phase = kind, phase
	e.nReasoning++
	dst = append(dst, `data: {"type":"REASONING_MESSAGE_START","messageId":`...)
	dst = e.appendID(dst, "thought", e.nReasoning)
	dst = append(dst, `,"role":"reasoning"`...)
	if kind == reasoningPhase {
		dst = append(dst, `,"metadata":{"llmstream":{"phase":`...)
		dst = appendInt(dst, phase)
		if title != nil {
			dst = append(dst, `,"title":`...)
			dst = jsonout.AppendString(dst, title)
		}
		dst = append(dst, "}}"...)
	}
	return append(dst, "}\n\n"...)
}

// appendReasoningHead appends a REASONING_MESSAGE_CONTENT event of the
// open message up to its delta's value.
func (e *Encoder) appendReasoningHead(dst []byte) []byte {
	dst = append(dst, `data: {"type":"REASONING_MESSAGE_CONTENT","messageId":`...)
	dst = e.appendID(dst, "thought", e.nReasoning)
	return append(dst, `,"delta":`...)
}

// appendReasoningContent appends text to the open reasoning message.
func (e *Encoder) appendReasoningContent(dst, text []byte) []byte {
	dst = e.appendReasoningHead(dst)
	dst = jsonout.AppendString(dst, text)
	return append(dst, "}\n\n"...)
}

// closeReasoningMessage appends REASONING_MESSAGE_END for the open
// reasoning message, if any; the span stays open.
func (e *Encoder) closeReasoningMessage(dst []byte) []byte {
	if e.reasoning == reasoningNone {
		return dst
	}
	e.reasoning = reasoningNone
	dst = append(dst, `data: {"type":"REASONING_MESSAGE_END","messageId":`...)
	dst = e.appendID(dst, "thought", e.nReasoning)
	return append(dst, "}\n\n"...)
}

// closeReasoning closes the open reasoning message and its span
// (REASONING_END), if any.
func (e *Encoder) closeReasoning(dst []byte) []byte {
	dst = e.closeReasoningMessage(dst)
	if !e.span {
		return dst
	}
	e.span = false
	dst = append(dst, `data: {"type":"REASONING_END","messageId":`...)
	dst = e.appendID(dst, "reasoning", e.nSpan)
	return append(dst, "}\n\n"...)
}
