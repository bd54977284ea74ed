package anthropic

import (
	"net/http"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// The error types of Anthropic's error shape
// {"type":"error","error":{"type":…,"message":…}} that llmstream answers
// with. The SDKs read the type (APIError.type) and pick an error class by
// the HTTP status.
const (
	TypeInvalidRequest  = "invalid_request_error"
	TypeAuthentication  = "authentication_error"
	TypePermission      = "permission_error"
	TypeNotFound        = "not_found_error"
	TypeRequestTooLarge = "request_too_large"
	TypeRateLimit       = "rate_limit_error"
	TypeAPI             = "api_error"
	TypeOverloaded      = "overloaded_error"
	TypeTimeout         = "timeout_error"
)

// The error codes of a request body this format refuses, beside the
// request package's (invalid_json, invalid_body, missing_messages,
// invalid_messages, request_too_large). The code travels in
// error.details.error_code, where the SDKs look for a machine-readable
// cause (APIError.errorCode), and in the log.
const (
	// CodeInvalidRequest: a field has the wrong JSON type or value.
	CodeInvalidRequest = "invalid_request"
	// CodeUnsupported: a content block, tool or feature the Messages API
	// has but an OpenAI-compatible upstream cannot serve (server tools,
	// Files API sources, MCP servers, unknown block types).
	CodeUnsupported = "unsupported"
)

// AppendRequestError appends the body of a refused request in Anthropic's
// error shape (request.Format.AppendError): invalid_request_error for a
// 4xx, request_too_large for 413, api_error for a misconfigured route.
func AppendRequestError(dst []byte, e *request.Error) []byte {
	typ := TypeInvalidRequest
	switch {
	case e.Status == http.StatusRequestEntityTooLarge:
		typ = TypeRequestTooLarge
	case e.Status >= 500:
		typ = TypeAPI
	}
	return appendError(dst, typ, e.Message, e.Code, "")
}

// AppendRefusal appends the body of an HTTP error for a request whose
// upstream never streamed (protocol.Protocol.Refusal): timeout_error for
// upstream_timeout, api_error for every other code.
func AppendRefusal(dst []byte, code, msg string) []byte {
	return appendError(dst, errorType(code), msg, code, "")
}

// AppendUpstreamRefusal appends the body of an upstream refusal passed
// through with its status (protocol.Protocol.ReshapeRefusal): the error
// type Anthropic gives that status, the upstream's message, and the code
// provider_error.
func AppendUpstreamRefusal(dst []byte, status int, msg string) []byte {
	return appendError(dst, statusType(status), msg, transform.CodeProviderError, "")
}

// statusType is the Anthropic error type of an HTTP status, as the
// Messages API documents its errors.
func statusType(status int) string {
	switch status {
	case http.StatusUnauthorized:
		return TypeAuthentication
	case http.StatusForbidden:
		return TypePermission
	case http.StatusNotFound:
		return TypeNotFound
	case http.StatusRequestEntityTooLarge:
		return TypeRequestTooLarge
	case http.StatusTooManyRequests:
		return TypeRateLimit
	case http.StatusServiceUnavailable, 529:
		return TypeOverloaded
	case http.StatusGatewayTimeout:
		return TypeTimeout
	}
	if status >= 500 {
		return TypeAPI
	}
	return TypeInvalidRequest
}

// errorType is the Anthropic error type of a stream's error code.
func errorType(code string) string {
	if code == transform.CodeUpstreamTimeout {
		return TypeTimeout
	}
	return TypeAPI
}

// appendError appends {"type":"error","error":{"type","message",
// "details":{"error_code"}},"request_id"}: Anthropic's ErrorResponse, whose
// details.error_code the SDKs expose as APIError.errorCode (an unknown code
// reads as the bare type). An empty message becomes the code; an empty
// requestID leaves request_id out.
func appendError(dst []byte, typ, msg, code, requestID string) []byte {
	if msg == "" {
		msg = code
	}
	dst = append(dst, `{"type":"error","error":{"type":`...)
	dst = jsonout.AppendStringS(dst, typ)
	dst = append(dst, `,"message":`...)
	dst = jsonout.AppendStringS(dst, msg)
	if code != "" {
		dst = append(dst, `,"details":{"error_code":`...)
		dst = jsonout.AppendStringS(dst, code)
		dst = append(dst, '}')
	}
	dst = append(dst, '}')
	if requestID != "" {
		dst = append(dst, `,"request_id":`...)
		dst = jsonout.AppendStringS(dst, requestID)
	}
	return append(dst, '}')
}
