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
// repeat, which the client matches with its own, and the tool call ids
// its history holds.
type Request struct {
	ThreadID, RunID string
	// History holds the ids of the tool calls in the run's messages. The
	// client keys calls by id across the whole thread: a call the upstream
	// gives one of those ids (a server that numbers its calls per request,
	// call_0, call_1, …) would update the old call instead of adding one,
	// so the encoder gives it a new id. Nil for none.
	History *History
}

// History is the set of tool call ids a run's messages hold.
type History struct {
	callIDs map[string]bool
}

// HasCall reports whether the history holds a tool call with id.
func (h *History) HasCall(id string) bool { return h != nil && h.callIDs[id] }

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
