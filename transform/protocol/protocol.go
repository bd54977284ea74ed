// Package protocol is the protocol table (CONTRACT.md §5): one row per
// client protocol, with everything the rest of llmstream knows of it. The
// configuration resolves a route's protocol and request format here, the
// Caddy handler opens, refuses and ends streams by the row, and the tests
// and benchmarks iterate the rows. It also holds the refusal policy
// (refusal.go): how a request fails when its upstream's reply cannot be
// streamed (CONTRACT.md §6).
//
// The package imports every protocol's package and is imported by none of
// them, so the arrows between the protocols, request shaping and the
// pipeline all point one way.
package protocol

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agui"
	"github.com/llmstream/llmstream/transform/aisdk"
	"github.com/llmstream/llmstream/transform/anthropic"
	"github.com/llmstream/llmstream/transform/gymbro"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/jsonseq"
	"github.com/llmstream/llmstream/transform/openai"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/responses"
	"github.com/llmstream/llmstream/transform/skillpet"
)

// Protocol is one row of the protocol table: everything the rest of
// llmstream knows of a client protocol. The configuration checks names
// against the table, the HTTP layer opens, refuses and ends streams by it,
// and the tests iterate it, so adding a protocol is one package (its
// encoder, and its request Format if its clients send a body of their
// own) and one row here.
type Protocol struct {
	// Name is the protocol option's value.
	Name string
	// ContentType and Header are the stream's response headers.
	ContentType string
	Header      [][2]string
	// EarlyStart opens the stream before the upstream answers: heartbeats
	// cover the wait and a refusal becomes the protocol's error event
	// (gymbro, jsonseq, aisdk). Without it a refusal is an HTTP status.
	EarlyStart bool
	// PassRefusals passes an upstream's non-2xx answer to the client as it
	// is (openai, CONTRACT §6), so that the client's SDK retries what the
	// upstream said to retry.
	PassRefusals bool
	// ReshapeRefusal, with PassRefusals, rewrites the body of a refusal
	// passed through in the protocol's own error shape, around the
	// upstream's message; the status and headers stay the upstream's. An
	// SDK that reads errors in its own shape (anthropic) needs it.
	ReshapeRefusal func(dst []byte, status int, msg string) []byte
	// ClientChoosesStream lets the client ask for one JSON body instead of
	// a stream ("stream": false, openai); other protocols always stream.
	ClientChoosesStream bool
	// NewEncoder returns the stream's encoder. Per-request facts its
	// request format found are in Meta.Request.
	NewEncoder func(transform.Meta) transform.Encoder
	// Request is the body this protocol's own clients send (skillpet,
	// aisdk), offered as a request_format of the same name; nil when its
	// clients send OpenAI chat-completions requests.
	Request *request.Format
	// Refusal appends the JSON body of an HTTP error for a request whose
	// upstream never streamed; nil means the OpenAI error shape
	// (RefusalBody).
	Refusal func(dst []byte, code, msg string) []byte
}

// RefusalBody appends the JSON body of an HTTP error for a request whose
// upstream never streamed (skillpet: {"error":"CHAT_FAILED","message":…},
// specs/002 §2.3; otherwise an OpenAI-style error object).
func (pr *Protocol) RefusalBody(dst []byte, code, msg string) []byte {
	if pr.Refusal != nil {
		return pr.Refusal(dst, code, msg)
	}
	dst = append(dst, `{"error":{"message":`...)
	dst = jsonout.AppendStringS(dst, msg)
	dst = append(dst, `,"type":"upstream_error","code":`...)
	dst = jsonout.AppendStringS(dst, code)
	return append(dst, "}}"...)
}

// protocols is the protocol table (CONTRACT §5), in the order messages
// list the names.
var protocols = []*Protocol{
	{
		Name: "gymbro", ContentType: gymbro.ContentType, EarlyStart: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return gymbro.New(m) },
	},
	{
		Name: "jsonseq", ContentType: jsonseq.ContentType, EarlyStart: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return jsonseq.New(m) },
	},
	{
		Name: "skillpet", ContentType: skillpet.ContentType,
		NewEncoder: func(m transform.Meta) transform.Encoder { return skillpet.New(m) },
		Request:    request.Skillpet,
		Refusal: func(dst []byte, _, msg string) []byte {
			return skillpet.AppendChatFailed(dst, msg)
		},
	},
	{
		Name: "aisdk", ContentType: aisdk.ContentType, EarlyStart: true,
		Header:     [][2]string{{aisdk.HeaderName, aisdk.HeaderValue}},
		NewEncoder: func(m transform.Meta) transform.Encoder { return aisdk.New(m) },
		Request:    request.AISDK,
	},
	{
		Name: "openai", ContentType: openai.ContentType, PassRefusals: true, ClientChoosesStream: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return openai.New(m) },
	},
	// The OpenAI Responses API (CONTRACT §11): like openai, a refusal is
	// the upstream's own status and error body, whose shape the Responses
	// SDKs read too, so that their retries (429, 5xx) work.
	{
		Name: "responses", ContentType: responses.ContentType, PassRefusals: true, ClientChoosesStream: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return responses.New(m) },
		Request:    responses.Format,
	},
	{
		// The Messages API (CONTRACT §11). Its stream opens when the
		// upstream answers, and an upstream's refusal passes through with
		// its status, so that the SDKs and Claude Code retry a 429 or a
		// 5xx (after its Retry-After) and give up on a 400 at once.
		Name: "anthropic", ContentType: anthropic.ContentType, PassRefusals: true, ClientChoosesStream: true,
		NewEncoder:     func(m transform.Meta) transform.Encoder { return anthropic.New(m) },
		Request:        anthropic.Format,
		Refusal:        anthropic.AppendRefusal,
		ReshapeRefusal: anthropic.AppendUpstreamRefusal,
	},
	{
		// AG-UI (CONTRACT §16). Every run ends in RUN_FINISHED or
		// RUN_ERROR, and HttpAgent reads an HTTP error as a transport
		// failure ("HTTP 502: …", a rejected runAgent) rather than the
		// run's: so the run opens at once, heartbeats cover a slow
		// upstream, and an upstream's refusal is a RUN_ERROR with its
		// message, which onRunErrorEvent and CopilotKit's pages show.
		Name: "agui", ContentType: agui.ContentType, EarlyStart: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return agui.New(m) },
		Request:    agui.Format,
	},
}

// Protocols returns the protocol table's rows, in order. The rows are
// shared and must not be modified.
func Protocols() []*Protocol { return protocols }

// Lookup returns the row named name.
func Lookup(name string) (*Protocol, bool) {
	for _, p := range protocols {
		if p.Name == name {
			return p, true
		}
	}
	return nil, false
}

// RequestFormats returns the request formats routes accept: openai, then
// each protocol's own, in table order.
func RequestFormats() []*request.Format {
	fs := []*request.Format{request.OpenAI}
	for _, p := range protocols {
		if p.Request != nil {
			fs = append(fs, p.Request)
		}
	}
	return fs
}

// LookupRequestFormat returns the request format named name.
func LookupRequestFormat(name string) (*request.Format, bool) {
	for _, f := range RequestFormats() {
		if f.Name == name {
			return f, true
		}
	}
	return nil, false
}
