package transform

import "time"

// Encoder writes events in one client protocol (gymbro, jsonseq, skillpet,
// aisdk, openai). Its methods append to the caller's buffer, like
// strconv.AppendInt, and never write anywhere else. An Encoder is stateful
// (sequence numbers, open parts) and serves one stream.
type Encoder interface {
	// Begin appends what the protocol sends when the stream opens, before
	// any upstream event (gymbro/jsonseq status queued and working, aisdk
	// start).
	Begin(dst []byte) []byte
	// AppendEvent appends the encoding of ev. A KindFinish or KindError
	// makes it append the protocol's terminal event(s); nothing follows.
	AppendEvent(dst []byte, ev Event) []byte
	// AppendHeartbeat appends a keep-alive for a silent upstream.
	AppendHeartbeat(dst []byte, now time.Time) []byte
}

// Meta is what an encoder knows of its request beyond the events.
type Meta struct {
	// MessageID is generated per request; RequestID is the X-Request-Id
	// value (the client's, or a generated one).
	MessageID, RequestID string
	// Provider and EndpointID are reported in status, completed and error.
	Provider   string
	EndpointID int
	// Model is the model the request asked for, reported until the upstream
	// names its own.
	Model string
	// Request is what the client's request body told that its protocol's
	// encoder needs (request.Info.Facts), nil when nothing: the type is
	// the converter's (anthropic.Request, responses.Request, and
	// request.SkillpetFacts for the skillpet body, whose converter is in
	// request), read only by the protocol it is for. The HTTP layer passes
	// it on without looking.
	Request any
	// Stream is false when an openai client asked for one JSON completion.
	Stream bool
	// IncludeUsage is true when an openai client asked for the usage chunk
	// (stream_options.include_usage, request.Info.IncludeUsage). Like
	// Stream it is a fact of the chat-completions body every request
	// becomes, not of one protocol's own body.
	IncludeUsage bool
	// ReasoningTitle is the phase title for reasoning that has none.
	ReasoningTitle string
	// Limits are the route's limits; an encoder that holds text back to
	// keep its protocol's order (CONTRACT.md §7) holds at most
	// Limits.MaxBlockBytes. Zero fields take the defaults.
	Limits Limits
	// Created is the stream's start time (openai "created", skillpet
	// tool_args_heartbeat pacing).
	Created time.Time
	// Now returns the current time; tests inject a clock. Nil means
	// time.Now.
	Now func() time.Time
}
