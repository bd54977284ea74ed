// Package jsonseq encodes a reply as the JSONSeq v1 event stream (specs/001,
// CONTRACT.md §5 "jsonseq"): serp_summary, thinking_start, phase_start,
// phase_delta, thinking_end, final_delta, serp_queries and final_end, the
// extra events tool_call, clarify and artifacts that spec-following clients
// ignore, and the GymBro system events status, heartbeat, completed and
// error (specs/001 §3), written by gymbro.SystemEvents.
//
// The events are sent in the order of specs/001 §2 whatever order the
// model wrote things in (CONTRACT.md §7); order.go has the rules and the
// repairs, which are reported in completed.metadata.violations.
package jsonseq

import (
	"strconv"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/gymbro"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// ContentType is the response Content-Type of a JSONSeq stream.
const ContentType = "text/event-stream"

// Encoder writes one JSONSeq stream, in the order of specs/001 §2 whatever
// order the events come in (see order).
type Encoder struct {
	sys gymbro.SystemEvents
	// answerLen counts the code points of the final_delta texts: it is
	// completed.reply_len, the length of the reply the client renders.
	answerLen int64
	order     order
	// title is the phase title for a phase that has none.
	title []byte
	// calls are the calls to tools the gateway runs, rounds the
	// round_starts sent (loop.go).
	calls  gymbro.ServerCalls
	rounds int
}

// New returns an Encoder for one stream.
func New(meta transform.Meta) *Encoder {
	title := meta.ReasoningTitle
	if title == "" {
		title = transform.DefaultReasoningTitle
	}
	e := &Encoder{sys: gymbro.NewSystemEvents(meta), title: []byte(title)}
	e.order.maxHold = meta.Limits.WithDefaults().MaxBlockBytes
	return e
}

// Begin appends status queued and status working, as gymbro does.
func (e *Encoder) Begin(dst []byte) []byte {
	return e.sys.AppendBegin(dst)
}

// AppendEvent appends the JSONSeq encoding of ev, in the order of
// specs/001 §2 (see order). Reasoning (<think> and native reasoning) is not
// emitted (CONTRACT.md §5); KindRaw, KindPhaseEnd, KindAnswerStart,
// KindAnswerEnd and the tool call's start and argument deltas have no
// event of their own.
func (e *Encoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if e.sys.Done() {
		return dst
	}
	o := &e.order
	switch ev.Kind {
	case transform.KindRaw:
		o.offset += int64(len(ev.Text))
	case transform.KindSerpSummary:
		dst = e.appendSummary(dst, ev.Text)
	case transform.KindThinkingStart:
		o.inThinking = true
	case transform.KindThinkingEnd:
		o.inThinking = false
		if !o.inPhase {
			dst = e.endThinking(dst)
			dst = e.reasoningClosed(dst)
		}
	case transform.KindPhaseStart:
		dst = e.appendPhaseStart(dst, ev)
	case transform.KindPhaseDelta:
		if o.inPhase {
			dst = e.appendPhaseDelta(dst, ev.Text)
		}
	case transform.KindPhaseEnd:
		o.inPhase, o.wireID = false, 0
		dst = e.reasoningClosed(dst)
	case transform.KindAnswerDelta:
		dst = e.appendAnswer(dst, ev.Text)
	case transform.KindSerpQueries:
		e.keepQueries(ev.List)
	case transform.KindToolCallStart:
		if ev.Server {
			e.calls.Start(ev)
		}
	case transform.KindToolCallEnd:
		if ev.Server {
			dst = e.appendServerCall(dst, ev)
		} else {
			dst = gymbro.AppendEventTail(e.appendToolCallHead(e.extraComes(dst), ev))
		}
	case transform.KindToolRun:
		e.calls.Run(ev)
	case transform.KindToolProgress:
		dst = e.appendToolProgress(dst, ev)
	case transform.KindToolResult:
		dst = e.appendToolResult(dst, ev)
	case transform.KindRoundStart:
		dst = e.appendRoundStart(dst)
	case transform.KindClarify:
		dst = e.appendClarify(e.extraComes(dst), ev.Clarify)
	case transform.KindArtifacts:
		dst = e.head(e.extraComes(dst), "artifacts")
		dst = append(dst, `,"items":`...)
		dst = jsonout.AppendOrString(dst, ev.Text)
		dst = gymbro.AppendEventTail(dst)
	case transform.KindFinish:
		// specs/001 §2 makes final_end mandatory: a reply that had no
		// answer section (tool calls only) still ends its final part
		// before completed.
		dst = e.abandonRuns(dst, "the tool call did not finish")
		dst = e.appendEnding(dst, true)
		dst = e.sys.AppendCompleted(dst, ev.Code, e.answerLen)
	case transform.KindError:
		// No final_end: it would tell a client that ignores system events
		// (specs/001 §3 lets it) that the answer is whole. A stream that
		// fails closes its sections first, so an answer cut off mid-way
		// and one the model had finished look alike here; neither is
		// claimed complete. Held answer text is sent first: it is never
		// left out.
		dst = e.abandonRuns(dst, errorMessage(ev))
		dst = e.appendEnding(dst, false)
		dst = e.sys.AppendError(dst, ev)
	default:
		dst = e.sys.AppendEvent(dst, ev)
	}
	return dst
}

// AppendHeartbeat appends a heartbeat event, as gymbro does.
func (e *Encoder) AppendHeartbeat(dst []byte, now time.Time) []byte {
	return e.sys.AppendHeartbeat(dst, now)
}

func (e *Encoder) head(dst []byte, name string) []byte {
	return e.sys.AppendEventHead(dst, name)
}

// appendFinalEnd appends final_end. It is sent once, just before the
// terminal event, not at the answer's end: specs/001 §2 allows nothing but
// system events after it, and the tool calls, clarification and artifacts
// of aiplan and final_result replies come after their answer text.
func (e *Encoder) appendFinalEnd(dst []byte) []byte {
	return gymbro.AppendEventTail(e.head(dst, "final_end"))
}

// appendToolCallHead appends tool_call {id, name, args} for a complete
// call, up to its end. args is the arguments object when they are valid
// JSON, else the text the model wrote as a string, so that nothing is lost
// and the line stays JSON.
func (e *Encoder) appendToolCallHead(dst []byte, ev transform.Event) []byte {
	dst = e.toolHead(dst, "tool_call", ev.ID, ev.Name)
	dst = append(dst, `,"args":`...)
	return jsonout.AppendOrString(dst, ev.Text)
}

// errorMessage is a failure's message, else its code.
func errorMessage(ev transform.Event) string {
	if len(ev.Text) > 0 {
		return string(ev.Text)
	}
	return ev.Code
}

// appendClarify appends clarify {question, options, hint} (specs/004 §7.2
// ClarifyPayload): options is always an array, hint null when empty.
func (e *Encoder) appendClarify(dst []byte, c *transform.Clarify) []byte {
	if c == nil {
		return dst
	}
	dst = append(e.head(dst, "clarify"), ',')
	dst = jsonout.AppendClarifyFields(dst, c)
	return gymbro.AppendEventTail(dst)
}

func appendID(dst []byte, id int) []byte {
	dst = append(dst, `,"id":`...)
	return strconv.AppendInt(dst, int64(id), 10)
}

// appendText ends an event whose last field is its text, as serp_summary,
// phase_delta and final_delta are.
func appendText(dst, text []byte) []byte {
	dst = append(dst, `,"text":`...)
	dst = jsonout.AppendString(dst, text)
	return gymbro.AppendEventTail(dst)
}

var _ transform.Repairer = (*Encoder)(nil)
