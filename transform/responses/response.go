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
	dst = e.closeAll(dst)
	status, typ, why := "completed", "response.completed", ""
	switch reason {
	case "length":
		status, typ, why = "incomplete", "response.incomplete", "max_output_tokens"
	case "content_filter":
		status, typ, why = "incomplete", "response.incomplete", "content_filter"
	}
	if !e.meta.Stream {
		dst = e.appendResponse(dst, status, why, nil)
		return append(dst, '\n')
	}
	dst = e.eventHead(dst, typ)
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, status, why, nil)
	return append(dst, eventTail...)
}

// fail ends a failed stream with response.failed, whose Response holds
// the output so far (unfinished items incomplete) and the error, then an
// error event. response.failed is what Codex and the Agents SDK act on
// (Codex retries it); the official SDKs raise only on an event with an
// "error" member (openai-node's Stream and openai-go's ssestream throw
// APIError / StreamError there), so the error event carries its fields
// both flat, as OpenAI documents ResponseErrorEvent, and nested under
// "error", as the API sends them. A whole response is instead answered
// with 502 (504 for upstream_timeout) and an OpenAI error body, which the
// SDKs raise as an APIError.
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
	dst = e.eventHead(dst, "response.failed")
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, "failed", "", &transform.Event{Code: code, Text: msg})
	dst = append(dst, eventTail...)
	dst = e.eventHead(dst, "error")
	dst = append(dst, `,"code":`...)
	dst = jsonout.AppendStringS(dst, code)
	dst = append(dst, `,"message":`...)
	dst = jsonout.AppendString(dst, msg)
	dst = append(dst, `,"param":null,"error":`...)
	dst = appendErrorObject(dst, code, msg)
	return append(dst, eventTail...)
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

// appendEcho appends the Response members that repeat the request, each
// the client's value or the API's default, as a list of ,"name":value.
// llmstream stores nothing: store is false and previous_response_id null.
func appendEcho(dst []byte, r *Request) []byte {
	member := func(name string, v []byte, def string) {
		dst = append(dst, ',', '"')
		dst = append(dst, name...)
		dst = append(dst, '"', ':')
		if v != nil {
			dst = append(dst, v...)
		} else {
			dst = append(dst, def...)
		}
	}
	member("instructions", r.Instructions, "null")
	member("max_output_tokens", r.MaxOutputTokens, "null")
	member("parallel_tool_calls", r.ParallelToolCalls, "true")
	member("previous_response_id", nil, "null")
	member("reasoning", r.Reasoning, "null")
	member("store", nil, "false")
	member("temperature", r.Temperature, "null")
	member("text", r.Text, `{"format":{"type":"text"}}`)
	member("tool_choice", r.ToolChoice, `"auto"`)
	member("tools", r.Tools, "[]")
	member("top_p", r.TopP, "null")
	member("truncation", r.Truncation, `"disabled"`)
	if r.User != nil {
		member("user", r.User, "")
	}
	member("metadata", r.Metadata, "{}")
	return dst
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
