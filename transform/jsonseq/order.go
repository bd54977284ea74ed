package jsonseq

import (
	"strconv"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/gymbro"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// The wire's thinking section (specs/001 §2 items 2–7).
const (
	thinkingNone  uint8 = iota // no thinking_start sent
	thinkingOpen               // thinking_start sent
	thinkingEnded              // thinking_end sent: no phase may follow
)

// order keeps the event order of specs/001 §2 on the wire, whatever order
// the model wrote things in (CONTRACT.md §7): an aiplan reply may put
// direct_response before thought (specs/003 fixes no key order), a jsonl
// reply may write its events in any order, a ThinkingML reply may have a
// second <thinking> after <final>. The rules and their repairs:
//
//   - serp_summary comes first, once: one that comes later is left out
//     (serp_summary_left_out).
//   - The thinking section opens lazily, at its first phase, so that a
//     thinking section with no phase sends nothing (item 3: a phase is not
//     optional), and closes when the model closes it, so that the client
//     learns at once that the reasoning ended; phases of a second thinking
//     section are then left out (reasoning_left_out). A phase outside any
//     thinking section gets a synthesised thinking_start
//     (synthesized_event), and its section closes before what follows the
//     reasoning: the answer's first final_delta, an extra event, or the
//     end.
//   - Phases are numbered 1, 2, 3, … on the wire; a phase whose id the
//     model wrote otherwise is sent renumbered (phase_renumbered), and a
//     phase without a title gets ReasoningTitle (synthesized_event).
//   - The answer never comes before thinking_end: answer text that comes
//     while the model's thinking section or a phase is open is held until
//     it closes, up to Limits.MaxBlockBytes; past that, thinking_end is
//     sent (synthesized_event if the model had not ended it) and the
//     answer flows. Reasoning that comes once the answer began or the
//     thinking ended cannot be placed and is left out
//     (reasoning_left_out, once per phase). Answer text is never left out.
//   - serp_queries comes after the final_deltas, once: the first list is
//     held and sent right before final_end (a second one is left out,
//     serp_queries_left_out), so that answer text after it still comes
//     before it.
//   - final_end comes once, right before completed, after at least one
//     final_delta: a reply without answer text gets one with empty text
//     (item 8 says one or more; nothing the model wrote changes, so it is
//     not reported).
//
// Native and <think> reasoning have no place in JSONSeq and are never
// sent; tool_call, clarify and artifacts, which spec-following clients
// ignore, go out as they come.
//
// A repair's offset is the count of reply bytes delivered (KindRaw) when
// it was made: where in the reply, to within the bytes a parser holds
// back, which depend on how the reply was cut.
type order struct {
	wire     uint8 // thinkingNone, thinkingOpen or thinkingEnded
	phases   int   // phases sent: the next wire id is phases+1
	wireID   int   // the wire id of the model's open phase, 0 if none or left out
	summary  bool  // no serp_summary may be sent any more
	answered bool  // a final_delta was sent
	newRound bool  // a round_start came since the last answer text (loop.go)

	// The model's open sections.
	inThinking, inPhase bool

	hold    []byte // answer text held while the model's reasoning is open
	maxHold int

	queries    []string
	hasQueries bool

	// offset counts the reply bytes (KindRaw) so far, the offset of the
	// repairs reported.
	offset int64
	log    transform.RepairLog
}

// note reports a repair: in completed.metadata.violations and, through
// Repairs, in the stream's log.
func (e *Encoder) note(code, detail string) {
	e.order.log.Note(code)
	e.sys.NoteViolation(transform.Event{Kind: transform.KindViolation, Code: code,
		Offset: e.order.offset, Text: []byte(detail)})
}

// Repairs returns the codes of the order repairs made so far
// (transform.Repairer).
func (e *Encoder) Repairs() ([]string, int) { return e.order.log.Repairs() }

// appendSummary sends serp_summary if it may still come (item 1).
func (e *Encoder) appendSummary(dst, text []byte) []byte {
	if e.order.summary {
		e.note(transform.CodeSerpSummaryLeftOut, "serp_summary after the reasoning or the answer began, or a second one")
		return dst
	}
	e.order.summary = true
	return appendText(e.head(dst, "serp_summary"), text)
}

// appendPhaseStart places a phase (items 2–6), or leaves it out once the
// answer began or the thinking ended.
func (e *Encoder) appendPhaseStart(dst []byte, ev transform.Event) []byte {
	o := &e.order
	o.inPhase, o.wireID = true, 0
	if o.answered || o.wire == thinkingEnded {
		why := " after the thinking ended"
		if o.answered {
			why = " after the answer began"
		}
		e.note(transform.CodeReasoningLeftOut, "phase "+strconv.Itoa(ev.Index)+why)
		return dst
	}
	if o.wire == thinkingNone {
		if !o.inThinking {
			e.note(transform.CodeSynthesizedEvent, "thinking_start")
		}
		o.wire, o.summary = thinkingOpen, true
		dst = gymbro.AppendEventTail(e.head(dst, "thinking_start"))
	}
	o.phases++
	o.wireID = o.phases
	if ev.Index != o.wireID {
		e.note(transform.CodePhaseRenumbered, strconv.Itoa(ev.Index)+"->"+strconv.Itoa(o.wireID))
	}
	title := ev.Text
	if len(title) == 0 {
		e.note(transform.CodeSynthesizedEvent, "title")
		title = e.title
	}
	dst = appendID(e.head(dst, "phase_start"), o.wireID)
	dst = append(dst, `,"title":`...)
	dst = jsonout.AppendString(dst, title)
	return gymbro.AppendEventTail(dst)
}

// appendPhaseDelta sends text of the open phase under its wire id.
func (e *Encoder) appendPhaseDelta(dst, text []byte) []byte {
	if len(text) == 0 || e.order.wireID == 0 {
		return dst
	}
	return appendText(appendID(e.head(dst, "phase_delta"), e.order.wireID), text)
}

// appendAnswer sends answer text, or holds it while the model's reasoning
// is open and may still be placed before it (item 7 before item 8).
func (e *Encoder) appendAnswer(dst, text []byte) []byte {
	o := &e.order
	if len(text) == 0 {
		return dst
	}
	if (o.inThinking || o.inPhase) && !o.answered && o.wire != thinkingEnded {
		if len(o.hold)+len(text) <= o.maxHold {
			o.hold = append(o.hold, text...)
			return dst
		}
		// The reasoning goes on past the limit: it ends here on the wire,
		// and what follows of it is left out.
		if o.wire == thinkingOpen {
			e.note(transform.CodeSynthesizedEvent, "thinking_end")
		}
		if o.wireID != 0 {
			e.note(transform.CodeReasoningLeftOut, "the rest of phase "+strconv.Itoa(o.wireID)+", after the held answer reached max_block")
			o.wireID = 0
		}
	}
	dst = e.beginAnswer(dst)
	return e.appendFinalDelta(dst, text)
}

// beginAnswer ends the wire's thinking section and sends the held answer
// text: the answer's place has come.
func (e *Encoder) beginAnswer(dst []byte) []byte {
	o := &e.order
	dst = e.endThinking(dst)
	o.summary = true
	if len(o.hold) > 0 {
		dst = e.appendFinalDelta(dst, o.hold)
		o.hold = o.hold[:0]
	}
	return dst
}

// endThinking sends thinking_end if the wire's thinking section is open.
func (e *Encoder) endThinking(dst []byte) []byte {
	if e.order.wire != thinkingOpen {
		return dst
	}
	e.order.wire = thinkingEnded
	return gymbro.AppendEventTail(e.head(dst, "thinking_end"))
}

// appendFinalDelta sends one final_delta, with a paragraph break first
// when its text opens a later round's answer (loop.go).
func (e *Encoder) appendFinalDelta(dst, text []byte) []byte {
	o := &e.order
	sep := ""
	if o.newRound && o.answered && len(text) > 0 {
		sep = "\n\n"
	}
	if len(text) > 0 {
		o.newRound = false
	}
	o.answered = true
	e.answerLen += int64(len(sep) + utf8.RuneCount(text))
	dst = e.head(dst, "final_delta")
	dst = append(dst, `,"text":"`...)
	dst = jsonout.AppendStringBodyS(dst, sep)
	dst = jsonout.AppendStringBody(dst, text)
	return gymbro.AppendEventTail(append(dst, '"'))
}

// reasoningClosed notes that a model's section closed and releases the
// held answer once no reasoning is open any more.
func (e *Encoder) reasoningClosed(dst []byte) []byte {
	o := &e.order
	if o.inThinking || o.inPhase || len(o.hold) == 0 {
		return dst
	}
	return e.beginAnswer(dst)
}

// extraComes readies the wire for an extra event (tool_call, clarify,
// artifacts), which may come anywhere before final_end: after the model's
// reasoning ended, it ends the wire's thinking section too, so that the
// event does not read as part of the reasoning; reasoning after it is then
// left out.
func (e *Encoder) extraComes(dst []byte) []byte {
	if e.order.inThinking || e.order.inPhase {
		return dst
	}
	return e.endThinking(dst)
}

// keepQueries holds the first serp queries list until the end.
func (e *Encoder) keepQueries(list []string) {
	if e.order.hasQueries {
		e.note(transform.CodeSerpQueriesLeftOut, "a second serp_queries")
		return
	}
	e.order.queries, e.order.hasQueries = list, true
}

// appendEnding sends what a stream owes before its terminal event: the
// held answer, thinking_end, serp_queries after the answer; with final
// (a completed stream) also a final_delta if none was sent, then
// final_end. A failed stream gets no final_end (see AppendEvent) and no
// invented final_delta, but keeps everything the model wrote.
func (e *Encoder) appendEnding(dst []byte, final bool) []byte {
	o := &e.order
	if o.inThinking && o.wire == thinkingOpen {
		e.note(transform.CodeSynthesizedEvent, "thinking_end")
	}
	dst = e.beginAnswer(dst)
	if final && !o.answered {
		dst = e.appendFinalDelta(dst, nil)
	}
	if o.hasQueries && o.answered {
		dst = e.head(dst, "serp_queries")
		dst = append(dst, `,"queries":`...)
		dst = jsonout.AppendStrings(dst, o.queries)
		dst = gymbro.AppendEventTail(dst)
	}
	if final {
		dst = e.appendFinalEnd(dst)
	}
	return dst
}
