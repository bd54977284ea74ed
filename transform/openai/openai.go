// Package openai encodes a reply as a normalised OpenAI chat completion
// (CONTRACT.md §5 "openai"): chat.completion.chunk SSE ending in
// `data: [DONE]` when the client streams, one chat.completion JSON object
// when it does not. content holds only the answer, reasoning_content the
// reasoning (<think>, native reasoning and phases), tool_calls the tool
// calls with stable indices and ids, so that the official OpenAI SDKs
// consume it unchanged.
//
// Serp summaries and queries, clarifications, artifacts and violations have
// no place in this protocol and are not sent; the answer text still carries
// what the model wrote for the user.
package openai

import (
	"net/http"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// ContentType is the Content-Type of a streamed completion; a whole one
// (a client that asked for no stream) is application/json, which the HTTP
// layer sets for every one-body response.
const ContentType = "text/event-stream"

// ErrorType is the error.type of the error objects this encoder writes.
const ErrorType = "upstream_error"

// keepAlive is the SSE comment a heartbeat writes; the SDKs' SSE decoders
// skip comment lines.
const keepAlive = ": keep-alive\n\n"

// Encoder writes one chat completion, streamed or whole (meta.Stream).
type Encoder struct {
	meta transform.Meta
	// model is the routed model, else meta.Model.
	model string
	// prefix is the start of every chunk up to `"choices":`, rendered once
	// the model is known.
	prefix []byte
	// thought and newBlock put "\n\n" between reasoning blocks (see
	// appendReasoning); answered and newRound put it between the answers
	// of two rounds (appendContent).
	thought, newBlock  bool
	answered, newRound bool
	// wire maps a pipeline tool call index to its index on the wire + 1
	// (0: none yet), nWire counts the wire's calls (loop.go).
	wire  []int32
	nWire int32
	// toolStates[i] is the state of streamed tool call i (toolNone, …).
	toolStates []uint8
	// toolCalls is set once a tool call was sent.
	toolCalls bool
	// serial streams the tool calls one after another.
	serial serialCalls
	// usage is the upstream's usage object, compacted; nil when none came.
	usage []byte
	// whole holds what a non-streamed completion accumulates.
	whole  completion
	status int
	done   bool
}

// New returns an Encoder for one stream: chunks when meta.Stream, else one
// completion object written at the terminal event.
func New(meta transform.Meta) *Encoder {
	if meta.Created.IsZero() {
		if meta.Now != nil {
			meta.Created = meta.Now()
		} else {
			meta.Created = time.Now()
		}
	}
	return &Encoder{meta: meta, model: meta.Model, status: http.StatusOK, serial: serialCalls{cur: -1}}
}

// Status returns the HTTP status the response must have. A streamed
// response is always 200: its headers left before the reply. A whole one is
// 200, or after a KindError 504 for upstream_timeout and 502 for every
// other code (the upstream, or the model's reply through it, failed). The
// Caddy layer reads it after the terminal event, before the first byte.
func (e *Encoder) Status() int { return e.status }

// Begin appends nothing: a completion has no opening chunk before the
// upstream answers.
func (e *Encoder) Begin(dst []byte) []byte { return dst }

// AppendEvent appends the encoding of ev: a chunk when streaming; when not,
// nothing until the terminal event, which appends the whole completion.
func (e *Encoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Kind {
	case transform.KindRouted:
		if ev.Name != "" {
			e.model = ev.Name
		}
		if e.meta.Stream {
			dst = e.appendRoleChunk(dst)
		}
	case transform.KindReasoningStart:
		e.newBlock = true
	case transform.KindPhaseStart:
		e.newBlock = true
		dst = e.appendReasoning(dst, "**", ev.Text, "**\n\n")
	case transform.KindReasoningDelta, transform.KindPhaseDelta:
		dst = e.appendReasoning(dst, "", ev.Text, "")
	case transform.KindAnswerDelta:
		dst = e.appendContent(dst, ev.Text)
	case transform.KindToolCallStart, transform.KindToolArgsDelta, transform.KindToolCallEnd:
		if ev.Server {
			break // the gateway runs it: the client sees nothing of it (loop.go)
		}
		ev.Index = e.wireIndex(ev.Index)
		if e.meta.Stream {
			dst = e.toolEvent(dst, ev)
			break
		}
		switch ev.Kind {
		case transform.KindToolCallStart:
			dst = e.appendToolCallStart(dst, ev)
		case transform.KindToolArgsDelta:
			dst = e.appendToolArgsDelta(dst, ev)
		default:
			dst = e.appendToolCallEnd(dst, ev)
		}
	case transform.KindRoundStart:
		e.newRound, e.newBlock = true, true
	case transform.KindUsage:
		e.noteUsage(ev.Text)
	case transform.KindFinish:
		e.done = true
		dst = e.releaseCalls(dst, true)
		reason := finishReason(ev.Code, e.toolCalls)
		if e.meta.Stream {
			dst = e.appendFinishChunks(dst, reason)
		} else {
			dst = e.appendCompletion(dst, reason)
		}
	case transform.KindError:
		e.done = true
		dst = e.releaseCalls(dst, true)
		if !e.meta.Stream {
			e.status = transform.FailedStatus(ev.Code)
		}
		dst = e.appendError(dst, ev)
	}
	return dst
}

// AppendHeartbeat appends an SSE comment when streaming. A whole completion
// gets nothing: any byte would commit the response to status 200 before an
// error could still make it 502.
func (e *Encoder) AppendHeartbeat(dst []byte, _ time.Time) []byte {
	if e.done || !e.meta.Stream {
		return dst
	}
	return append(dst, keepAlive...)
}

// finishReason normalises the finish reason. A stream that sent tool calls
// and ended with "stop" reports "tool_calls": tool calls parsed from the
// model's text (aiplan) arrive under the upstream's "stop", and clients run
// tools (the SDKs' runTools, agent loops) only on "tool_calls". Other
// reasons pass through as the upstream spelled them.
func finishReason(reason string, toolCalls bool) string {
	if reason == "" {
		reason = "stop"
	}
	if reason == "stop" && toolCalls {
		return "tool_calls"
	}
	return reason
}

// noteUsage keeps the upstream's usage object, compacted onto one line (a
// non-streaming upstream may pretty-print it). Anything but a valid JSON
// object is dropped: the SDKs type usage as an object.
func (e *Encoder) noteUsage(raw []byte) {
	usage, ok := jsonout.AppendCompactObject(e.usage[:0], raw)
	if !ok {
		usage = nil
	}
	e.usage = usage
}

// appendError appends an OpenAI error object {"error": {message, type,
// param, code}}: as a data line when streaming (no [DONE] follows; the SDKs
// raise an APIError on a chunk with an error field), else as the body.
// An empty message is replaced by the code, and an empty code (a pipeline
// bug) by upstream_error.
func (e *Encoder) appendError(dst []byte, ev transform.Event) []byte {
	code := ev.Code
	if code == "" {
		code = transform.CodeUpstreamError
	}
	if e.meta.Stream {
		dst = append(dst, "data: "...)
	}
	dst = append(dst, `{"error":{"message":`...)
	if len(ev.Text) > 0 {
		dst = jsonout.AppendString(dst, ev.Text)
	} else {
		dst = jsonout.AppendStringS(dst, code)
	}
	dst = append(dst, `,"type":"`+ErrorType+`","param":null,"code":`...)
	dst = jsonout.AppendStringS(dst, code)
	dst = append(dst, "}}\n"...)
	if e.meta.Stream {
		dst = append(dst, '\n')
	}
	return dst
}

var _ transform.Encoder = (*Encoder)(nil)
