package gymbro

import (
	"strconv"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// SystemEvents writes the system events of a GymBro SSE stream (specs/000
// §6.3): status, heartbeat, completed and error. Every data object starts
// with message_id and request_id (specs/000 §6.2). The jsonseq protocol
// sends the same system events (specs/001 §3), which is why this type is
// exported.
//
// The zero value is not usable; call NewSystemEvents.
type SystemEvents struct {
	meta transform.Meta
	// ids is `{"message_id":…,"request_id":…`, rendered once per stream.
	ids []byte
	// model is the resolved model: the upstream's, else meta.Model.
	model string
	// upstreamID is the upstream's x-request-id, empty when unknown.
	upstreamID string
	// usage is the upstream's usage object, compacted; nil when none came
	// or it was not a JSON object.
	usage      []byte
	violations jsonout.ViolationList
	// done is set once the terminal event is written.
	done bool
}

// NewSystemEvents returns the system event writer of one stream.
func NewSystemEvents(meta transform.Meta) SystemEvents {
	ids := append([]byte(nil), `{"message_id":`...)
	ids = jsonout.AppendStringS(ids, meta.MessageID)
	ids = append(ids, `,"request_id":`...)
	ids = jsonout.AppendStringS(ids, meta.RequestID)
	return SystemEvents{meta: meta, ids: ids, model: meta.Model}
}

// AppendEventHead appends `event: <name>` and the start of the data object
// with message_id and request_id. The caller appends `,"field":value`
// pairs and ends the event with AppendEventTail.
func (s *SystemEvents) AppendEventHead(dst []byte, name string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, name...)
	dst = append(dst, "\ndata: "...)
	return append(dst, s.ids...)
}

// AppendEventTail closes the data object and the event.
func AppendEventTail(dst []byte) []byte {
	return append(dst, "}\n\n"...)
}

// AppendBegin appends status queued and status working (specs/000 §6.3:
// queued → working → routed).
func (s *SystemEvents) AppendBegin(dst []byte) []byte {
	dst = s.appendState(dst, "queued")
	return s.appendState(dst, "working")
}

func (s *SystemEvents) appendState(dst []byte, state string) []byte {
	dst = s.AppendEventHead(dst, "status")
	dst = append(dst, `,"state":"`...)
	dst = append(dst, state...)
	dst = append(dst, '"')
	return AppendEventTail(dst)
}

// AppendRouted remembers the upstream's model and request id (ev.Name,
// ev.ID of a KindRouted) and appends status routed.
func (s *SystemEvents) AppendRouted(dst []byte, ev transform.Event) []byte {
	if ev.Name != "" {
		s.model = ev.Name
	}
	s.upstreamID = ev.ID
	dst = s.AppendEventHead(dst, "status")
	dst = append(dst, `,"state":"routed"`...)
	dst = s.appendUpstream(dst)
	return AppendEventTail(dst)
}

// appendUpstream appends provider, resolved_model, endpoint_id and
// upstream_request_id, the fields status routed and completed share.
func (s *SystemEvents) appendUpstream(dst []byte) []byte {
	dst = s.appendProviderModel(dst)
	dst = append(dst, `,"upstream_request_id":`...)
	return appendStringOrNull(dst, s.upstreamID)
}

// appendProviderModel appends provider, resolved_model (null when no model
// is known) and endpoint_id.
func (s *SystemEvents) appendProviderModel(dst []byte) []byte {
	dst = append(dst, `,"provider":`...)
	dst = jsonout.AppendStringS(dst, s.meta.Provider)
	dst = append(dst, `,"resolved_model":`...)
	dst = appendStringOrNull(dst, s.model)
	dst = append(dst, `,"endpoint_id":`...)
	return strconv.AppendInt(dst, int64(s.meta.EndpointID), 10)
}

// AppendEvent appends or keeps what the protocols built on SystemEvents do
// alike for ev: status routed for a KindRouted, and a KindUsage or
// KindViolation kept for completed.metadata. Other kinds append nothing:
// content is each protocol's own, and the terminal events need the reply
// length and closing events only the encoder knows, so it calls
// AppendCompleted or AppendError itself.
func (s *SystemEvents) AppendEvent(dst []byte, ev transform.Event) []byte {
	switch ev.Kind {
	case transform.KindRouted:
		dst = s.AppendRouted(dst, ev)
	case transform.KindUsage:
		s.NoteUsage(ev.Text)
	case transform.KindViolation:
		s.NoteViolation(ev)
	}
	return dst
}

// NoteUsage keeps the upstream's usage object for completed.metadata.usage.
// Anything but a JSON object is reported as null.
func (s *SystemEvents) NoteUsage(raw []byte) {
	usage, ok := jsonout.AppendCompactObject(s.usage[:0], raw)
	if !ok {
		s.usage = nil
		return
	}
	s.usage = usage
}

// NoteViolation keeps a violation for completed.metadata.violations as
// {code, offset, detail} (CONTRACT.md §4), up to
// jsonout.MaxListedViolations of them.
func (s *SystemEvents) NoteViolation(ev transform.Event) {
	s.violations.Note(ev)
}

// AppendCompleted appends the completed event (specs/000 §6.3) with
// reply_len and metadata {finish_reason, usage, violations}. An empty
// finish reason is reported as "stop". It ends the stream (see Done).
func (s *SystemEvents) AppendCompleted(dst []byte, finishReason string, replyLen int64) []byte {
	s.done = true
	if finishReason == "" {
		finishReason = "stop"
	}
	dst = s.AppendEventHead(dst, "completed")
	dst = s.appendUpstream(dst)
	dst = append(dst, `,"reply_len":`...)
	dst = strconv.AppendInt(dst, replyLen, 10)
	dst = append(dst, `,"metadata":{"finish_reason":`...)
	dst = jsonout.AppendStringS(dst, finishReason)
	dst = append(dst, `,"usage":`...)
	if s.usage != nil {
		dst = append(dst, s.usage...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"violations":`...)
	dst = s.violations.AppendJSON(dst)
	dst = append(dst, '}')
	return AppendEventTail(dst)
}

// AppendError appends the error event of a KindError (specs/000 §6.3): code,
// message, the same text as the legacy field error, provider,
// resolved_model and endpoint_id. An empty message is replaced by the code,
// so that clients that show only the text show something, and an empty code
// (a pipeline bug) by upstream_error, so that clients can branch on it. It
// ends the stream (see Done).
func (s *SystemEvents) AppendError(dst []byte, ev transform.Event) []byte {
	s.done = true
	code := ev.Code
	if code == "" {
		code = transform.CodeUpstreamError
	}
	dst = s.AppendEventHead(dst, "error")
	dst = append(dst, `,"code":`...)
	dst = jsonout.AppendStringS(dst, code)
	msg := ev.Text
	if len(msg) == 0 {
		dst = append(dst, `,"message":`...)
		dst = jsonout.AppendStringS(dst, code)
		dst = append(dst, `,"error":`...)
		dst = jsonout.AppendStringS(dst, code)
	} else {
		dst = append(dst, `,"message":`...)
		dst = jsonout.AppendString(dst, msg)
		dst = append(dst, `,"error":`...)
		dst = jsonout.AppendString(dst, msg)
	}
	dst = s.appendProviderModel(dst)
	return AppendEventTail(dst)
}

// Done reports whether the terminal event, completed or error, was written:
// nothing may follow it (specs/000 §6.3), so the encoders drop every later
// event.
func (s *SystemEvents) Done() bool { return s.done }

// AppendHeartbeat appends a heartbeat event {ts: Unix milliseconds}, and
// nothing once the stream is done: a keep-alive timer may fire after the
// terminal event.
func (s *SystemEvents) AppendHeartbeat(dst []byte, now time.Time) []byte {
	if s.done {
		return dst
	}
	dst = s.AppendEventHead(dst, "heartbeat")
	dst = append(dst, `,"ts":`...)
	dst = strconv.AppendInt(dst, now.UnixMilli(), 10)
	return AppendEventTail(dst)
}

// appendStringOrNull appends s as a JSON string, or null when it is empty.
func appendStringOrNull(dst []byte, s string) []byte {
	if s == "" {
		return append(dst, "null"...)
	}
	return jsonout.AppendStringS(dst, s)
}
