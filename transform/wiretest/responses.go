package wiretest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// respItem is an output item of a streamed response as its events built
// it.
type respItem struct {
	id, typ, callID string
	done            bool
	// parts counts the content parts added, summaries the summary parts;
	// openParts and openSummaries hold those not done yet, by index.
	parts, summaries           int
	openParts, openSummaries   map[int]bool
	argsDone                   bool
	text, reasoning, arguments strings.Builder
	// running and outcome follow an mcp_call (a call to a tool the
	// gateway runs, CONTRACT.md §12): response.mcp_call.in_progress, then
	// "completed" or "failed".
	running bool
	outcome string
}

// responsesClient reads the Responses API as the OpenAI SDKs do (Codex
// CLI, the Agents SDK), and sends a request with a hosted tool, which a
// chat-completions upstream has no counterpart for: the route leaves it
// out. A reasoning item holds free reasoning as content and phases as
// summary parts, so each kind keeps its own order. A response has no
// finish reason: its function_call items are the client's to run.
var responsesClient = &Client{
	Protocol: "responses", RequestFormat: "responses",
	Request: `{"model":"client-model","input":"hi","tools":[{"type":"web_search"}],"stream":true}`,
	Missing: [3]string{`{"model":"m","stream":true}`, "missing_input", "input"},
	LeftOut: "tool:web_search", Codes: true, Heartbeat: commentBeat,
	CheckReasoning: func(seen Seen, found Found) error {
		if !inOrder(seen.Reasoning, found.Native) || !inOrder(seen.Reasoning, found.Phases) {
			return fmt.Errorf("reasoning on the wire\n %q\nlacks some of\n %q\n %q", seen.Reasoning, found.Native, found.Phases)
		}
		return nil
	},
	stream: checkResponses, body: checkResponseObject,
}

// checkResponses checks an OpenAI Responses API response as the API
// streams it and the SDKs accumulate it (openai-node ResponseStream,
// openai-go ResponseAccumulator): with meta.Stream, SSE events whose
// event: line names their type, sequence_number 0, 1, 2, …;
// response.created then response.in_progress first; each output item
// added at the next output_index and done once; content and summary parts
// added at the next index of an open item, their deltas and done events
// only while they are open (item_id the item's); function call arguments
// only into an open function_call item; an item done only when its parts
// are; then exactly one terminal event, response.completed or
// response.incomplete (every item done) or response.failed followed by
// the error event; call ids unique; then data: [DONE]. A call to a tool the gateway runs
// (CONTRACT.md §12) is an mcp_call item: its arguments stream only until
// response.mcp_call_arguments.done, response.mcp_call.in_progress comes
// after them, once, then response.mcp_call.completed or .failed, and its
// output_item.done says the same (output when completed, error when
// failed), or is incomplete when it never ran. Without meta.Stream, one
// Response object, or one error object.
func checkResponses(out []byte, meta transform.Meta) (Seen, error) {
	if !meta.Stream {
		return checkResponseObject(out)
	}
	var seen Seen
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return seen, err
	}
	var items []*respItem
	calls := map[string]bool{}
	seq := 0.0
	terminal, errorSent, done := "", false, false
	for i, e := range evs {
		if e.Comment {
			continue
		}
		fail := func(format string, args ...any) (Seen, error) {
			return seen, fmt.Errorf("event %d %s: %s", i, e.Name, fmt.Sprintf(format, args...))
		}
		if done {
			return fail("after [DONE]")
		}
		// data: [DONE] ends the stream (Open Responses), after the
		// terminal event and the error event that follows response.failed.
		if e.Name == "" && e.Data == "[DONE]" {
			if terminal == "" || terminal == "response.failed" && !errorSent {
				return fail("[DONE] before the end of the response")
			}
			done = true
			continue
		}
		if errorSent || terminal != "" && terminal != "response.failed" {
			return fail("after the terminal event")
		}
		m, err := e.DecodeData()
		if err != nil {
			return seen, err
		}
		typ, _ := m["type"].(string)
		if e.Name != typ {
			return fail("the event: line names %q, the data's type is %q", e.Name, typ)
		}
		if m["sequence_number"] != seq {
			return fail("sequence_number %v, want %v", m["sequence_number"], seq)
		}
		seq++
		if (seq == 1) != (typ == "response.created") || (seq == 2) != (typ == "response.in_progress") {
			return fail("response.created and response.in_progress come first")
		}
		if terminal == "response.failed" && typ != "error" {
			return fail("response.failed is followed by the error event")
		}
		// item returns the open item the event names.
		item := func() (*respItem, error) {
			k, ok := m["output_index"].(float64)
			if !ok || int(k) < 0 || int(k) >= len(items) {
				return nil, fmt.Errorf("no output item %v", m["output_index"])
			}
			it := items[int(k)]
			if id, ok := m["item_id"]; ok && id != it.id {
				return nil, fmt.Errorf("item_id %v, output %v is %s", id, m["output_index"], it.id)
			}
			if it.done {
				return nil, fmt.Errorf("output item %v is done", m["output_index"])
			}
			return it, nil
		}
		// open returns the open part the event names in parts.
		open := func(parts map[int]bool, key string) (*respItem, int, error) {
			it, err := item()
			if err != nil {
				return nil, 0, err
			}
			k, _ := m[key].(float64)
			if parts == nil || !parts[int(k)] {
				return nil, 0, fmt.Errorf("%s %v is not an open part", key, m[key])
			}
			return it, int(k), nil
		}
		switch typ {
		case "response.created", "response.in_progress", "response.completed", "response.incomplete", "response.failed":
			r, _ := m["response"].(map[string]any)
			status := map[string]string{"response.completed": "completed", "response.incomplete": "incomplete",
				"response.failed": "failed"}[typ]
			if status == "" {
				status = "in_progress"
			}
			if id, _ := r["id"].(string); id == "" || r["object"] != "response" || r["status"] != status {
				return fail("response %v %v with status %v, want %s", r["id"], r["object"], r["status"], status)
			}
			if status == "in_progress" {
				break
			}
			terminal = typ
			for k, it := range items {
				if !it.done && status != "failed" {
					return fail("output item %d is not done", k)
				}
			}
			seen.Failed = status == "failed"
		case "response.output_item.added":
			it, _ := m["item"].(map[string]any)
			if k, _ := m["output_index"].(float64); int(k) != len(items) || it == nil || it["status"] != "in_progress" {
				return fail("an in_progress item at output_index %d, got %v at %v", len(items), it, m["output_index"])
			}
			ri := &respItem{openParts: map[int]bool{}, openSummaries: map[int]bool{}}
			ri.id, _ = it["id"].(string)
			ri.typ, _ = it["type"].(string)
			if ri.typ == "function_call" {
				ri.callID, _ = it["call_id"].(string)
				name, _ := it["name"].(string)
				if ri.callID == "" || calls[ri.callID] || name == "" {
					return fail("function_call without a name, or call_id %q empty or used before", ri.callID)
				}
				calls[ri.callID] = true
				seen.ToolCalls = append(seen.ToolCalls, name)
			}
			if ri.typ == "mcp_call" {
				name, _ := it["name"].(string)
				_, label := it["server_label"].(string)
				if !strings.HasPrefix(ri.id, "mcp_") || calls[ri.id] || name == "" || !label || it["arguments"] != "" {
					return fail("mcp_call without a name or server_label, with arguments, or id %q not mcp_… or used before", ri.id)
				}
				calls[ri.id] = true
			}
			items = append(items, ri)
		case "response.content_part.added", "response.reasoning_summary_part.added":
			it, err := item()
			if err != nil {
				return fail("%v", err)
			}
			key, n, parts := "content_index", &it.parts, it.openParts
			if typ == "response.reasoning_summary_part.added" {
				key, n, parts = "summary_index", &it.summaries, it.openSummaries
			}
			if k, _ := m[key].(float64); int(k) != *n {
				return fail("%s %v, want %d", key, m[key], *n)
			}
			parts[*n] = true
			*n++
		case "response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta",
			"response.output_text.done", "response.reasoning_text.done", "response.reasoning_summary_text.done":
			var parts map[int]bool
			key := "content_index"
			k, _ := m["output_index"].(float64)
			if int(k) >= 0 && int(k) < len(items) {
				parts = items[int(k)].openParts
				if strings.HasPrefix(typ, "response.reasoning_summary") {
					key, parts = "summary_index", items[int(k)].openSummaries
				}
			}
			it, _, err := open(parts, key)
			if err != nil {
				return fail("%v", err)
			}
			if strings.HasSuffix(typ, ".done") {
				break
			}
			d, ok := m["delta"].(string)
			if !ok {
				return fail("no delta")
			}
			if typ == "response.output_text.delta" {
				it.text.WriteString(d)
			} else {
				it.reasoning.WriteString(d)
			}
		case "response.content_part.done", "response.reasoning_summary_part.done":
			var parts map[int]bool
			key := "content_index"
			k, _ := m["output_index"].(float64)
			if int(k) >= 0 && int(k) < len(items) {
				parts = items[int(k)].openParts
				if typ == "response.reasoning_summary_part.done" {
					key, parts = "summary_index", items[int(k)].openSummaries
				}
			}
			_, j, err := open(parts, key)
			if err != nil {
				return fail("%v", err)
			}
			delete(parts, j)
		case "response.function_call_arguments.delta", "response.function_call_arguments.done":
			it, err := item()
			if err != nil || it.typ != "function_call" || it.argsDone {
				return fail("arguments for output %v, which is no open function_call (%v)", m["output_index"], err)
			}
			if typ == "response.function_call_arguments.done" {
				it.argsDone = true
				break
			}
			d, _ := m["delta"].(string)
			it.arguments.WriteString(d)
		case "response.mcp_call_arguments.delta", "response.mcp_call_arguments.done":
			it, err := item()
			if err != nil || it.typ != "mcp_call" || it.argsDone {
				return fail("arguments for output %v, which is no mcp_call streaming them (%v)", m["output_index"], err)
			}
			if typ == "response.mcp_call_arguments.done" {
				if m["arguments"] != it.arguments.String() {
					return fail("arguments %v, the deltas said %q", m["arguments"], it.arguments.String())
				}
				it.argsDone = true
				break
			}
			d, _ := m["delta"].(string)
			it.arguments.WriteString(d)
		case "response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed":
			it, err := item()
			if err != nil || it.typ != "mcp_call" || !it.argsDone || it.outcome != "" ||
				(typ == "response.mcp_call.in_progress") == it.running {
				return fail("for output %v out of turn: an mcp_call runs after its arguments are done, then ends once (%v)", m["output_index"], err)
			}
			it.running = true
			if typ != "response.mcp_call.in_progress" {
				it.outcome = strings.TrimPrefix(typ, "response.mcp_call.")
			}
		case "response.output_item.done":
			it, err := item()
			if err != nil {
				return fail("%v", err)
			}
			if len(it.openParts) > 0 || len(it.openSummaries) > 0 {
				return fail("output item done with parts still open")
			}
			if it.typ == "mcp_call" {
				if err := checkMCPDone(it, m["item"]); err != nil {
					return fail("%v", err)
				}
			}
			it.done = true
		case "error":
			if terminal != "response.failed" {
				return fail("error without response.failed before it")
			}
			seen.Code, _ = m["code"].(string)
			if seen.Message, _ = m["message"].(string); seen.Message == "" {
				return fail("error without a message")
			}
			errorSent = true
		default:
			return fail("no Responses API event")
		}
	}
	if terminal == "" || terminal == "response.failed" && !errorSent {
		return seen, fmt.Errorf("no terminal event (and, after response.failed, no error event)")
	}
	var answer, reasoning strings.Builder
	for _, it := range items {
		answer.WriteString(it.text.String())
		reasoning.WriteString(it.reasoning.String())
	}
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	seen.ToolUse = len(seen.ToolCalls) > 0
	return seen, nil
}

// checkMCPDone checks the item of an mcp_call's output_item.done: its
// arguments are the streamed ones, and it is completed with an output or
// failed with an error as its outcome event said, or incomplete (neither)
// when it never ran.
func checkMCPDone(it *respItem, v any) error {
	done, _ := v.(map[string]any)
	_, output := done["output"].(string)
	_, failure := done["error"].(map[string]any)
	_, failureText := done["error"].(string)
	switch {
	case !it.argsDone || done["arguments"] != it.arguments.String():
		return fmt.Errorf("mcp_call done without its arguments done, or with others: %v", done)
	case it.outcome == "" && !it.running:
		if done["status"] != "incomplete" || done["output"] != nil || done["error"] != nil {
			return fmt.Errorf("mcp_call done without running, not incomplete: %v", done)
		}
	case done["status"] != it.outcome:
		return fmt.Errorf("mcp_call done %v after response.mcp_call.%s", done["status"], it.outcome)
	case it.outcome == "completed" && (!output || done["error"] != nil):
		return fmt.Errorf("completed mcp_call without an output, or with an error: %v", done)
	case it.outcome == "failed" && (!failure && !failureText || done["output"] != nil):
		return fmt.Errorf("failed mcp_call without an error, or with an output: %v", done)
	}
	return nil
}

// checkResponseObject checks one Response object (or an error object)
// and returns what it holds.
func checkResponseObject(out []byte) (Seen, error) {
	var seen Seen
	var r struct {
		ID     string `json:"id"`
		Object string `json:"object"`
		Status string `json:"status"`
		Error  any    `json:"error"`
		Output []struct {
			Type    string `json:"type"`
			ID      string `json:"id"`
			Status  string `json:"status"`
			CallID  string `json:"call_id"`
			Name    string `json:"name"`
			Content []struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"content"`
			Summary []struct {
				Text string `json:"text"`
			} `json:"summary"`
		} `json:"output"`
	}
	if err := json.Unmarshal(out, &r); err != nil {
		return seen, fmt.Errorf("not one JSON object: %v", err)
	}
	if r.Object == "" && r.Error != nil {
		return errorObject(r.Error)
	}
	if r.Object != "response" || r.ID == "" || r.Status == "" {
		return seen, fmt.Errorf("not a Response: %s", out)
	}
	calls := map[string]bool{}
	var answer, reasoning strings.Builder
	for _, it := range r.Output {
		switch it.Type {
		case "message":
			for _, p := range it.Content {
				answer.WriteString(p.Text)
			}
		case "reasoning":
			for _, p := range it.Content {
				reasoning.WriteString(p.Text)
			}
			for _, p := range it.Summary {
				reasoning.WriteString(p.Text)
			}
		case "function_call":
			if it.CallID == "" || calls[it.CallID] || it.Name == "" {
				return seen, fmt.Errorf("function_call without a name, or call_id %q empty or used twice", it.CallID)
			}
			calls[it.CallID] = true
			seen.ToolCalls = append(seen.ToolCalls, it.Name)
		case "mcp_call":
			if it.ID == "" || calls[it.ID] || it.Name == "" || it.Status != "completed" && it.Status != "failed" && it.Status != "incomplete" {
				return seen, fmt.Errorf("mcp_call without a name or an outcome, or id %q empty or used twice", it.ID)
			}
			calls[it.ID] = true
		}
	}
	seen.ToolUse = len(seen.ToolCalls) > 0
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	return seen, nil
}
