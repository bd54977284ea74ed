// Package agui speaks AG-UI 1.0 (the Agent User Interaction protocol,
// docs.ag-ui.com; CONTRACT.md §16): a RunAgentInput body in (Format,
// convert.go), one agent run out as `data:`-only SSE events that
// @ag-ui/client's HttpAgent reads, verifies and assembles into messages,
// and that the CopilotKit runtime passes on to its pages.
//
// What the reply holds becomes AG-UI's own events: RUN_STARTED first, the
// reasoning as REASONING_START … REASONING_END spans of REASONING_MESSAGE_*
// messages (never the deprecated THINKING_* events, which 1.0 removed),
// the answer as TEXT_MESSAGE_*, tool calls as TOOL_CALL_START / ARGS / END,
// and RUN_FINISHED (with the usage) or RUN_ERROR last. The agent loop's
// rounds (CONTRACT.md §12) add TOOL_CALL_RESULT for the calls the gateway
// runs, a step per round after the first, and ACTIVITY_* for their
// progress (tools.go). What AG-UI has no event for (serp queries and
// summary, clarify, artifacts, violations) goes in CUSTOM events named
// llmstream.<kind> (custom.go).
//
// Every event keeps both clients' rules: the 1.0 verifier and schemas
// (@ag-ui/client and @ag-ui/core 1.0.0) and those of 0.0.59, the version
// @copilotkit/runtime 1.75 pins, which validates every event against its
// schemas before it verifies the run. Only fields both schemas declare are
// sent: 1.0 strips others with a warning.
package agui

import (
	"strconv"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// ContentType is the response Content-Type: HttpAgent reads any other
// than the protobuf media type as SSE.
const ContentType = "text/event-stream"

// ProtocolVersion is the AG-UI version the stream speaks, declared in
// RUN_STARTED (1.0 reads it; 0.0.59 passes it through).
const ProtocolVersion = "1.0"

// keepAlive is the heartbeat: an SSE comment, which both clients' parsers
// skip (they read data: lines only).
const keepAlive = ": keep-alive\n\n"

// reasoningKind says which reasoning message is open.
type reasoningKind uint8

const (
	reasoningNone  reasoningKind = iota
	reasoningFree                // free reasoning (<think>, reasoning_content)
	reasoningPhase               // a ThinkingML phase, e.phase
)

// Encoder writes one AG-UI run.
type Encoder struct {
	meta transform.Meta
	// mid prefixes every id the stream makes (messages, spans, activity):
	// the request's message id, unique per request, so that ids stay
	// unique across the runs of a thread, whose messages the client keeps.
	mid             string
	threadID, runID string
	history         *History
	round           int
	// seg numbers the assistant message that text and tool calls go in
	// (1, 2, …); segUsed says an event named it, segFresh that the next
	// one takes a new message (the last one's text ended, or a round
	// began).
	seg               int64
	segUsed, segFresh bool
	text              bool // the assistant message's text is open
	reasoning         reasoningKind
	phase             int  // the open phase's index
	span              bool // a reasoning span is open
	nSpan, nReasoning int64
	step              bool // the step of e.round is open
	// calls[i] is the state of tool call i (tools.go); ids[i] its id once
	// started.
	calls []uint8
	ids   []string
	// toolUse says a call for the client to run was sent.
	toolUse bool
	// usage is the upstream's last usage object (copied), model the model
	// it reported.
	usage []byte
	model string
	done  bool
}

// New returns an Encoder for one stream. The run's threadId and runId are
// the request's (Meta.Request, a Request); a route whose clients send
// another body uses the message id for both.
func New(meta transform.Meta) *Encoder {
	e := &Encoder{meta: meta, mid: meta.MessageID, round: 1, seg: 1}
	if e.mid == "" {
		e.mid = "msg"
	}
	e.threadID, e.runID = e.mid, e.mid
	if r, ok := meta.Request.(Request); ok {
		e.history = r.History
		if r.ThreadID != "" {
			e.threadID = r.ThreadID
		}
		if r.RunID != "" {
			e.runID = r.RunID
		}
	}
	return e
}

// Begin appends RUN_STARTED {threadId, runId, protocolVersion}: the
// verifier requires it first.
func (e *Encoder) Begin(dst []byte) []byte {
	dst = append(dst, `data: {"type":"RUN_STARTED","threadId":`...)
	dst = jsonout.AppendStringS(dst, e.threadID)
	dst = append(dst, `,"runId":`...)
	dst = jsonout.AppendStringS(dst, e.runID)
	return append(dst, `,"protocolVersion":"`+ProtocolVersion+`"}`+"\n\n"...)
}

// AppendEvent appends the AG-UI events for ev. KindRaw, the start and end
// kinds that open nothing by themselves (messages open on their first
// text), and KindThinkingStart have no event of their own.
func (e *Encoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Kind {
	case transform.KindReasoningDelta:
		dst = e.appendReasoning(dst, ev.Text)
	case transform.KindReasoningEnd:
		if e.reasoning == reasoningFree {
			dst = e.closeReasoning(dst)
		}
	case transform.KindPhaseStart:
		dst = e.appendPhaseStart(dst, ev.Index, ev.Text)
	case transform.KindPhaseDelta:
		dst = e.appendPhaseDelta(dst, ev.Index, ev.Text)
	case transform.KindPhaseEnd:
		if e.reasoning == reasoningPhase && e.phase == ev.Index {
			dst = e.closeReasoningMessage(dst)
		}
	case transform.KindThinkingEnd:
		dst = e.closeReasoning(dst)
	case transform.KindAnswerDelta:
		dst = e.appendText(dst, ev.Text)
	case transform.KindToolCallStart:
		dst = e.appendToolStart(dst, ev)
	case transform.KindToolArgsDelta:
		dst = e.appendToolArgs(dst, ev)
	case transform.KindToolCallEnd:
		dst = e.appendToolEnd(dst, ev)
	case transform.KindToolRun:
		dst = e.appendToolRun(dst, ev)
	case transform.KindToolProgress:
		dst = e.appendToolProgress(dst, ev)
	case transform.KindToolResult:
		dst = e.appendToolResult(dst, ev)
	case transform.KindRoundStart:
		dst = e.appendRound(dst, ev.Index)
	case transform.KindSerpSummary:
		dst = e.appendSerpSummary(dst, ev.Text)
	case transform.KindSerpQueries:
		dst = e.appendSerpQueries(dst, ev.List)
	case transform.KindClarify:
		dst = e.appendClarify(dst, ev.Clarify)
	case transform.KindArtifacts:
		dst = e.appendArtifacts(dst, ev.Text)
	case transform.KindViolation:
		dst = e.appendViolation(dst, ev)
	case transform.KindRouted:
		if ev.Name != "" {
			e.model = ev.Name
		}
	case transform.KindUsage:
		e.usage = append(e.usage[:0], ev.Text...)
	case transform.KindFinish, transform.KindError:
		dst = e.appendEnd(dst, ev)
	}
	return dst
}

// appendRound ends round e.round and starts round n (CONTRACT.md §12):
// the round's messages close (the next round's text is a message of its
// own, as the upstream's next reply is), the step of the round before
// finishes, and STEP_STARTED {stepName: "round n"} opens the next one.
// The first round is no step: a run of one round has no step events, as
// before the agent loop existed. Rounds are numbered on: a round number
// that does not grow takes the next one, so that ids and step names stay
// unique.
func (e *Encoder) appendRound(dst []byte, n int) []byte {
	dst = e.closeRound(dst)
	dst = e.finishStep(dst)
	e.segFresh = true
	if n <= e.round {
		n = e.round + 1
	}
	e.round = n
	e.step = true
	dst = append(dst, `data: {"type":"STEP_STARTED","stepName":"round `...)
	dst = strconv.AppendInt(dst, int64(n), 10)
	return append(dst, "\"}\n\n"...)
}

// closeRound closes the round's open reasoning and text messages.
func (e *Encoder) closeRound(dst []byte) []byte {
	dst = e.closeReasoning(dst)
	return e.closeText(dst)
}

// finishStep appends STEP_FINISHED for the open step, if any.
func (e *Encoder) finishStep(dst []byte) []byte {
	if !e.step {
		return dst
	}
	e.step = false
	dst = append(dst, `data: {"type":"STEP_FINISHED","stepName":"round `...)
	dst = strconv.AppendInt(dst, int64(e.round), 10)
	return append(dst, "\"}\n\n"...)
}

// appendEnd ends the run for a KindFinish or KindError. Everything open
// closes first, since the verifier refuses RUN_FINISHED while a message,
// a reasoning span, a tool call or a step is open: the messages and the
// step end; a call still running gets a TOOL_CALL_RESULT with the
// failure, so that the next run's history answers it; a call whose
// arguments were still streaming ends before RUN_FINISHED and stays open
// before RUN_ERROR (its arguments were cut, and RUN_ERROR needs nothing
// closed). Then RUN_FINISHED {threadId, runId, usage, metadata:
// {llmstream: {finishReason}}} or RUN_ERROR {message, code, usage}.
func (e *Encoder) appendEnd(dst []byte, ev transform.Event) []byte {
	e.done = true
	dst = e.closeRound(dst)
	failed := ev.Kind == transform.KindError
	msg := "the tool call did not finish"
	if failed {
		msg = ev.FailureMessage()
	} else {
		dst = e.endStreamingCalls(dst)
	}
	dst = e.abandonRuns(dst, msg)
	dst = e.finishStep(dst)
	if failed {
		dst = append(dst, `data: {"type":"RUN_ERROR","message":`...)
		dst = jsonout.AppendStringS(dst, msg)
		if ev.Code != "" {
			dst = append(dst, `,"code":`...)
			dst = jsonout.AppendStringS(dst, ev.Code)
		}
		dst = e.appendUsage(dst)
		return append(dst, "}\n\n"...)
	}
	dst = append(dst, `data: {"type":"RUN_FINISHED","threadId":`...)
	dst = jsonout.AppendStringS(dst, e.threadID)
	dst = append(dst, `,"runId":`...)
	dst = jsonout.AppendStringS(dst, e.runID)
	dst = e.appendUsage(dst)
	dst = append(dst, `,"metadata":{"llmstream":{"finishReason":`...)
	dst = jsonout.AppendStringS(dst, finishReason(ev.Code, e.toolUse))
	return append(dst, "}}}\n\n"...)
}

// finishReason is the upstream's finish reason in OpenAI's spelling,
// "stop" when it sent none; a stream that asked the client to run tools
// under "stop" (tool calls the model wrote as text) reports "tool_calls".
func finishReason(code string, toolUse bool) string {
	switch {
	case (code == "" || code == "stop") && toolUse:
		return "tool_calls"
	case code == "":
		return "stop"
	}
	return code
}

// AppendHeartbeat appends an SSE comment.
func (e *Encoder) AppendHeartbeat(dst []byte, _ time.Time) []byte {
	if e.done {
		return dst
	}
	return append(dst, keepAlive...)
}

// appendID appends, quoted, the id made of the stream's prefix, a kind
// and a number: "<mid>-<kind>-<n>".
func (e *Encoder) appendID(dst []byte, kind string, n int64) []byte {
	dst = append(dst, '"')
	dst = jsonout.AppendStringBodyS(dst, e.mid)
	dst = append(dst, '-')
	dst = append(dst, kind...)
	dst = append(dst, '-')
	dst = strconv.AppendInt(dst, n, 10)
	return append(dst, '"')
}

var _ transform.Encoder = (*Encoder)(nil)
