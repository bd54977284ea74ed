package responses

import (
	"encoding/json"
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// finish ends a successful stream: the open items close, then
// response.completed carries the whole Response, or response.incomplete
// when the upstream stopped at its token limit ("length") or its content
// filter, as OpenAI reports a response cut short (incomplete_details).
// A whole response is that Response object alone.
func (e *Encoder) finish(dst []byte, reason string) []byte {
	dst = e.begin(dst)
	status, typ, why := "completed", "response.completed", ""
	switch reason {
	case "length":
		status, typ, why = "incomplete", "response.incomplete", "max_output_tokens"
	case "content_filter":
		status, typ, why = "incomplete", "response.incomplete", "content_filter"
	}
	// The item the upstream was writing when it stopped short ends
	// incomplete, and it is the last one (Open Responses, "Items are
	// state machines").
	dst = e.closeAll(dst, status == "incomplete")
	e.final = final{status: status, why: why}
	if !e.meta.Stream {
		dst = e.appendResponse(dst, status, why, nil)
		return append(dst, '\n')
	}
	dst = e.eventHead(dst, typ)
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, status, why, nil)
	dst = append(dst, eventTail...)
	return e.appendDone(dst)
}

// appendDone ends an SSE stream with data: [DONE], which the Open
// Responses specification requires as the stream's last data. OpenAI's
// API does not send it; every client llmstream is tested with skips it
// (openai-node and openai-go end their streams on it, Codex skips data
// that is not JSON, and the spec's own runner ignores it). A WebSocket
// turn ends at its terminal response.* event instead.
func (e *Encoder) appendDone(dst []byte) []byte {
	if e.req.WebSocket {
		return dst
	}
	return append(dst, "data: [DONE]\n\n"...)
}

// fail ends a failed stream: the items still open close incomplete, then
// response.failed carries the Response with the output so far and the
// error, then an error event, then [DONE].
//
// The Open Responses specification puts the error event before
// response.failed; llmstream sends it after, because the SDKs raise on
// the first event with an "error" member (openai-node's Stream and
// openai-go's ssestream throw APIError / StreamError there) and would
// never see response.failed, which is what Codex and the Agents SDK act
// on (Codex retries it) and which holds the output so far. The error
// event carries its fields both flat, as OpenAI documents
// ResponseErrorEvent, and nested under "error", as the API and the spec
// (ErrorStreamingEvent) send them. Over a WebSocket, response.failed
// ends the turn and no error event follows: the next frame belongs to
// the next response.create.
//
// A whole response is instead answered with 502 (504 for
// upstream_timeout) and an OpenAI error body, which the SDKs raise as an
// APIError.
func (e *Encoder) fail(dst []byte, ev transform.Event) []byte {
	code := ev.Code
	if code == "" {
		code = transform.CodeUpstreamError
	}
	msg := ev.Text
	if len(msg) == 0 {
		msg = []byte(code)
	}
	if !e.meta.Stream {
		e.status = transform.FailedStatus(code)
		dst = append(dst, `{"error":`...)
		dst = appendErrorObject(dst, code, msg)
		return append(dst, "}\n"...)
	}
	dst = e.begin(dst)
	dst = e.failRuns(dst, string(msg))
	dst = e.closeAll(dst, true)
	e.final = final{status: "failed", failure: &transform.Event{Code: code, Text: append([]byte(nil), msg...)}}
	dst = e.eventHead(dst, "response.failed")
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, "failed", "", &transform.Event{Code: code, Text: msg})
	dst = append(dst, eventTail...)
	if e.req.WebSocket {
		return dst
	}
	dst = e.eventHead(dst, "error")
	dst = append(dst, `,"code":`...)
	dst = jsonout.AppendStringS(dst, code)
	dst = append(dst, `,"message":`...)
	dst = jsonout.AppendString(dst, msg)
	dst = append(dst, `,"param":null,"error":`...)
	dst = appendErrorObject(dst, code, msg)
	dst = append(dst, eventTail...)
	return e.appendDone(dst)
}

// final is how a response ended, for AppendResponse.
type final struct {
	status, why string
	failure     *transform.Event
}

// Ended returns the status the response ended with (completed,
// incomplete or failed), "" while it has not ended or when it failed
// before the stream began (a whole response answered with an error body).
func (e *Encoder) Ended() string { return e.final.status }

// ID returns the response's id, resp_ and the stream's base id.
func (e *Encoder) ID() string { return "resp_" + e.base }

// AppendResponse appends the Response object as the terminal event
// carried it (the one GET /v1/responses/{id} returns and a store keeps);
// nothing before the response ended.
func (e *Encoder) AppendResponse(dst []byte) []byte {
	if e.final.status == "" {
		return dst
	}
	return e.appendResponse(dst, e.final.status, e.final.why, e.final.failure)
}

// appendErrorObject appends the OpenAI error object {type, code, message,
// param}.
func appendErrorObject(dst []byte, code string, msg []byte) []byte {
	dst = append(dst, `{"type":"`+UpstreamErrorType+`","code":`...)
	dst = jsonout.AppendStringS(dst, code)
	dst = append(dst, `,"message":`...)
	dst = jsonout.AppendString(dst, msg)
	return append(dst, `,"param":null}`...)
}

// appendResponse appends the Response object in status: in_progress (no
// output or usage yet), completed, incomplete (why names the cause) or
// failed (failure holds the code and message).
func (e *Encoder) appendResponse(dst []byte, status, why string, failure *transform.Event) []byte {
	dst = append(dst, `{"id":"resp_`...)
	dst = jsonout.AppendStringBodyS(dst, e.base)
	dst = append(dst, `","object":"response","created_at":`...)
	dst = strconv.AppendInt(dst, e.meta.Created.Unix(), 10)
	// completed_at is when a completed response completed; the spec
	// requires the member, null until then and for every other status.
	dst = append(dst, `,"completed_at":`...)
	if status == "completed" {
		if e.completedAt == 0 {
			e.completedAt = e.now().Unix()
		}
		dst = strconv.AppendInt(dst, e.completedAt, 10)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","background":false,"error":`...)
	if failure != nil {
		dst = append(dst, `{"code":`...)
		dst = jsonout.AppendStringS(dst, failure.Code)
		dst = append(dst, `,"message":`...)
		dst = jsonout.AppendString(dst, failure.Text)
		dst = append(dst, '}')
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"incomplete_details":`...)
	if why != "" {
		dst = append(dst, `{"reason":"`...)
		dst = append(dst, why...)
		dst = append(dst, `"}`...)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"model":`...)
	dst = jsonout.AppendStringS(dst, e.model)
	dst = append(dst, `,"output":[`...)
	if status != "in_progress" {
		for i := range e.items {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = e.appendItem(dst, i, true)
		}
	}
	dst = append(dst, `],"usage":`...)
	if status != "in_progress" {
		dst = appendUsage(dst, e.usage)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, e.echo...)
	return append(dst, '}')
}

// chatUsage is the part of a chat-completions usage object that maps onto
// a Response's usage (numbers as floats: some servers write 12.0).
type chatUsage struct {
	PromptTokens        float64 `json:"prompt_tokens"`
	CompletionTokens    float64 `json:"completion_tokens"`
	TotalTokens         float64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens float64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens float64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// appendUsage appends the Response usage for the upstream's chat usage:
// prompt_tokens as input_tokens (cached_tokens in input_tokens_details),
// completion_tokens as output_tokens (reasoning_tokens in
// output_tokens_details), total_tokens (their sum when absent). The
// details are always present, zero when unknown: Codex requires their
// fields once the object is there. No usage, or one that is not an
// object of numbers, is null. It runs once per stream.
func appendUsage(dst, raw []byte) []byte {
	var u chatUsage
	if len(raw) == 0 || json.Unmarshal(raw, &u) != nil {
		return append(dst, "null"...)
	}
	total := u.TotalTokens
	if total == 0 {
		total = u.PromptTokens + u.CompletionTokens
	}
	var cached, reasoning float64
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		reasoning = u.CompletionTokensDetails.ReasoningTokens
	}
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.PromptTokens), 10)
	dst = append(dst, `,"input_tokens_details":{"cached_tokens":`...)
	dst = strconv.AppendInt(dst, int64(cached), 10)
	dst = append(dst, `},"output_tokens":`...)
	dst = strconv.AppendInt(dst, int64(u.CompletionTokens), 10)
	dst = append(dst, `,"output_tokens_details":{"reasoning_tokens":`...)
	dst = strconv.AppendInt(dst, int64(reasoning), 10)
	dst = append(dst, `},"total_tokens":`...)
	dst = strconv.AppendInt(dst, int64(total), 10)
	return append(dst, '}')
}
