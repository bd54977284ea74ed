// Package anthropic speaks the Anthropic Messages API on both sides of the
// proxy (CONTRACT.md §11): Convert turns a POST /v1/messages body into an
// OpenAI chat-completions request, EstimateTokens answers count_tokens,
// and the Encoder writes the reply as the Messages API streams it —
// message_start, content blocks (thinking, text, tool_use) opened,
// streamed and stopped one at a time with contiguous indices,
// message_delta with the stop reason and usage, message_stop — or, for a
// client that did not ask for a stream, as one Message object. The
// official SDKs (@anthropic-ai/sdk, anthropic-sdk-go) and Claude Code
// consume it unchanged.
//
// Reasoning (native reasoning_content, <think>, ThinkingML phases)
// becomes thinking blocks when the request turned thinking on, and is
// left out otherwise; it never reaches a text block. Serp summaries and
// queries, clarifications, artifacts and violations have no place in the
// Messages API and are not sent; the text blocks still carry what the
// model wrote for the user.
package anthropic

import (
	"net/http"
	"time"

	"github.com/llmstream/llmstream/transform"
)

// ContentType is the Content-Type of a stream; one Message (a client that
// asked for no stream) is application/json, which the HTTP layer sets for
// every one-body response.
const ContentType = "text/event-stream"

// Encoder writes one Messages API reply, streamed or whole (meta.Stream).
type Encoder struct {
	meta transform.Meta
	req  Request // meta.Request, when the body was a Messages API body
	// model is the upstream's model once routed, else meta.Model.
	model string
	// started is set once message_start went out.
	started bool
	blocks  blockList
	// toolUse is set once a tool_use block was started.
	toolUse bool
	usage   usage
	// whole is what one Message accumulates (meta.Stream false).
	whole  []wholeBlock
	status int
	done   bool
}

// New returns an Encoder for one stream: events when meta.Stream, else
// one Message written at the terminal event. A Request in meta.Request
// says whether reasoning and the MCP blocks of the calls the gateway runs
// are shown; without one (a route whose clients send OpenAI bodies) they
// are.
func New(meta transform.Meta) *Encoder {
	req, ok := meta.Request.(Request)
	if !ok {
		req.Thinking, req.MCPBlocks = true, true
	}
	e := &Encoder{meta: meta, req: req, model: meta.Model, status: http.StatusOK}
	e.blocks.enc = e
	return e
}

// Status returns the HTTP status the response must have: 200 for a stream
// (its headers left before the reply) and for a Message; after a KindError
// a whole reply's is 504 for upstream_timeout and 502 for every other
// code. The Caddy layer reads it before the first byte.
func (e *Encoder) Status() int { return e.status }

// Begin appends nothing: message_start names the model the upstream
// reports, so it waits for the upstream's first chunk (KindRouted).
func (e *Encoder) Begin(dst []byte) []byte { return dst }

// AppendEvent appends the encoding of ev: events when streaming; when not,
// nothing until the terminal event, which appends the whole Message.
func (e *Encoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Kind {
	case transform.KindRouted:
		if ev.Name != "" && !e.started {
			e.model = ev.Name
		}
		dst = e.appendMessageStart(dst)
	case transform.KindReasoningStart, transform.KindPhaseStart, transform.KindReasoningDelta,
		transform.KindPhaseDelta:
		if e.req.Thinking {
			dst = e.blocks.event(dst, ev)
		}
	case transform.KindToolCallStart, transform.KindToolArgsDelta, transform.KindToolCallEnd:
		if !ev.Server || e.req.MCPBlocks {
			dst = e.blocks.event(dst, ev)
		}
	case transform.KindToolResult:
		if e.req.MCPBlocks {
			dst = e.blocks.event(dst, ev)
		}
	case transform.KindAnswerDelta, transform.KindRoundStart:
		dst = e.blocks.event(dst, ev)
	case transform.KindUsage:
		e.usage.note(ev.Text)
	case transform.KindFinish:
		dst = e.appendMessageStart(dst)
		dst = e.blocks.finish(dst, false)
		e.done = true
		reason := stopReason(ev.Code, e.toolUse)
		if e.meta.Stream {
			dst = e.appendMessageEnd(dst, reason)
		} else {
			dst = e.appendMessage(dst, reason)
		}
	case transform.KindError:
		if e.meta.Stream {
			dst = e.appendMessageStart(dst)
			dst = e.blocks.finish(dst, true)
		}
		e.done = true
		dst = e.appendError(dst, ev)
	}
	return dst
}

// AppendHeartbeat appends a ping event when streaming, the Messages API's
// keep-alive, which the SDKs skip. A whole Message gets nothing: any byte
// would commit the response to status 200 before an error could still
// make it 502.
func (e *Encoder) AppendHeartbeat(dst []byte, _ time.Time) []byte {
	if e.done || !e.meta.Stream {
		return dst
	}
	return append(dst, "event: ping\ndata: {\"type\":\"ping\"}\n\n"...)
}

// stopReason maps an OpenAI finish reason onto the Messages API's:
// length is max_tokens, content_filter is refusal, and any other reason is
// tool_use once a tool_use block was sent (aiplan's tool calls arrive
// under "stop", and agents run tools only on tool_use), else end_turn. stop_sequence is never reported: chat completions says
// "stop" for a stop sequence and for the model's own end alike.
func stopReason(reason string, toolUse bool) string {
	switch {
	case reason == "length":
		return "max_tokens"
	case reason == "content_filter":
		return "refusal"
	case toolUse:
		return "tool_use"
	}
	return "end_turn"
}

// appendError ends the reply with an error: an error event when streaming
// (the SDKs raise it as an APIError), else the error as the body with
// status 502, or 504 for a timeout.
func (e *Encoder) appendError(dst []byte, ev transform.Event) []byte {
	code := ev.Code
	if code == "" {
		code = transform.CodeUpstreamError
	}
	if !e.meta.Stream {
		e.status = transform.FailedStatus(code)
		dst = appendError(dst, errorType(code), string(ev.Text), code, e.meta.RequestID)
		return append(dst, '\n')
	}
	dst = append(dst, "event: error\ndata: "...)
	dst = appendError(dst, errorType(code), string(ev.Text), code, e.meta.RequestID)
	return append(dst, "\n\n"...)
}

var _ transform.Encoder = (*Encoder)(nil)
