package request

import (
	"net/http"
	"strings"
)

// A Format is a request body that a route's clients send (the
// request_format option, CONTRACT.md §3). Every format other than openai
// converts its body into an OpenAI chat-completions body first; the openai
// rules (system prompt, tools, tool_choice, model, forced streaming) then
// apply to it alike, so a new format is one Convert function and one row
// in the protocol table (transform/protocol) that names it.
type Format struct {
	// Name is the request_format option's value.
	Name string
	// Convert turns the client's body into an OpenAI chat-completions body,
	// with what the request's own protocol must know of it (Info.Facts) and
	// whether the client wants a stream (Info.Stream). Nil for openai,
	// whose body is already one. A body it cannot convert gives a 4xx
	// *Error, in the format's own terms. Convert must not retain body.
	Convert func(body []byte) ([]byte, Info, *Error)
	// NoModel says the format's body names no model, so that a route
	// taking it must configure one (config checks).
	NoModel bool
	// AppendError appends the JSON body of an error answered to this
	// format's clients; nil means the OpenAI shape
	// {"error":{"code":…,"message":…}} (CONTRACT.md §3).
	AppendError func(dst []byte, e *Error) []byte
	// Endpoints are the requests this format's clients send that llmstream
	// answers itself, without the upstream (anthropic's count_tokens); nil
	// for most formats.
	Endpoints []Endpoint
	// UpstreamHeader adjusts the request's headers for an OpenAI-compatible
	// upstream: it drops the format's own protocol headers, which such an
	// upstream does not read, and moves the client's credential to where
	// it does. Nil leaves the headers as the client sent them.
	UpstreamHeader func(http.Header)
	// HeaderFacts folds what the client's request headers tell its
	// protocol's encoder into the Facts that Convert returned, before
	// UpstreamHeader drops the format's own headers (anthropic: an
	// anthropic-beta header that opts in to the MCP connector's blocks).
	// It returns the facts to pass on. Nil for most formats.
	HeaderFacts func(h http.Header, facts any) any
}

// An Endpoint is a request a format answers itself: its clients call it
// beside their chat requests (Claude Code counts tokens before it sends),
// and an OpenAI-compatible upstream has no counterpart to forward it to.
// The handler answers it instead of proxying it, so a route serves it with
// the same llm_stream block as the chat requests.
type Endpoint struct {
	// PathSuffix selects the endpoint: the path the client requested ends
	// with it ("/count_tokens"). The client's own path counts, not the one
	// a rewrite aimed at the upstream.
	PathSuffix string
	// Answer returns the HTTP status and the JSON body for the request
	// body as Rewrite shaped it (an OpenAI chat-completions body with the
	// route's system prompt and tools) and what Rewrite learned of it. It
	// never sees the upstream.
	Answer func(chat []byte, info Info) (int, []byte)
}

// Endpoint returns f's endpoint for the client's request path, nil when
// the path is a chat request (f nil: openai, which has none).
func (f *Format) Endpoint(path string) *Endpoint {
	if f == nil {
		return nil
	}
	for i := range f.Endpoints {
		if strings.HasSuffix(path, f.Endpoints[i].PathSuffix) {
			return &f.Endpoints[i]
		}
	}
	return nil
}

// The request formats this package converts. Protocols with a body of
// their own name theirs in the protocol table; OpenAI is every other
// protocol's.
var (
	// OpenAI is an OpenAI chat-completions request, the default.
	OpenAI = &Format{Name: FormatOpenAI}
	// Skillpet is the skillpet POST /stream body (specs/002 §2.3).
	Skillpet = &Format{Name: FormatSkillpet, Convert: convertSkillpet, NoModel: true, AppendError: appendFlatError}
	// AISDK is what the AI SDK's useChat (DefaultChatTransport) posts.
	AISDK = &Format{Name: FormatAISDK, Convert: convertAISDK, NoModel: true}
)

// ErrorBody appends the JSON body of e for f's clients (f nil: openai).
func (f *Format) ErrorBody(dst []byte, e *Error) []byte {
	if f != nil && f.AppendError != nil {
		return f.AppendError(dst, e)
	}
	return e.AppendJSON(dst)
}

// String returns the format's name ("openai" for nil).
func (f *Format) String() string {
	if f == nil {
		return FormatOpenAI
	}
	return f.Name
}
