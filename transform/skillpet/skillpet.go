// Package skillpet encodes a reply as the @skillpet/chat SSE protocol
// (specs/002 §3, CONTRACT.md §5 "skillpet"): thinking and thinking_done for
// reasoning, token for the answer, tool_start, tool_args_heartbeat and
// ask_user for tool calls, resource for serp queries and artifacts, then
// done or error. The data objects have exactly the spec's shapes: unlike
// gymbro and jsonseq they carry no message_id or request_id.
//
// The thinking comes before the reply and never after thinking_done,
// whatever order the model wrote things in (CONTRACT.md §7); order.go has
// the rules and the repairs, which reach the log through
// transform.Repairer.
package skillpet

import (
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// ContentType is the response Content-Type of a skillpet stream.
const ContentType = "text/event-stream"

// AskUserTool is the name of the tool whose calls become ask_user forms
// instead of tool_start (specs/002 §3.3, §6).
const AskUserTool = "ask_user"

// ToolArgsHeartbeatInterval is the least time between two
// tool_args_heartbeat events (CONTRACT.md §5: at most once a second).
const ToolArgsHeartbeatInterval = time.Second

// keepAlive is the SSE comment a heartbeat writes; EventSource clients
// ignore it.
const keepAlive = ": keep-alive\n\n"

// Encoder writes one skillpet stream.
type Encoder struct {
	meta transform.Meta
	req  request.SkillpetFacts // meta.Request, when the body was skillpet's
	now  func() time.Time
	// thinking is set while thinking events were sent that no
	// thinking_done has ended yet.
	thinking bool
	// thought is set once any thinking text was sent; newBlock is set when
	// a reasoning block or phase opens. Together they put "\n\n" between
	// consecutive blocks, so that the concatenated thinking reads as
	// separate paragraphs.
	thought, newBlock bool
	// lastArgsBeat is when the last tool_args_heartbeat was sent.
	lastArgsBeat time.Time
	// runs are the server calls started and not finished, starts the ids
	// of every tool_start sent (loop.go); round counts the round_starts
	// sent.
	runs   []runningCall
	starts []string
	round  int
	done   bool
	// order keeps thinking before the reply (see order).
	order order
}

// New returns an Encoder for one stream. A request.SkillpetFacts in
// meta.Request with NoThinking suppresses every thinking and thinking_done
// event (specs/002 §3.2: thinking only when enableThinking).
func New(meta transform.Meta) *Encoder {
	now := meta.Now
	if now == nil {
		now = time.Now
	}
	req, _ := meta.Request.(request.SkillpetFacts)
	e := &Encoder{meta: meta, req: req, now: now}
	e.order.maxHold = meta.Limits.WithDefaults().MaxBlockBytes
	return e
}

// Begin appends nothing: a skillpet stream has no opening event; the
// response headers open it.
func (e *Encoder) Begin(dst []byte) []byte { return dst }

// AppendEvent appends the skillpet encoding of ev, thinking before the
// reply whatever order the events come in (see order).
func (e *Encoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if e.done {
		return dst
	}
	o := &e.order
	switch ev.Kind {
	case transform.KindReasoningStart:
		o.inReasoning = true
		e.openBlock()
	case transform.KindReasoningEnd:
		o.inReasoning = false
		dst = e.reasoningClosed(dst)
	case transform.KindThinkingStart:
		o.inThinking = true
	case transform.KindThinkingEnd:
		o.inThinking = false
		dst = e.reasoningClosed(dst)
	case transform.KindReasoningDelta, transform.KindPhaseDelta:
		if e.mayThink(ev.Text) {
			dst = e.appendThinking(dst, ev.Text)
		}
	case transform.KindPhaseStart:
		o.inPhase = true
		e.openBlock()
		// specs/002 has no phases: CONTRACT.md §5 writes each as
		// "**<title>**\n\n<text>".
		if e.mayThink(ev.Text) {
			dst = e.appendThinkingTitle(dst, ev.Text)
		}
	case transform.KindPhaseEnd:
		o.inPhase = false
		dst = e.reasoningClosed(dst)
	case transform.KindAnswerDelta:
		dst = e.appendAnswer(dst, ev.Text)
	case transform.KindSerpSummary:
		// A serp summary says what the model is looking for: a transient
		// status line (specs/002 §3.2 status) that the first token clears.
		// It comes between <think> and <thinking>, so it does not end the
		// thinking.
		dst = append(dst, "event: status\ndata: {\"message\":"...)
		dst = jsonout.AppendString(dst, ev.Text)
		dst = append(dst, "}\n\n"...)
	case transform.KindSerpQueries:
		dst = e.appendQueries(dst, ev.List)
	case transform.KindToolArgsDelta:
		dst = e.appendArgsHeartbeat(dst)
	case transform.KindToolCallEnd:
		if ev.Server {
			// A server call starts when the gateway runs it (KindToolRun).
			break
		}
		dst = e.beginReply(dst)
		if ev.Name == AskUserTool {
			dst = appendAskUser(dst, ev.Text)
		} else if !e.started(ev.ID) {
			// The model gives no display name: the label is the name.
			if len(e.starts) < maxCalls {
				e.starts = append(e.starts, ev.ID)
			}
			dst = appendToolStart(dst, ev.ID, ev.Name, ev.Name, ev.Text)
		}
	case transform.KindToolRun:
		dst = e.appendToolRun(dst, ev)
	case transform.KindToolProgress:
		dst = e.appendToolProgress(dst, ev)
	case transform.KindToolResult:
		dst = e.appendToolResult(dst, ev)
	case transform.KindRoundStart:
		dst = e.appendRound(dst)
	case transform.KindResourceUpdated:
		dst = appendResourceUpdated(dst, ev.Name, ev.Text)
	case transform.KindAgent:
		dst = e.appendAgent(dst, ev)
	case transform.KindClarify:
		if ev.Clarify != nil {
			dst = e.beginReply(dst)
			dst = appendClarify(dst, ev.Clarify)
		}
	case transform.KindArtifacts:
		if !isEmptyArray(ev.Text) {
			dst = e.beginReply(dst)
		}
		dst = e.appendArtifacts(dst, ev.Text)
	case transform.KindFinish:
		e.done = true
		dst = e.appendEnding(dst)
		dst = e.abandonRuns(dst, "the tool call did not finish")
		dst = append(dst, "event: done\ndata: {\"conversationId\":"...)
		id := e.req.ConversationID
		if id == "" {
			id = e.meta.MessageID
		}
		dst = jsonout.AppendStringS(dst, id)
		dst = append(dst, "}\n\n"...)
	case transform.KindError:
		e.done = true
		dst = e.appendEnding(dst)
		dst = e.abandonRuns(dst, ev.FailureMessage())
		// The spec's error has only a message: an empty one is replaced by
		// the code, so that the user sees something.
		dst = append(dst, "event: error\ndata: {\"message\":"...)
		dst = jsonout.AppendStringS(dst, ev.FailureMessage())
		dst = append(dst, "}\n\n"...)
	}
	return dst
}

// AppendHeartbeat appends an SSE comment line: specs/002 has no heartbeat
// event, and EventSource parsers skip comments.
func (e *Encoder) AppendHeartbeat(dst []byte, _ time.Time) []byte {
	if e.done {
		return dst
	}
	return append(dst, keepAlive...)
}

// appendArgsHeartbeat appends tool_args_heartbeat while tool arguments
// stream, at most once per ToolArgsHeartbeatInterval; the first argument
// delta sends one at once so the client shows "准备工具…" promptly.
func (e *Encoder) appendArgsHeartbeat(dst []byte) []byte {
	now := e.now()
	if !e.lastArgsBeat.IsZero() && now.Sub(e.lastArgsBeat) < ToolArgsHeartbeatInterval {
		return dst
	}
	e.lastArgsBeat = now
	return append(dst, "event: tool_args_heartbeat\ndata: {\"status\":\"generating_tool_args\"}\n\n"...)
}

// appendToolStart appends tool_start {id, name, label, args} (specs/002
// §3.3). args is optional in the spec and typed as an object, so
// arguments that are not a JSON object are left out rather than sent in
// another shape.
func appendToolStart(dst []byte, id, name, label string, args []byte) []byte {
	dst = append(dst, "event: tool_start\ndata: {\"id\":"...)
	dst = jsonout.AppendStringS(dst, id)
	dst = append(dst, `,"name":`...)
	dst = jsonout.AppendStringS(dst, name)
	dst = append(dst, `,"label":`...)
	dst = jsonout.AppendStringS(dst, label)
	if obj, ok := jsonout.AppendCompactObject(append(dst, `,"args":`...), args); ok {
		dst = obj
	}
	return append(dst, "}\n\n"...)
}

var _ transform.Repairer = (*Encoder)(nil)
