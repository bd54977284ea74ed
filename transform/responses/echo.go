package responses

import (
	"encoding/json"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// appendEcho appends the Response members that repeat the request, as a
// list of ,"name":value, each in the shape the Open Responses OpenAPI
// document (2026-04-24, ResponseResource) requires of it: every required
// member present, numbers where it wants numbers, and the client's value
// or the value llmstream actually used when the client sent none:
//
//   - temperature and top_p 1, presence_penalty, frequency_penalty and
//     top_logprobs 0: the sampling defaults of the chat upstream, which
//     gets only what the client set;
//   - tools: the function tools the model was offered, each with
//     description and parameters (null when the client left them out) and
//     strict (false when left out: the chat upstream's default). Hosted
//     tools (web_search, …) are not repeated: the spec's Tool is a
//     function tool, and a chat upstream runs none of them;
//   - text: format normalised (a json_schema format with its description,
//     null when none, and strict) and verbosity, default "medium";
//   - reasoning: {effort, summary}, each null when not asked for;
//   - service_tier "default", background false: llmstream has no tiers and
//     runs nothing in the background;
//   - store as decided (Request.Store), previous_response_id as resolved.
//
// It runs once per response, when the encoder is made, so it may decode
// the client's JSON.
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
	number := func(name string, v []byte, def string) {
		if kindOf(v) != '0' {
			v = nil
		}
		member(name, v, def)
	}
	str := func(name string, v []byte) {
		if kindOf(v) != '"' {
			v = nil
		}
		member(name, v, "null")
	}
	var prev []byte
	if r.PreviousResponseID != "" {
		prev = jsonout.AppendStringS(nil, r.PreviousResponseID)
	}
	member("previous_response_id", prev, "null")
	str("instructions", r.Instructions)
	member("tools", echoTools(r.Tools), "[]")
	member("tool_choice", r.ToolChoice, `"auto"`)
	if kindOf(r.Truncation) == '"' {
		member("truncation", r.Truncation, "")
	} else {
		member("truncation", nil, `"disabled"`)
	}
	if k := kindOf(r.ParallelToolCalls); k == 't' || k == 'f' {
		member("parallel_tool_calls", r.ParallelToolCalls, "")
	} else {
		member("parallel_tool_calls", nil, "true")
	}
	member("text", echoText(r.Text), `{"format":{"type":"text"},"verbosity":"medium"}`)
	number("top_p", r.TopP, "1")
	number("presence_penalty", r.PresencePenalty, "0")
	number("frequency_penalty", r.FrequencyPenalty, "0")
	number("top_logprobs", r.TopLogprobs, "0")
	number("temperature", r.Temperature, "1")
	member("reasoning", echoReasoning(r.Reasoning), `{"effort":null,"summary":null}`)
	number("max_output_tokens", r.MaxOutputTokens, "null")
	number("max_tool_calls", r.MaxToolCalls, "null")
	if r.Store {
		member("store", nil, "true")
	} else {
		member("store", nil, "false")
	}
	member("service_tier", nil, `"default"`)
	if kindOf(r.Metadata) == '{' {
		member("metadata", r.Metadata, "")
	} else {
		member("metadata", nil, "{}")
	}
	str("safety_identifier", r.SafetyIdentifier)
	str("prompt_cache_key", r.PromptCacheKey)
	if kindOf(r.User) == '"' {
		member("user", r.User, "")
	}
	return dst
}

// echoTools returns the function tools of a tools array in the spec's
// FunctionTool shape, or nil when there is no array.
func echoTools(raw json.RawMessage) []byte {
	var tools []map[string]json.RawMessage
	if kindOf(raw) != '[' || json.Unmarshal(raw, &tools) != nil {
		return nil
	}
	out := []byte{'['}
	n := 0
	for _, t := range tools {
		if stringOf(t["type"]) != "function" || kindOf(t["name"]) != '"' {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, `{"type":"function","name":`...)
		out = appendCompact(out, t["name"])
		out = append(out, `,"description":`...)
		out = appendKind(out, t["description"], '"', "null")
		out = append(out, `,"parameters":`...)
		out = appendKind(out, t["parameters"], '{', "null")
		out = append(out, `,"strict":`...)
		out = appendBool(out, t["strict"], "false")
		out = append(out, '}')
	}
	return append(out, ']')
}

// echoText returns the text member: {format, verbosity}.
func echoText(raw json.RawMessage) []byte {
	var text struct {
		Format    map[string]json.RawMessage `json:"format"`
		Verbosity json.RawMessage            `json:"verbosity"`
	}
	if kindOf(raw) != '{' || json.Unmarshal(raw, &text) != nil {
		return nil
	}
	out := []byte(`{"format":`)
	switch stringOf(text.Format["type"]) {
	case "json_object":
		out = append(out, `{"type":"json_object"}`...)
	case "json_schema":
		out = append(out, `{"type":"json_schema","name":`...)
		out = appendKind(out, text.Format["name"], '"', `"response"`)
		out = append(out, `,"description":`...)
		out = appendKind(out, text.Format["description"], '"', "null")
		// The spec's JsonSchemaResponseFormat says schema is null, which
		// no SDK reads: the schema the client sent is repeated (README:
		// where the spec and the SDKs disagree).
		out = append(out, `,"schema":`...)
		out = appendKind(out, text.Format["schema"], '{', "{}")
		out = append(out, `,"strict":`...)
		out = appendBool(out, text.Format["strict"], "false")
		out = append(out, '}')
	default:
		out = append(out, `{"type":"text"}`...)
	}
	out = append(out, `,"verbosity":`...)
	out = appendKind(out, text.Verbosity, '"', `"medium"`)
	return append(out, '}')
}

// echoReasoning returns the reasoning member: {effort, summary}, the
// summary from summary or the older generate_summary.
func echoReasoning(raw json.RawMessage) []byte {
	var r map[string]json.RawMessage
	if kindOf(raw) != '{' || json.Unmarshal(raw, &r) != nil {
		return nil
	}
	summary := r["summary"]
	if kindOf(summary) != '"' {
		summary = r["generate_summary"]
	}
	out := append([]byte(`{"effort":`), appendKind(nil, r["effort"], '"', "null")...)
	out = append(out, `,"summary":`...)
	out = appendKind(out, summary, '"', "null")
	return append(out, '}')
}

// appendKind appends raw, compacted, when its JSON kind is want, else def.
func appendKind(dst, raw []byte, want byte, def string) []byte {
	if kindOf(raw) != want {
		return append(dst, def...)
	}
	return appendCompact(dst, raw)
}

// appendBool appends raw when it is true or false, else def.
func appendBool(dst, raw []byte, def string) []byte {
	if k := kindOf(raw); k == 't' || k == 'f' {
		return appendCompact(dst, raw)
	}
	return append(dst, def...)
}

// appendCompact appends raw on one line; raw that does not compact (a
// string with invalid UTF-8) is appended as it is: it came from a body
// that was valid JSON.
func appendCompact(dst, raw []byte) []byte {
	if out, ok := jsonout.AppendCompact(dst, raw); ok {
		return out
	}
	return append(dst, raw...)
}
