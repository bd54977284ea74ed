// Package gymbro encodes a reply as the GymBro SSE protocol (specs/000 §6,
// CONTRACT.md §5 "gymbro"): status queued → working → routed, one
// content_delta per piece of the model's raw reply, then exactly one
// terminal event, completed or error, with heartbeats between.
//
// The system events (status, heartbeat, completed, error) are written by
// SystemEvents, which the jsonseq protocol shares (specs/001 §3).
package gymbro

import (
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// ContentType is the response Content-Type of a GymBro stream.
const ContentType = "text/event-stream"

// Encoder writes one GymBro SSE stream. It forwards the model's raw reply
// (KindRaw) and ignores the parsed content kinds: the GymBro client
// assembles the reply itself (specs/000 §7).
type Encoder struct {
	sys SystemEvents
	// seq numbers content_delta events from 1 (specs/000 §6.2).
	seq int64
	// replyLen counts the code points of the deltas as sent.
	replyLen int64
	// carry holds a UTF-8 sequence cut at the end of a raw delta, so that
	// no content_delta ends mid-character and reply_len counts characters.
	carry parsekit.RuneCarry
	// calls are the calls to tools the gateway runs; newRound is set by a
	// round's start until its raw reply begins (loop.go).
	calls    ServerCalls
	newRound bool
	rounds   int
}

// New returns an Encoder for one stream.
func New(meta transform.Meta) *Encoder {
	return &Encoder{sys: NewSystemEvents(meta)}
}

// Begin appends status queued and status working.
func (e *Encoder) Begin(dst []byte) []byte {
	return e.sys.AppendBegin(dst)
}

// AppendEvent appends the GymBro encoding of ev. Only KindRaw produces
// content; KindRouted, KindFinish and KindError produce status, completed
// and error; usage and violations are kept for completed.metadata.
func (e *Encoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if e.sys.Done() {
		return dst
	}
	switch ev.Kind {
	case transform.KindRaw:
		dst = e.appendRaw(dst, ev.Text)
	case transform.KindToolCallStart:
		if ev.Server {
			e.calls.Start(ev)
		}
	case transform.KindToolCallEnd:
		if ev.Server {
			dst = e.appendServerCall(dst, ev)
		}
	case transform.KindToolRun:
		e.calls.Run(ev)
	case transform.KindToolProgress:
		dst = e.appendToolProgress(dst, ev)
	case transform.KindToolResult:
		dst = e.appendToolResult(dst, ev)
	case transform.KindRoundStart:
		dst = e.appendRound(dst)
	case transform.KindFinish:
		dst = e.flushCarry(dst)
		dst = e.abandonRuns(dst, "the tool call did not finish")
		dst = e.sys.AppendCompleted(dst, ev.Code, e.replyLen)
	case transform.KindError:
		dst = e.flushCarry(dst)
		dst = e.abandonRuns(dst, errorMessage(ev))
		dst = e.sys.AppendError(dst, ev)
	default:
		dst = e.sys.AppendEvent(dst, ev)
	}
	return dst
}

// AppendHeartbeat appends a heartbeat event with now in Unix milliseconds.
func (e *Encoder) AppendHeartbeat(dst []byte, now time.Time) []byte {
	return e.sys.AppendHeartbeat(dst, now)
}

// appendRaw appends one content_delta for p, holding back a trailing
// incomplete UTF-8 sequence until the next delta completes it.
func (e *Encoder) appendRaw(dst, p []byte) []byte {
	var head []byte
	if e.carry.Pending() {
		head, p = e.carry.Resume(p)
		if head == nil {
			return dst // p ended before the held sequence did
		}
	}
	p = e.carry.Hold(p)
	return e.appendDelta(dst, head, p)
}

// flushCarry sends bytes still held at the end of the stream; they are an
// incomplete sequence, which AppendJSONString turns into U+FFFD.
func (e *Encoder) flushCarry(dst []byte) []byte {
	if !e.carry.Pending() {
		return dst
	}
	return e.appendDelta(dst, nil, e.carry.Flush())
}

// appendDelta appends a content_delta whose text is a followed by b,
// after a paragraph break when it opens a later round's raw reply
// (loop.go). Empty text sends nothing, so that seq numbers only real
// deltas.
func (e *Encoder) appendDelta(dst, a, b []byte) []byte {
	if len(a)+len(b) == 0 {
		return dst
	}
	sep := ""
	if e.newRound && e.seq > 0 {
		sep = "\n\n"
	}
	e.newRound = false
	e.seq++
	// utf8.RuneCount counts each invalid byte as one rune, exactly as
	// AppendJSONString writes one U+FFFD for it: reply_len is the length
	// of the reply the client assembles (specs/000 §7).
	e.replyLen += int64(len(sep) + utf8.RuneCount(a) + utf8.RuneCount(b))
	dst = e.sys.AppendEventHead(dst, "content_delta")
	dst = append(dst, `,"seq":`...)
	dst = strconv.AppendInt(dst, e.seq, 10)
	dst = append(dst, `,"delta":"`...)
	dst = jsonout.AppendStringBodyS(dst, sep)
	dst = jsonout.AppendStringBody(dst, a)
	dst = jsonout.AppendStringBody(dst, b)
	dst = append(dst, '"')
	return AppendEventTail(dst)
}

// errorMessage is a failure's message, else its code.
func errorMessage(ev transform.Event) string {
	if len(ev.Text) > 0 {
		return string(ev.Text)
	}
	return ev.Code
}

var _ transform.Encoder = (*Encoder)(nil)
