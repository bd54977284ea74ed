// Package aisdk encodes a reply as the AI SDK UI message stream, protocol
// v1 (the npm "ai" package 6.x, uiMessageChunkSchema; CONTRACT.md §5
// "aisdk"), which useChat's DefaultChatTransport renders with no custom
// code: start, reasoning and text parts, tool input parts, data parts for
// what the SDK has no part for (phases, serp summary and queries, clarify,
// artifacts, violations), finish or error, then [DONE].
//
// Every chunk is one `data:` line; the SDK's parser (parseJsonEventStream)
// reads no `event:` field and skips [DONE] and comment lines.
package aisdk

import (
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// ContentType is the response Content-Type of a UI message stream.
const ContentType = "text/event-stream"

// The response header that marks a UI message stream (ai@6
// UI_MESSAGE_STREAM_HEADERS); the Caddy layer sets it.
const (
	HeaderName  = "x-vercel-ai-ui-message-stream"
	HeaderValue = "v1"
)

// keepAlive is the SSE comment the SDK's own server writes as a keep-alive
// (ai@6 KEEP_ALIVE_COMMENT).
const keepAlive = ": keep-alive\n\n"

// doneLine ends the stream, as the SDK's JsonToSseTransformStream does.
const doneLine = "data: [DONE]\n\n"

// partKind says which streaming part is open.
type partKind uint8

const (
	partNone partKind = iota
	partText
	partReasoning
)

// Encoder writes one UI message stream.
type Encoder struct {
	meta transform.Meta
	// open is the text or reasoning part being streamed, openID its number.
	// At most one is open: any other part closes it first, so that the
	// parts appear in the message in the order the model wrote them.
	open   partKind
	openID int64
	// nText and nReasoning number the parts, for ids unique per message.
	nText, nReasoning int64
	// toolCalls is set once a call to a client's tool was sent (finish
	// reason "tool-calls", see finishReason).
	toolCalls bool
	// calls[i] is the state of tool call i (tools.go); ids[i] the id of
	// server call i once it runs.
	calls []uint8
	ids   []string
	// violations are sent as one data-violations part before the terminal
	// chunk.
	violations jsonout.ViolationList
	done       bool
}

// New returns an Encoder for one stream.
func New(meta transform.Meta) *Encoder {
	return &Encoder{meta: meta}
}

// Begin appends the start chunk with messageId.
func (e *Encoder) Begin(dst []byte) []byte {
	dst = append(dst, `data: {"type":"start"`...)
	if e.meta.MessageID != "" {
		dst = append(dst, `,"messageId":`...)
		dst = jsonout.AppendStringS(dst, e.meta.MessageID)
	}
	return append(dst, "}\n\n"...)
}

// AppendEvent appends the UI message stream chunks for ev. KindRaw,
// KindRouted and KindUsage have no chunk: a messageMetadata value could
// fail the page's own metadata schema.
func (e *Encoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if e.done {
		return dst
	}
	switch ev.Kind {
	case transform.KindReasoningDelta, transform.KindPhaseDelta:
		dst = e.appendDelta(dst, partReasoning, ev.Text)
	case transform.KindReasoningEnd, transform.KindPhaseEnd:
		dst = e.closeIf(dst, partReasoning)
	case transform.KindPhaseStart:
		dst = e.appendPhase(dst, ev)
	case transform.KindAnswerDelta:
		dst = e.appendDelta(dst, partText, ev.Text)
	case transform.KindAnswerEnd:
		dst = e.closeIf(dst, partText)
	case transform.KindSerpSummary:
		dst = e.appendSerpSummary(dst, ev.Text)
	case transform.KindSerpQueries:
		dst = e.appendSerpQueries(dst, ev.List)
	case transform.KindToolCallStart:
		dst = e.appendToolInputStart(dst, ev)
	case transform.KindToolArgsDelta:
		dst = e.appendToolInputDelta(dst, ev)
	case transform.KindToolCallEnd:
		dst = e.appendToolInputEnd(dst, ev)
	case transform.KindToolRun:
		dst = e.appendToolRun(dst, ev)
	case transform.KindToolProgress:
		dst = e.appendToolProgress(dst, ev)
	case transform.KindToolResult:
		dst = e.appendToolResult(dst, ev)
	case transform.KindRoundStart:
		dst = e.appendStep(dst)
	case transform.KindResourceUpdated:
		dst = e.appendResourceUpdated(dst, ev.Name, ev.Text)
	case transform.KindClarify:
		dst = e.appendClarify(dst, ev.Clarify)
	case transform.KindArtifacts:
		dst = e.appendArtifacts(dst, ev.Text)
	case transform.KindViolation:
		e.violations.Note(ev)
	case transform.KindFinish, transform.KindError:
		dst = e.appendEnd(dst, ev)
	}
	return dst
}

// appendEnd ends the stream for a KindFinish or KindError: it closes the
// open part, sends the violations, then the finish or error chunk and
// [DONE]. Tool input parts still streaming stay so: a tool-input-available
// would present cut-off arguments as complete.
func (e *Encoder) appendEnd(dst []byte, ev transform.Event) []byte {
	e.done = true
	dst = e.closePart(dst)
	if ev.Kind == transform.KindFinish {
		dst = e.abandonRuns(dst, "the tool call did not finish")
	} else {
		dst = e.abandonRuns(dst, ev.FailureMessage())
	}
	dst = e.appendViolations(dst)
	if ev.Kind == transform.KindFinish {
		dst = append(dst, `data: {"type":"finish","finishReason":"`...)
		dst = append(dst, finishReason(ev.Code, e.toolCalls)...)
		dst = append(dst, '"')
	} else {
		dst = append(dst, `data: {"type":"error","errorText":`...)
		dst = jsonout.AppendStringS(dst, ev.FailureMessage())
	}
	dst = append(dst, "}\n\n"...)
	return append(dst, doneLine...)
}

// appendStep ends the step of one round and starts the next's
// (CONTRACT.md §12: each round of the agent loop is a step of the one
// message, as streamText sends an agent's steps): the open part closes
// first, since finish-step drops the parts still streaming (ai@6
// processUIMessageStream), then finish-step and start-step, which adds a
// step-start part that useChat draws as the steps' boundary. A stream of
// one round has no step chunks at all, as before the loop existed.
func (e *Encoder) appendStep(dst []byte) []byte {
	dst = e.closePart(dst)
	return append(dst, "data: {\"type\":\"finish-step\"}\n\ndata: {\"type\":\"start-step\"}\n\n"...)
}

// AppendHeartbeat appends the SDK's keep-alive comment.
func (e *Encoder) AppendHeartbeat(dst []byte, _ time.Time) []byte {
	if e.done {
		return dst
	}
	return append(dst, keepAlive...)
}

// finishReason maps an OpenAI finish reason to the AI SDK's spelling
// (ai@6 FinishReason). A stream that sent tool calls and ended with "stop"
// reports "tool-calls": tool calls parsed from the model's text (aiplan)
// arrive under the upstream's "stop", and clients continue an agent loop
// only on "tool-calls".
func finishReason(openai string, toolCalls bool) string {
	switch openai {
	case "", "stop":
		if toolCalls {
			return "tool-calls"
		}
		return "stop"
	case "length":
		return "length"
	case "tool_calls", "function_call":
		return "tool-calls"
	case "content_filter":
		return "content-filter"
	}
	return "other"
}

var _ transform.Encoder = (*Encoder)(nil)
