package transform

// The error codes that end a stream (KindError). Violation codes are the
// parsers' own and are declared beside them.
const (
	// CodeProviderError: the upstream refused the request before streaming
	// (non-2xx status, unreachable, not a chat completion).
	CodeProviderError = "provider_error"
	// CodeUpstreamError: the upstream broke off, sent a malformed chunk or an
	// in-stream {"error": …} object, or ended without finishing.
	CodeUpstreamError = "upstream_error"
	// CodeUpstreamTimeout: no upstream byte for the route's idle_timeout.
	CodeUpstreamTimeout = "upstream_timeout"
	// CodeModelParsingError: the model's whole reply was <<ParsingError>>
	// (specs/000 §2).
	CodeModelParsingError = "model_parsing_error"

	// Limit codes: each names the limit (Limits) that was exceeded.
	CodeSSELineTooLong = "sse_line_too_long"
	CodeReplyTooLarge  = "reply_too_large"
	// CodeTagTooLong names Limits.MaxTagBytes. Exceeding it ends no stream
	// (CONTRACT.md §7): ThinkingML reports it as a violation and releases
	// the tag as text.
	CodeTagTooLong   = "tag_too_long"
	CodeBlockTooLong = "block_too_long"
	// CodeKeyTooLong and CodeJSONTooDeep name Limits.MaxKeyBytes and
	// Limits.MaxDepth. They end no stream either (CONTRACT.md §7): the
	// JSON formats report them as violations, and the rest of the reply
	// is answer text.
	CodeKeyTooLong  = "key_too_long"
	CodeJSONTooDeep = "json_too_deep"
	// CodeTooManyToolCalls names Limits.MaxToolCalls: an error for native
	// tool calls, a violation for aiplan's, whose text is answer text.
	CodeTooManyToolCalls = "too_many_tool_calls"
)

// FailedStatus is the HTTP status of a response that is one JSON body (a
// client that asked for no stream) when its reply failed with code: 504
// when the upstream fell silent, 502 for every other failure (the upstream,
// or the model's reply through it). The SDKs raise an APIError for both.
func FailedStatus(code string) int {
	if code == CodeUpstreamTimeout {
		return 504
	}
	return 502
}
