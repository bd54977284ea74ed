package responses

import (
	"bytes"
	"encoding/json"

	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// Prep is what the HTTP layer knows of a Responses body before Convert:
// the items of the chain previous_response_id named, the route's Sealer,
// and whether the body is a POST /v1/responses/compact.
type Prep struct {
	// Prior holds the input and output items of the previous responses,
	// oldest first, already fitted to the history budget (TrimChain).
	// Resolved says previous_response_id was found: the body's is then
	// removed (and the encoder repeats it from Request.PreviousResponseID);
	// unresolved, it stays, and Convert refuses it.
	Prior    []json.RawMessage
	Resolved bool
	// Sealer opens the compaction items of the input; nil refuses them.
	Sealer *Sealer
	// Compact: the body is a compact request, whose input (and chain) is
	// to be summarised.
	Compact bool
}

// Prepared is a body made ready for Convert.
type Prepared struct {
	// Body is the Responses body Convert is to read.
	Body []byte
	// Own is the request's own input as items (a string input as one user
	// message), compaction_trigger items left out: what a stored response
	// keeps as its input.
	Own []json.RawMessage
	// Trigger: the input held a compaction_trigger item (or the body is a
	// compact request): the response is a compaction.
	Trigger bool
}

// Prepare rewrites a Responses body for Convert (CONTRACT.md §14): the
// chain's items go before the input (Open Responses: previous_response.input
// + previous_response.output + input), each compaction item becomes the
// summary it sealed, as a user message headed as such, and a compaction
// (a compaction_trigger item, or a compact request) ends the input with
// the request to summarise it, without the tools or the output format the
// client asked for, which a summary must not use.
//
// A compaction item this deployment did not write, or one altered, is a
// 400 invalid_encrypted_content naming it; a compact request without a
// model is a 400 naming model (the spec requires it). Prepare reads the
// body once with encoding/json; it never panics.
func Prepare(body []byte, p Prep) (Prepared, *request.Error) {
	root, e := parseBody(body)
	if e != nil {
		return Prepared{}, e
	}
	if p.Compact {
		if m := stringOf(root["model"]); m == "" {
			return Prepared{}, badRequest(CodeMissingModel, "model", `a compact request needs "model"`)
		}
	}
	var own []json.RawMessage
	switch kindOf(root["input"]) {
	case 0, 'n':
	case '"':
		msg, _ := json.Marshal(map[string]json.RawMessage{"type": json.RawMessage(`"message"`),
			"role": json.RawMessage(`"user"`), "content": root["input"]})
		own = append(own, msg)
	case '[':
		if err := json.Unmarshal(root["input"], &own); err != nil {
			return Prepared{}, badRequest(CodeInvalidInput, "input", `"input" must be a string or an array of items`)
		}
	default:
		return Prepared{}, badRequest(CodeInvalidInput, "input", `"input" must be a string or an array of items`)
	}
	out := Prepared{Trigger: p.Compact}
	kept := own[:0:0]
	for _, it := range own {
		if itemType(it) == "compaction_trigger" {
			out.Trigger = true
			continue
		}
		kept = append(kept, it)
	}
	out.Own = kept

	all := make([]json.RawMessage, 0, len(p.Prior)+len(kept)+1)
	for _, it := range p.Prior {
		opened, e := openCompaction(it, p.Sealer, "previous_response_id")
		if e != nil {
			return Prepared{}, e
		}
		all = append(all, opened)
	}
	for i, it := range kept {
		opened, e := openCompaction(it, p.Sealer, itemParam(i))
		if e != nil {
			return Prepared{}, e
		}
		all = append(all, opened)
	}
	if out.Trigger {
		all = append(all, userMessage(SummaryPrompt))
		for _, name := range []string{"tools", "tool_choice", "parallel_tool_calls", "text"} {
			delete(root, name)
		}
	}
	if len(all) > 0 || kindOf(root["input"]) != 0 {
		input, err := json.Marshal(all)
		if err != nil {
			return Prepared{}, badRequest(CodeInvalidInput, "input", "input: "+err.Error())
		}
		root["input"] = input
	}
	if p.Resolved {
		delete(root, "previous_response_id")
	}
	if p.Compact {
		// Compact requests have no stream, and what the summary is for
		// needs none of these.
		for _, name := range []string{"stream", "prompt_cache_key", "store"} {
			delete(root, name)
		}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(root); err != nil {
		return Prepared{}, badRequest(request.CodeInvalidBody, "", "request body: "+err.Error())
	}
	out.Body = bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	return out, nil
}

// CodeMissingModel: a request that must name its model does not.
const CodeMissingModel = "missing_required_parameter"

// itemType returns an input item's type, "" for none.
func itemType(raw json.RawMessage) string {
	var it struct {
		Type string `json:"type"`
	}
	if kindOf(raw) != '{' || json.Unmarshal(raw, &it) != nil {
		return ""
	}
	return it.Type
}

// openCompaction returns a compaction item as the user message that
// stands for it, and any other item as it is.
func openCompaction(raw json.RawMessage, s *Sealer, param string) (json.RawMessage, *request.Error) {
	if itemType(raw) != "compaction" {
		return raw, nil
	}
	var it struct {
		Enc *string `json:"encrypted_content"`
	}
	if json.Unmarshal(raw, &it) != nil || it.Enc == nil {
		return nil, badRequest(CodeInvalidInput, param+".encrypted_content", param+" is a compaction item without encrypted_content")
	}
	if s == nil {
		return nil, unsupported(param, param+" is a compaction item, and this route keeps no compaction key")
	}
	summary, err := s.Open(*it.Enc)
	if err != nil {
		return nil, badRequest(CodeInvalidEncryptedContent, param+".encrypted_content",
			param+": "+err.Error()+": send the compaction item this llmstream returned, unchanged")
	}
	return userMessage(summaryLead + string(summary)), nil
}

// userMessage returns a user message item holding text.
func userMessage(text string) json.RawMessage {
	out := []byte(`{"type":"message","role":"user","content":`)
	out = jsonout.AppendStringS(out, text)
	return append(out, '}')
}
