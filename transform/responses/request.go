package responses

import (
	"encoding/json"
	"net/http"

	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// Request is what a Responses request body tells the encoder (it travels
// as request.Info.Facts and transform.Meta.Request): the parameters an
// OpenAI Response object repeats from its request, each as compact JSON
// (no newline, so it fits an SSE data line), nil when the client did not
// send it or sent null, and what the HTTP layer decided around the body.
//
// The model is not among them: transform.Meta.Model is the one sent
// upstream, the route's override included.
type Request struct {
	// The echoed members, named as in the request body.
	Instructions, MaxOutputTokens, ParallelToolCalls, Reasoning, Temperature,
	Text, ToolChoice, Tools, TopP, Truncation, User, Metadata,
	PresencePenalty, FrequencyPenalty, TopLogprobs, MaxToolCalls,
	SafetyIdentifier, PromptCacheKey json.RawMessage
	// Store is whether the response is kept for previous_response_id and
	// GET /v1/responses/{id}: the body's store (default true, as OpenAI),
	// which the HTTP layer turns off when the route cannot keep it for
	// this client (no scope). The Response repeats it.
	Store bool
	// PreviousResponseID is the stored response this one continues, set
	// by the HTTP layer once it spliced that chain into the input (Splice);
	// Convert alone refuses a previous_response_id it cannot resolve.
	PreviousResponseID string
	// Compaction makes the response a compaction (CONTRACT.md §14): the
	// upstream's answer is the summary, sealed with Sealer into the
	// response's one output item, and nothing else the model writes is
	// sent. CompactionTrigger answers /v1/responses as usual around that
	// item; CompactionEndpoint answers POST /v1/responses/compact with one
	// CompactResource object.
	Compaction Compaction
	// Sealer seals the summary of a compaction; set with Compaction.
	Sealer *Sealer
	// WebSocket is set by the HTTP layer for a turn of a WebSocket
	// session (CONTRACT.md §14): the terminal response.* event ends the
	// turn, so no error event follows response.failed and no [DONE] ends
	// it (the socket stays open for the next response.create).
	WebSocket bool
}

// Compaction is what kind of compaction a response is.
type Compaction uint8

// The kinds of compaction.
const (
	// NoCompaction: an ordinary response.
	NoCompaction Compaction = iota
	// CompactionTrigger: a /v1/responses request whose input held a
	// compaction_trigger item.
	CompactionTrigger
	// CompactionEndpoint: POST /v1/responses/compact.
	CompactionEndpoint
)

// The error codes of a Responses body that cannot be converted, besides
// the request package's (invalid_json, invalid_body, request_too_large).
// previous_response_not_found is OpenAI's own code for the same refusal.
const (
	// CodeMissingInput: the body has no input.
	CodeMissingInput = "missing_input"
	// CodeInvalidInput: input, or an item or content part in it, is not
	// what the Responses API allows.
	CodeInvalidInput = "invalid_input"
	// CodeInvalidParam: a parameter has the wrong JSON type.
	CodeInvalidParam = "invalid_parameter"
	// CodeUnsupported: the request relies on something a chat-completions
	// upstream cannot do and that cannot be left out without changing the
	// answer (a stored conversation, prompt or item, a background run, a
	// forced hosted tool, an image known only by its file id).
	CodeUnsupported = "unsupported_parameter"
	// CodePreviousResponseNotFound: previous_response_id names a response
	// this client has not stored (never, store false, expired, deleted, or
	// kept only by another WebSocket).
	CodePreviousResponseNotFound = "previous_response_not_found"
	// CodeInvalidEncryptedContent: a compaction item's encrypted_content
	// was not written by this llmstream deployment, or was altered
	// (OpenAI's code for the same refusal).
	CodeInvalidEncryptedContent = "invalid_encrypted_content"
)

// ErrorType is the error.type of the errors this package answers: OpenAI
// calls a request it refuses an invalid_request_error.
const ErrorType = "invalid_request_error"

// AppendError appends the OpenAI error shape the SDKs parse,
// {"error":{"message","type","param","code"}}, for a refused request
// (request.Format.AppendError). param names the request member at fault,
// null when the error concerns the whole body.
func AppendError(dst []byte, e *request.Error) []byte {
	dst = append(dst, `{"error":{"message":`...)
	dst = jsonout.AppendStringS(dst, e.Message)
	dst = append(dst, `,"type":"`+ErrorType+`","param":`...)
	if e.Param != "" {
		dst = jsonout.AppendStringS(dst, e.Param)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"code":`...)
	dst = jsonout.AppendStringS(dst, e.Code)
	return append(dst, "}}"...)
}

// badRequest returns a 400 naming param.
func badRequest(code, param, msg string) *request.Error {
	return &request.Error{Status: http.StatusBadRequest, Code: code, Param: param, Message: msg}
}
