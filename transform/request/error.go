package request

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// The error codes of a body that cannot be rewritten (CONTRACT.md §3: "the
// client gets 400 / 413 with a JSON body naming the problem").
const (
	// CodeInvalidJSON: the body is empty or not valid JSON.
	CodeInvalidJSON = "invalid_json"
	// CodeInvalidBody: the body is JSON but not an object.
	CodeInvalidBody = "invalid_body"
	// CodeMissingMessages: the body has no "messages" member.
	CodeMissingMessages = "missing_messages"
	// CodeInvalidMessages: "messages" is not an array.
	CodeInvalidMessages = "invalid_messages"
	// CodeInvalidTools: "tools" is not an array, so configured tools cannot
	// be merged into it.
	CodeInvalidTools = "invalid_tools"
	// CodeDuplicateKey: a member the rewrite changes appears twice. JSON
	// parsers disagree on which one counts, so the rewrite could not know
	// which one the upstream will read (a client could slip a second
	// "messages" past the system prompt).
	CodeDuplicateKey = "duplicate_key"
	// CodeUnsupportedN: "n" asks for more than one choice, which no client
	// protocol can carry (CONTRACT §7).
	CodeUnsupportedN = "unsupported_n"
	// CodeRequestTooLarge: the body exceeds max_request_body (TooLarge).
	CodeRequestTooLarge = "request_too_large"
	// CodeMissingParams: a skillpet body without projectId or message
	// (specs/002 §2.3: 400 { error: 'MISSING_PARAMS' }).
	CodeMissingParams = "MISSING_PARAMS"
	// CodeBadConfig: the Shaper itself is misconfigured (a 500: the client
	// did nothing wrong). config.Route.Load prevents it.
	CodeBadConfig = "bad_config"
)

// Error is a request the route refuses before anything reaches the
// upstream. Status is the HTTP status to answer with (400, 413, or 500 for
// a misconfigured Shaper), Code a stable machine-readable code and Message a
// human-readable one naming the problem.
type Error struct {
	Status  int
	Code    string
	Message string
	// Param names the request member at fault, for the formats whose error
	// shape has a place for it (OpenAI's error.param); empty when the error
	// concerns the whole body.
	Param string
}

// Error returns the code and the message.
func (e *Error) Error() string { return e.Code + ": " + e.Message }

// AppendJSON appends the OpenAI error shape {"error":{"code":…,"message":…}}
// (CONTRACT.md §3), the body of a refusal for the formats that have no
// shape of their own (Format.ErrorBody).
func (e *Error) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"error":{"code":`...)
	dst = jsonout.AppendStringS(dst, e.Code)
	dst = append(dst, `,"message":`...)
	dst = jsonout.AppendStringS(dst, e.Message)
	return append(dst, "}}"...)
}

// appendFlatError appends skillpet's flat shape
// {"error":"MISSING_PARAMS","message":…} (specs/002 §2.3), whose codes are
// upper-case: other codes are upper-cased to match (request_too_large
// becomes REQUEST_TOO_LARGE).
func appendFlatError(dst []byte, e *Error) []byte {
	dst = append(dst, `{"error":`...)
	dst = jsonout.AppendStringS(dst, strings.ToUpper(e.Code))
	dst = append(dst, `,"message":`...)
	dst = jsonout.AppendStringS(dst, e.Message)
	return append(dst, '}')
}

// TooLarge returns the 413 error for a body over limit bytes
// (CONTRACT.md §3 max_request_body). Reading the body is the caller's job,
// so the caller builds this error; it lives here so that every refusal has
// one shape.
func TooLarge(limit int64) *Error {
	return &Error{
		Status:  http.StatusRequestEntityTooLarge,
		Code:    CodeRequestTooLarge,
		Message: "request body is larger than " + strconv.FormatInt(limit, 10) + " bytes (max_request_body)",
	}
}

// badRequest returns a 400 error.
func badRequest(code, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: code, Message: msg}
}

// missingParams returns skillpet's 400 error. Every skillpet body problem is
// MISSING_PARAMS, whatever the detail: it is the one 400 code the spec's
// clients know, and a body that is not a JSON object lacks the parameters
// too (an Express backend with express.json() answers the same).
func missingParams(_, msg string) *Error {
	return &Error{Status: http.StatusBadRequest, Code: CodeMissingParams, Message: msg}
}

// configError returns the 500 error of a misconfigured Shaper.
func configError(format string, args ...any) *Error {
	return &Error{Status: http.StatusInternalServerError, Code: CodeBadConfig, Message: fmt.Sprintf(format, args...)}
}
