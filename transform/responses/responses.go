// Package responses speaks the OpenAI Responses API on both sides of the
// proxy (CONTRACT.md §11): Convert turns a POST /v1/responses body into
// a chat-completions request, and the Encoder turns the reply into the
// streamed response.* events the official SDKs and Codex CLI read, or
// into one Response object when the client asked for no stream.
//
// The stream is response.created and response.in_progress, then one
// output item per run of the reply, each opened with
// response.output_item.added and closed with response.output_item.done:
// a message for the answer (one output_text part and its deltas), a
// reasoning item for reasoning (a <think> block or native reasoning as a
// reasoning_text content part, each ThinkingML or aiplan phase as a
// summary part "**<title>**\n\n<text>", as OpenAI writes its summaries),
// a function_call item per tool call. response.completed, or
// response.incomplete when the upstream stopped at its token limit or its
// content filter, carries the whole Response; a failure ends with
// response.failed and then an error event. Every event has an event: line
// named like its type and a sequence_number counting from 0. Reasoning never
// reaches the answer: it lives in its own items.
//
// Serp summaries and queries, clarifications, artifacts and violations
// have no place in this protocol and are not sent; the answer text still
// carries what the model wrote for the user.
package responses

import (
	"net/http"
	"strings"
	"time"

	"github.com/llmstream/llmstream/transform"
)

// ContentType is the Content-Type of a streamed response; a whole one (a
// client that asked for no stream) is application/json, which the HTTP
// layer sets for every one-body response.
const ContentType = "text/event-stream"

// UpstreamErrorType is the error type of the failures this encoder
// reports, as the openai protocol names them.
const UpstreamErrorType = "upstream_error"

// keepAlive is the SSE comment a heartbeat writes; every SSE parser skips
// it, where an unknown event type could trip a strict client.
const keepAlive = ": keep-alive\n\n"

// maxToolIndex bounds the tool call indices a stream maps to output
// items, far above Limits.MaxToolCalls, so that a bad index cannot grow
// the map without bound.
const maxToolIndex = 1 << 12

// Encoder writes one response, streamed or whole (meta.Stream). It keeps
// every output item's text, which the .done events and the final Response
// repeat: the upstream's reply limit (max_reply) bounds it.
type Encoder struct {
	meta transform.Meta
	// model is the routed model, else meta.Model.
	model string
	// base is the id the response and its items share: meta.MessageID
	// without its "msg_" prefix.
	base string
	// echo holds the request's parameters as the Response members that
	// repeat them, rendered once.
	echo []byte
	seq  int64
	// created is set once response.created and response.in_progress went
	// out.
	created bool
	items   []item
	// open is the index of the open message or reasoning item, -1 if none.
	open int
	// pending is the index of the item the model ended last, whose closing
	// events wait for the next event, -1 if none (endText).
	pending int
	// req is the request's facts.
	req Request
	// tools maps tool call indices to output index + 1 (0: none yet).
	tools []int32
	// usage is the upstream's usage object, as it came; nil when none did.
	usage  []byte
	status int
	done   bool
	// completedAt is when the response completed (Unix seconds), set once.
	completedAt int64
	// final is how the response ended.
	final final
	// summary is a compaction's summary, as the model writes it.
	summary []byte
}

// New returns an Encoder for one stream: events when meta.Stream, else one
// Response object written at the terminal event. meta.Request, when it is
// a Request, gives the parameters the Response repeats.
func New(meta transform.Meta) *Encoder {
	if meta.Created.IsZero() {
		if meta.Now != nil {
			meta.Created = meta.Now()
		} else {
			meta.Created = time.Now()
		}
	}
	req, _ := meta.Request.(Request)
	return &Encoder{
		meta:    meta,
		model:   meta.Model,
		base:    strings.TrimPrefix(meta.MessageID, "msg_"),
		echo:    appendEcho(nil, &req),
		open:    -1,
		pending: -1,
		req:     req,
		status:  http.StatusOK,
	}
}

// now returns the current time, from meta.Now when a test set it.
func (e *Encoder) now() time.Time {
	if e.meta.Now != nil {
		return e.meta.Now()
	}
	return time.Now()
}

// Status returns the HTTP status the response must have: 200, or for a
// whole response that failed 504 (upstream_timeout) or 502 (every other
// code), so that the SDKs raise an APIError. The Caddy layer reads it
// after the terminal event, before the first byte.
func (e *Encoder) Status() int { return e.status }

// Begin appends nothing: response.created waits for the upstream's model
// (KindRouted), which the Response reports.
func (e *Encoder) Begin(dst []byte) []byte { return dst }

// AppendEvent appends the encoding of ev: events when streaming; when not,
// nothing until the terminal event, which appends the whole Response.
func (e *Encoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if e.done {
		return dst
	}
	// An item the model ended is closed completed once the model writes
	// something more; the end of the stream decides instead (finish,
	// fail), and what this protocol does not send (usage, serp queries,
	// violations) decides nothing.
	switch ev.Kind {
	case transform.KindReasoningStart, transform.KindReasoningDelta, transform.KindPhaseStart,
		transform.KindPhaseDelta, transform.KindAnswerDelta, transform.KindToolCallStart,
		transform.KindToolArgsDelta, transform.KindToolRun, transform.KindToolResult, transform.KindRoundStart:
		dst = e.flushPending(dst, false)
	}
	if e.req.Compaction != NoCompaction {
		return e.compactionEvent(dst, ev)
	}
	switch ev.Kind {
	case transform.KindRouted:
		if ev.Name != "" {
			e.model = ev.Name
		}
		dst = e.begin(dst)
	case transform.KindReasoningStart:
		dst = e.closePart(dst, &contentParts)
	case transform.KindReasoningDelta:
		dst = e.reasoningText(dst, ev.Text)
	case transform.KindReasoningEnd:
		dst = e.endText(dst, itemReasoning)
	case transform.KindPhaseStart:
		dst = e.phaseStart(dst, ev.Text)
	case transform.KindPhaseDelta:
		dst = e.summaryText(dst, ev.Text)
	case transform.KindPhaseEnd:
		dst = e.closePart(dst, &summaryParts)
	case transform.KindThinkingEnd:
		dst = e.endText(dst, itemReasoning)
	case transform.KindAnswerDelta:
		dst = e.answerText(dst, ev.Text)
	case transform.KindAnswerEnd:
		dst = e.endText(dst, itemMessage)
	case transform.KindToolCallStart:
		dst = e.toolCallStart(dst, ev)
	case transform.KindToolArgsDelta:
		dst = e.toolArgs(dst, ev)
	case transform.KindToolCallEnd:
		dst = e.toolCallEnd(dst, ev)
	case transform.KindToolRun:
		dst = e.mcpRun(dst, ev)
	case transform.KindToolResult:
		if ev.Tool != nil && ev.Tool.Status == transform.ToolAwaiting {
			dst = e.mcpAwait(dst, ev)
		} else {
			dst = e.mcpResult(dst, ev)
		}
	case transform.KindRoundStart:
		// A round's answer is a message of its own (mcp.go).
		dst = e.closeText(dst, e.kindOpen())
	case transform.KindUsage:
		e.usage = append(e.usage[:0], ev.Text...)
	case transform.KindFinish:
		e.done = true
		dst = e.finish(dst, ev.Code)
	case transform.KindError:
		e.done = true
		dst = e.fail(dst, ev)
	}
	return dst
}

// AppendHeartbeat appends an SSE comment when streaming. A whole response
// gets nothing: any byte would commit it to status 200 before an error
// could still make it 502.
func (e *Encoder) AppendHeartbeat(dst []byte, _ time.Time) []byte {
	if e.done || !e.meta.Stream {
		return dst
	}
	return append(dst, keepAlive...)
}

var _ transform.Encoder = (*Encoder)(nil)
