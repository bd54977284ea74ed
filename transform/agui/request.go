package agui

import (
	"net/http"

	"github.com/llmstream/llmstream/transform/request"
)

// FormatName is the request_format (and protocol) name of AG-UI.
const FormatName = "agui"

// Format is the agui request format (a row of the protocol table): a
// RunAgentInput body, which names no model (the route configures one).
// Refusals are the OpenAI error shape, which HttpAgent shows as it reads
// any error body: "HTTP 400: {…}".
var Format = &request.Format{Name: FormatName, Convert: Convert, NoModel: true}

// Request is what a RunAgentInput tells the encoder (request.Info.Facts,
// read from transform.Meta.Request): the ids RUN_STARTED and RUN_FINISHED
// repeat, which the client matches with its own.
type Request struct {
	ThreadID, RunID string
}

// The error codes of a RunAgentInput that cannot be converted, besides
// the request package's (invalid_json, invalid_body, missing_messages,
// invalid_messages, invalid_tools, request_too_large).
const (
	// CodeInvalidParameter: threadId or runId is not a string.
	CodeInvalidParameter = "invalid_parameter"
	// CodeInvalidContext: context is not a list of {description, value}
	// strings.
	CodeInvalidContext = "invalid_context"
)

// badRequest returns a 400 with code.
func badRequest(code, msg string) *request.Error {
	return &request.Error{Status: http.StatusBadRequest, Code: code, Message: msg}
}
