package anthropic

import (
	"net/http"

	"github.com/llmstream/llmstream/transform/request"
)

// FormatName is the request_format (and protocol) name of the Messages
// API.
const FormatName = "anthropic"

// Request is what a Messages API request body tells the encoder
// (request.Info.Facts, read from transform.Meta.Request).
type Request struct {
	// Thinking says the client turned extended thinking on ("thinking":
	// {"type": "enabled" | "adaptive" | "between_tools"}): the model's
	// reasoning becomes thinking blocks. Without it the reasoning is left
	// out, as Anthropic sends none, so that clients reading content[0] as
	// the answer still find it there.
	Thinking bool
	// MCPBlocks says the client opted in to the MCP connector's blocks
	// (an anthropic-beta header naming an mcp-client beta, HeaderFacts):
	// calls to tools the gateway runs are shown as mcp_tool_use and
	// mcp_tool_result blocks; without it they are left out (mcp.go).
	MCPBlocks bool
	// InputTokens is the estimate of the request's input tokens
	// (EstimateTokens of the converted body) that message_start reports
	// until the upstream's usage replaces it in message_delta.
	InputTokens int
}

// CountTokensPath is the path suffix of the token-counting endpoint
// (POST /v1/messages/count_tokens), which llmstream answers itself.
const CountTokensPath = "/count_tokens"

// The request headers of Anthropic's clients that an OpenAI-compatible
// upstream does not read.
var anthropicHeaders = []string{"Anthropic-Version", "Anthropic-Beta", "Anthropic-Dangerous-Direct-Browser-Access"}

// UpstreamHeader readies an Anthropic client's headers for an
// OpenAI-compatible upstream (request.Format.UpstreamHeader). The
// anthropic-version and anthropic-beta headers describe the Messages API
// the client speaks, which the upstream does not, so they stay here. The
// client's x-api-key is its credential: it becomes Authorization: Bearer,
// where OpenAI-compatible servers read keys, unless the client also sent
// an Authorization header (ANTHROPIC_AUTH_TOKEN), which then wins. A
// route's header_up still overrides both.
func UpstreamHeader(h http.Header) {
	for _, k := range anthropicHeaders {
		h.Del(k)
	}
	key := h.Get("X-Api-Key")
	h.Del("X-Api-Key")
	if key != "" && h.Get("Authorization") == "" {
		h.Set("Authorization", "Bearer "+key)
	}
}

// Format is the anthropic request format (a row of the protocol table):
// Messages API bodies, errors in Anthropic's shape, count_tokens answered
// by llm_stream itself, anthropic-* headers not passed upstream.
var Format = &request.Format{
	Name:           FormatName,
	Convert:        Convert,
	AppendError:    AppendRequestError,
	Endpoints:      []request.Endpoint{{PathSuffix: CountTokensPath, Answer: AnswerCountTokens}},
	UpstreamHeader: UpstreamHeader,
	HeaderFacts:    HeaderFacts,
}
