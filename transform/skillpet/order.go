package skillpet

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// order keeps the thinking of specs/002 §3.2 ahead of the reply, whatever
// order the model wrote things in (CONTRACT.md §7: "a skillpet client
// never gets thinking after thinking_done unless a new round starts"; this
// encoder writes one round). thinking_done "marks the end of the thinking:
// the tokens after it are the reply", so a round is thinking events, then
// thinking_done if any were sent, then the reply: token, tool_start,
// ask_user and resource events. status and tool_args_heartbeat may come
// anywhere. The repairs:
//
//   - Answer text that comes while the model's reasoning is open (a
//     <think> block, a thinking section or a phase: jsonl writing
//     final_delta inside its thinking) is held until the reasoning closes,
//     up to Limits.MaxBlockBytes; past that the reply begins and the rest
//     of the reasoning is left out.
//   - Reasoning that comes once the reply began (native reasoning resumed
//     after content, an aiplan thought after direct_response or
//     tool_calls) cannot be placed and is left out of this protocol, once
//     reported per block (reasoning_left_out, in the log: specs/002 has no
//     place for violations). Answer text is never left out.
//   - A serp queries resource that comes before the reply began (a jsonl
//     list written early) is held until the end, so that it does not end
//     the thinking; one that comes after goes out at once.
//
// With enableThinking false no thinking is sent, so nothing is held or
// left out.
type order struct {
	// replied: the reply began; no thinking may follow.
	replied bool
	// leftOut: the open reasoning block is being left out, and that was
	// reported.
	leftOut bool
	// The model's open sections.
	inReasoning, inThinking, inPhase bool

	hold    []byte // answer text held while the model's reasoning is open
	maxHold int
	queries [][]string

	log transform.RepairLog
}

// Repairs returns the codes of the order repairs made so far
// (transform.Repairer).
func (e *Encoder) Repairs() ([]string, int) { return e.order.log.Repairs() }

// reasoningOpen reports whether the model's reasoning is open, so that
// answer text must wait for it.
func (o *order) reasoningOpen() bool { return o.inReasoning || o.inThinking || o.inPhase }

// openBlock notes that a reasoning block or phase opens.
func (e *Encoder) openBlock() {
	e.newBlock = true
	e.order.leftOut = false
}

// mayThink reports whether reasoning text may be sent now, reporting the
// block it belongs to as left out, once, when it may not.
func (e *Encoder) mayThink(text []byte) bool {
	o := &e.order
	if e.req.NoThinking || len(text) == 0 {
		return false
	}
	if !o.replied {
		return true
	}
	if !o.leftOut {
		o.leftOut = true
		o.log.Note(transform.CodeReasoningLeftOut)
	}
	return false
}

// appendAnswer sends answer text as a token, or holds it while the model's
// reasoning is open and may still be sent before it.
func (e *Encoder) appendAnswer(dst, text []byte) []byte {
	o := &e.order
	if len(text) == 0 {
		return dst
	}
	if !e.req.NoThinking && !o.replied && o.reasoningOpen() {
		if len(o.hold)+len(text) <= o.maxHold {
			o.hold = append(o.hold, text...)
			return dst
		}
		// The reasoning goes on past the limit: what follows of it is
		// left out.
		if !o.leftOut {
			o.leftOut = true
			o.log.Note(transform.CodeReasoningLeftOut)
		}
	}
	dst = e.beginReply(dst)
	return appendToken(dst, text)
}

// beginReply ends the thinking (thinking_done, if thinking was sent) and
// sends the held answer text: the reply begins, and no thinking follows.
func (e *Encoder) beginReply(dst []byte) []byte {
	o := &e.order
	dst = e.endThinking(dst)
	o.replied = true
	if len(o.hold) > 0 {
		dst = appendToken(dst, o.hold)
		o.hold = o.hold[:0]
	}
	return dst
}

// reasoningClosed releases the held answer once no reasoning is open.
func (e *Encoder) reasoningClosed(dst []byte) []byte {
	if e.order.reasoningOpen() || len(e.order.hold) == 0 {
		return dst
	}
	return e.beginReply(dst)
}

// appendQueries sends a serp queries list once the reply began, and holds
// one that comes before until the end (appendEnding), so that it does not
// end the thinking.
func (e *Encoder) appendQueries(dst []byte, list []string) []byte {
	switch {
	case len(list) == 0:
	case e.order.replied:
		dst = e.appendSerpQueries(dst, list)
	default:
		e.order.queries = append(e.order.queries, list)
	}
	return dst
}

// appendEnding sends what the stream owes before done or error: the held
// answer after thinking_done, and the serp queries.
func (e *Encoder) appendEnding(dst []byte) []byte {
	dst = e.beginReply(dst)
	for _, q := range e.order.queries {
		dst = e.appendSerpQueries(dst, q)
	}
	return dst
}

// appendToken appends a token event with text (specs/002 §3.2).
func appendToken(dst, text []byte) []byte {
	dst = append(dst, "event: token\ndata: {\"content\":"...)
	dst = jsonout.AppendString(dst, text)
	return append(dst, "}\n\n"...)
}
