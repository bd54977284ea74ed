package responses_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"strings"

	"github.com/llmstream/llmstream/transform/encodertest"
)

// accumulated is a response put together from its events the way
// openai-node's accumulateResponse (lib/responses/ResponseAccumulator.ts)
// and openai-go's ResponseAccumulator do, failing where they throw and
// checking more: what Codex reads (output_item.done items, the id and
// usage of response.completed) and what every event must hold.
type accumulated struct {
	id, model, status string
	// output is the accumulated output, decoded.
	output []map[string]any
	// answer is the output text (every message's output_text, in order);
	// reasoning and summary the reasoning_text and summary_text parts.
	answer             string
	reasoning, summary []string
	// calls are the function calls, "call_id name arguments".
	calls      []string
	incomplete string
	usage      map[string]any
	errCode    string
	errMessage string
	// terminal is the terminal event's type.
	terminal string
}

// accumulate reads a stream of response.* events strictly: SSE framing
// with an event: line named like the data's type, sequence_number
// counting from 0, response.created then response.in_progress first,
// items added at the next output_index and parts at the next index,
// deltas only into open parts of open items with matching item ids, done
// events repeating exactly what the deltas built, output_item.done items
// equal to the accumulation, and at most one terminal event (a stream
// still open has none): response.completed or response.incomplete whose
// output is the accumulation, or response.failed then the error event
// (flat and nested fields alike). No other event has a top-level "error"
// member, on which openai-go ends a stream.
func accumulate(out []byte) (*accumulated, error) {
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return nil, err
	}
	a := &accumulated{}
	var resp map[string]any
	partDone := map[string]bool{} // "<output>/<c|s><index>"
	seq := 0
	failed, done := false, false
	for _, ev := range evs {
		if ev.Comment {
			continue
		}
		if done {
			return nil, fmt.Errorf("event %s after [DONE]", ev.Name)
		}
		// The Open Responses spec's last data; only after the terminal
		// event (and the error event that follows response.failed).
		if ev.Name == "" && ev.Data == "[DONE]" {
			if a.terminal == "" || a.terminal == "response.failed" && !failed {
				return nil, fmt.Errorf("[DONE] before the end of the response")
			}
			done = true
			continue
		}
		if a.terminal != "" && !(a.terminal == "response.failed" && !failed) {
			return nil, fmt.Errorf("event %s after the terminal %s", ev.Name, a.terminal)
		}
		m, err := ev.DecodeData()
		if err != nil {
			return nil, err
		}
		typ, _ := m["type"].(string)
		if ev.Name != typ {
			return nil, fmt.Errorf("event: %q but type %q", ev.Name, typ)
		}
		if m["sequence_number"] != float64(seq) {
			return nil, fmt.Errorf("%s: sequence_number %v, want %d", typ, m["sequence_number"], seq)
		}
		seq++
		if _, ok := m["error"]; ok && typ != "error" {
			return nil, fmt.Errorf("%s has a top-level error member", typ)
		}
		if (seq == 1) != (typ == "response.created") || (seq == 2) != (typ == "response.in_progress") {
			return nil, fmt.Errorf("event %d is %s: response.created and response.in_progress come first", seq-1, typ)
		}
		if a.terminal == "response.failed" && typ != "error" {
			return nil, fmt.Errorf("%s after response.failed, want the error event", typ)
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		idx := func(k string) int {
			f, ok := m[k].(float64)
			if !ok {
				return -1
			}
			return int(f)
		}
		// item returns the open item an item-scoped event names.
		item := func() (map[string]any, int, error) {
			i := idx("output_index")
			if i < 0 || i >= len(a.output) {
				return nil, 0, fmt.Errorf("%s: no output at index %v", typ, m["output_index"])
			}
			it := a.output[i]
			if _, ok := m["item_id"]; ok && m["item_id"] != it["id"] {
				return nil, 0, fmt.Errorf("%s: item_id %v, output %d is %v", typ, m["item_id"], i, it["id"])
			}
			if it["status"] != "in_progress" {
				return nil, 0, fmt.Errorf("%s for output %d, which is done", typ, i)
			}
			return it, i, nil
		}
		// part returns the open part an event names in list ("content" or
		// "summary") of the open item.
		part := func(list, indexKey, wantType string) (map[string]any, string, error) {
			it, i, err := item()
			if err != nil {
				return nil, "", err
			}
			parts, _ := it[list].([]any)
			j := idx(indexKey)
			if j < 0 || j >= len(parts) {
				return nil, "", fmt.Errorf("%s: no %s part %v", typ, list, m[indexKey])
			}
			p := parts[j].(map[string]any)
			key := fmt.Sprintf("%d/%s%d", i, list[:1], j)
			if p["type"] != wantType || partDone[key] {
				return nil, "", fmt.Errorf("%s: %s part %d is %v (done %v), want an open %s", typ, list, j, p["type"], partDone[key], wantType)
			}
			return p, key, nil
		}
		addPart := func(list, indexKey, partKey string) error {
			it, _, err := item()
			if err != nil {
				return err
			}
			p, _ := m[partKey].(map[string]any)
			parts, _ := it[list].([]any)
			if idx(indexKey) != len(parts) || p == nil || p["text"] != "" {
				return fmt.Errorf("%s: part %v at %v, want an empty part at %d", typ, p, m[indexKey], len(parts))
			}
			it[list] = append(parts, p)
			return nil
		}
		switch typ {
		case "response.created", "response.in_progress":
			r, _ := m["response"].(map[string]any)
			if err := checkResponse(r, "in_progress"); err != nil {
				return nil, fmt.Errorf("%s: %v", typ, err)
			}
			if out, _ := r["output"].([]any); len(out) != 0 {
				return nil, fmt.Errorf("%s with output", typ)
			}
			if resp != nil && r["id"] != resp["id"] {
				return nil, fmt.Errorf("%s: the response id changed", typ)
			}
			resp = r
			a.id, _ = r["id"].(string)
		case "response.output_item.added":
			it, _ := m["item"].(map[string]any)
			if it != nil && (it["type"] == "compaction" || it["type"] == "mcp_approval_request") {
				// CompactionBody and an MCP approval request have no
				// status; tracked here as others.
				if _, ok := it["status"]; ok {
					return nil, fmt.Errorf("%s: a %v item with a status", typ, it["type"])
				}
				it["status"] = "in_progress"
			}
			if idx("output_index") != len(a.output) || it == nil || it["status"] != "in_progress" {
				return nil, fmt.Errorf("%s: %v at %v, want an in_progress item at %d", typ, it, m["output_index"], len(a.output))
			}
			if err := checkItem(it, false); err != nil {
				return nil, err
			}
			a.output = append(a.output, it)
		case "response.content_part.added":
			it, _, err := item()
			if err != nil {
				return nil, err
			}
			want := map[any]string{"message": "output_text", "reasoning": "reasoning_text"}[it["type"]]
			if p, _ := m["part"].(map[string]any); want == "" || p["type"] != want {
				return nil, fmt.Errorf("%s: part %v in a %v", typ, m["part"], it["type"])
			}
			if err := addPart("content", "content_index", "part"); err != nil {
				return nil, err
			}
		case "response.reasoning_summary_part.added":
			if it, _, err := item(); err != nil || it["type"] != "reasoning" {
				return nil, fmt.Errorf("%s: %v", typ, err)
			}
			if p, _ := m["part"].(map[string]any); p["type"] != "summary_text" {
				return nil, fmt.Errorf("%s: part %v", typ, m["part"])
			}
			if err := addPart("summary", "summary_index", "part"); err != nil {
				return nil, err
			}
		case "response.output_text.delta", "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
			list, key, want := "content", "content_index", "output_text"
			switch typ {
			case "response.reasoning_text.delta":
				want = "reasoning_text"
			case "response.reasoning_summary_text.delta":
				list, key, want = "summary", "summary_index", "summary_text"
			}
			p, _, err := part(list, key, want)
			if err != nil {
				return nil, err
			}
			d, ok := m["delta"].(string)
			if !ok || d == "" {
				return nil, fmt.Errorf("%s: delta %v", typ, m["delta"])
			}
			if lp, ok := m["logprobs"].([]any); want == "output_text" && (!ok || len(lp) != 0) {
				return nil, fmt.Errorf("%s: logprobs %v, want []", typ, m["logprobs"])
			}
			p["text"] = p["text"].(string) + d
		case "response.output_text.done", "response.reasoning_text.done", "response.reasoning_summary_text.done":
			list, key, want := "content", "content_index", "output_text"
			switch typ {
			case "response.reasoning_text.done":
				want = "reasoning_text"
			case "response.reasoning_summary_text.done":
				list, key, want = "summary", "summary_index", "summary_text"
			}
			p, _, err := part(list, key, want)
			if err != nil {
				return nil, err
			}
			if m["text"] != p["text"] {
				return nil, fmt.Errorf("%s: text %q, the deltas made %q", typ, m["text"], p["text"])
			}
		case "response.content_part.done", "response.reasoning_summary_part.done":
			list, key := "content", "content_index"
			if typ == "response.reasoning_summary_part.done" {
				list, key = "summary", "summary_index"
			}
			it, _, err := item()
			if err != nil {
				return nil, err
			}
			want := map[any]string{"message": "output_text", "reasoning": "reasoning_text"}[it["type"]]
			if list == "summary" {
				want = "summary_text"
			}
			p, pk, err := part(list, key, want)
			if err != nil {
				return nil, err
			}
			if !reflect.DeepEqual(m["part"], p) {
				return nil, fmt.Errorf("%s: part %v, accumulated %v", typ, m["part"], p)
			}
			partDone[pk] = true
		case "response.function_call_arguments.delta":
			it, _, err := item()
			if err != nil || it["type"] != "function_call" {
				return nil, fmt.Errorf("%s: %v into %v", typ, err, it)
			}
			d, ok := m["delta"].(string)
			if !ok || d == "" {
				return nil, fmt.Errorf("%s: delta %v", typ, m["delta"])
			}
			it["arguments"] = it["arguments"].(string) + d
		case "response.function_call_arguments.done":
			it, _, err := item()
			if err != nil || it["type"] != "function_call" {
				return nil, fmt.Errorf("%s: %v into %v", typ, err, it)
			}
			if m["arguments"] != it["arguments"] || m["name"] != it["name"] {
				return nil, fmt.Errorf("%s: %v %v, accumulated %v %v", typ, m["name"], m["arguments"], it["name"], it["arguments"])
			}
			partDone[fmt.Sprintf("%d/args", idx("output_index"))] = true
		case "response.mcp_call_arguments.delta":
			it, _, err := item()
			if err != nil || it["type"] != "mcp_call" || partDone[fmt.Sprintf("%d/args", idx("output_index"))] {
				return nil, fmt.Errorf("%s: %v into %v", typ, err, it)
			}
			d, ok := m["delta"].(string)
			if !ok || d == "" {
				return nil, fmt.Errorf("%s: delta %v", typ, m["delta"])
			}
			it["arguments"] = it["arguments"].(string) + d
		case "response.mcp_call_arguments.done":
			it, _, err := item()
			if err != nil || it["type"] != "mcp_call" || m["arguments"] != it["arguments"] {
				return nil, fmt.Errorf("%s: %v %v into %v", typ, err, m["arguments"], it)
			}
			partDone[fmt.Sprintf("%d/args", idx("output_index"))] = true
		case "response.mcp_call.in_progress", "response.mcp_call.completed", "response.mcp_call.failed":
			// A call to a tool the gateway runs: it runs once its
			// arguments are done, then ends once, and output_item.done
			// follows with that outcome.
			it, i, err := item()
			if err != nil || it["type"] != "mcp_call" || !partDone[fmt.Sprintf("%d/args", i)] {
				return nil, fmt.Errorf("%s: %v for %v before its arguments are done", typ, err, it)
			}
			running := fmt.Sprintf("%d/running", i)
			if (typ == "response.mcp_call.in_progress") == partDone[running] || partDone[fmt.Sprintf("%d/outcome", i)] {
				return nil, fmt.Errorf("%s for output %d out of turn", typ, i)
			}
			partDone[running] = true
			if typ != "response.mcp_call.in_progress" {
				partDone[fmt.Sprintf("%d/outcome", i)] = true
				partDone[fmt.Sprintf("%d/%s", i, strings.TrimPrefix(typ, "response.mcp_call."))] = true
			}
		case "response.output_item.done":
			it, i, err := item()
			if err != nil {
				return nil, err
			}
			if err := allPartsDone(it, i, partDone); err != nil {
				return nil, fmt.Errorf("%s: %v", typ, err)
			}
			// An item ends completed, or incomplete when the reply was cut
			// short while it was written (checked at the terminal event).
			done, _ := m["item"].(map[string]any)
			compaction := it["type"] == "compaction" || it["type"] == "mcp_approval_request"
			if compaction {
				if it["type"] == "compaction" {
					it["encrypted_content"] = done["encrypted_content"]
				}
				done["status"] = "completed"
			}
			if it["type"] == "mcp_call" {
				it["status"] = "completed"
				// The outcome is the done item's, as the event before it
				// said: output when completed, error when failed.
				if done["status"] == "incomplete" && !partDone[fmt.Sprintf("%d/running", i)] && done["output"] == nil && done["error"] == nil {
					// A call the response ended before it ran.
					it["status"] = "incomplete"
					if !reflect.DeepEqual(m["item"], any(it)) {
						return nil, fmt.Errorf("%s: item %v, accumulated %v", typ, m["item"], it)
					}
					break
				}
				if !partDone[fmt.Sprintf("%d/%v", i, done["status"])] {
					return nil, fmt.Errorf("%s: mcp_call %d done %v without response.mcp_call.completed or .failed saying so", typ, i, done["status"])
				}
				it["status"] = done["status"]
				_, hasOutput := done["output"].(string)
				_, hasError := done["error"].(map[string]any)
				if (done["status"] == "completed") != (hasOutput && done["error"] == nil) || (done["status"] == "failed") != (hasError && done["output"] == nil) {
					return nil, fmt.Errorf("%s: mcp_call %v, want output when completed and error when failed", typ, done)
				}
				it["output"], it["error"] = done["output"], done["error"]
			} else {
				st, _ := done["status"].(string)
				if st != "completed" && st != "incomplete" {
					return nil, fmt.Errorf("%s: status %q", typ, st)
				}
				it["status"] = st
			}
			if !reflect.DeepEqual(m["item"], any(it)) {
				return nil, fmt.Errorf("%s: item %v, accumulated %v", typ, m["item"], it)
			}
			if compaction {
				delete(it, "status")
				delete(done, "status")
			}
		case "response.completed", "response.incomplete", "response.failed":
			status := strings.TrimPrefix(typ, "response.")
			r, _ := m["response"].(map[string]any)
			if err := checkResponse(r, status); err != nil {
				return nil, fmt.Errorf("%s: %v", typ, err)
			}
			if r["id"] != resp["id"] {
				return nil, fmt.Errorf("%s: the response id changed", typ)
			}
			for i, it := range a.output {
				switch {
				case it["status"] == "in_progress":
					return nil, fmt.Errorf("%s with output %d unfinished", typ, i)
				// Open Responses: an incomplete item is the last one,
				// in an incomplete response; a failed one may leave
				// several cut.
				// (A call to a tool the gateway runs that never ran is
				// incomplete whatever the response: mcp.go.)
				case it["type"] != "mcp_call" && it["status"] == "incomplete" && status == "completed",
					it["type"] != "mcp_call" && it["status"] == "incomplete" && status == "incomplete" && i != len(a.output)-1:
					return nil, fmt.Errorf("%s with output %d incomplete", typ, i)
				}
			}
			if out, _ := r["output"].([]any); len(out) != len(a.output) || !reflect.DeepEqual(out, toAny(a.output)) {
				return nil, fmt.Errorf("%s: output %v, accumulated %v", typ, r["output"], a.output)
			}
			a.terminal, a.status = typ, status
			a.model, _ = r["model"].(string)
			a.usage, _ = r["usage"].(map[string]any)
			if d, ok := r["incomplete_details"].(map[string]any); ok {
				a.incomplete, _ = d["reason"].(string)
			}
			if e, ok := r["error"].(map[string]any); ok {
				a.errCode, _ = e["code"].(string)
				a.errMessage, _ = e["message"].(string)
			}
		case "error":
			if a.terminal != "response.failed" {
				return nil, fmt.Errorf("error event without response.failed before it")
			}
			nested, _ := m["error"].(map[string]any)
			if err := exactKeys(m, "type", "sequence_number", "code", "message", "param", "error"); err != nil {
				return nil, err
			}
			if err := exactKeys(nested, "type", "code", "message", "param"); err != nil {
				return nil, err
			}
			if str("code") != a.errCode || str("message") != a.errMessage || m["param"] != nil ||
				nested["code"] != a.errCode || nested["message"] != a.errMessage || nested["type"] != "upstream_error" {
				return nil, fmt.Errorf("error event %v does not repeat the failure %s %q", m, a.errCode, a.errMessage)
			}
			failed = true
		default:
			return nil, fmt.Errorf("unknown event %s", typ)
		}
	}
	if a.terminal == "response.failed" && !failed {
		return nil, fmt.Errorf("response.failed without the error event after it")
	}
	a.collect()
	return a, nil
}

// collect fills the texts from the output.
func (a *accumulated) collect() {
	for _, it := range a.output {
		switch it["type"] {
		case "message":
			for _, p := range it["content"].([]any) {
				a.answer += p.(map[string]any)["text"].(string)
			}
		case "reasoning":
			for _, p := range it["content"].([]any) {
				a.reasoning = append(a.reasoning, p.(map[string]any)["text"].(string))
			}
			for _, p := range it["summary"].([]any) {
				a.summary = append(a.summary, p.(map[string]any)["text"].(string))
			}
		case "function_call":
			a.calls = append(a.calls, fmt.Sprintf("%v %v %v", it["call_id"], it["name"], it["arguments"]))
		}
	}
}

// allPartsDone checks that item i's parts were all ended.
func allPartsDone(it map[string]any, i int, done map[string]bool) error {
	for _, list := range []string{"content", "summary"} {
		parts, _ := it[list].([]any)
		for j := range parts {
			if !done[fmt.Sprintf("%d/%s%d", i, list[:1], j)] {
				return fmt.Errorf("%s part %d of output %d is not done", list, j, i)
			}
		}
	}
	if (it["type"] == "function_call" || it["type"] == "mcp_call") && !done[fmt.Sprintf("%d/args", i)] {
		return fmt.Errorf("the arguments of output %d are not done", i)
	}
	return nil
}

func toAny(items []map[string]any) []any {
	out := make([]any, len(items))
	for i, it := range items {
		out[i] = it
	}
	return out
}

// checkResponse checks a Response object: the members openai-node's
// Response type requires, in their types, and status.
func checkResponse(r map[string]any, status string) error {
	if r == nil {
		return fmt.Errorf("no response")
	}
	for _, k := range []string{"id", "object", "created_at", "status", "error", "incomplete_details", "instructions",
		"metadata", "model", "output", "parallel_tool_calls", "temperature", "tool_choice", "tools", "top_p"} {
		if _, ok := r[k]; !ok {
			return fmt.Errorf("response lacks %s", k)
		}
	}
	id, _ := r["id"].(string)
	if !strings.HasPrefix(id, "resp_") || r["object"] != "response" || r["status"] != status {
		return fmt.Errorf("response id %v, object %v, status %v; want status %s", r["id"], r["object"], r["status"], status)
	}
	if _, ok := r["created_at"].(float64); !ok {
		return fmt.Errorf("created_at %v", r["created_at"])
	}
	if _, ok := r["output"].([]any); !ok {
		return fmt.Errorf("output %v", r["output"])
	}
	if _, ok := r["tools"].([]any); !ok {
		return fmt.Errorf("tools %v", r["tools"])
	}
	if (status == "failed") != (r["error"] != nil) {
		return fmt.Errorf("status %s with error %v", status, r["error"])
	}
	if e, ok := r["error"].(map[string]any); ok {
		if err := exactKeys(e, "code", "message"); err != nil {
			return err
		}
		if e["code"] == "" || e["message"] == "" {
			return fmt.Errorf("error %v", e)
		}
	}
	if (status == "incomplete") != (r["incomplete_details"] != nil) {
		return fmt.Errorf("status %s with incomplete_details %v", status, r["incomplete_details"])
	}
	if u, ok := r["usage"].(map[string]any); ok {
		// Codex requires these once usage is there.
		for _, k := range []string{"input_tokens", "output_tokens", "total_tokens"} {
			if _, ok := u[k].(float64); !ok {
				return fmt.Errorf("usage lacks %s: %v", k, u)
			}
		}
		if d, _ := u["input_tokens_details"].(map[string]any); d["cached_tokens"] == nil {
			return fmt.Errorf("usage lacks input_tokens_details.cached_tokens: %v", u)
		}
		if d, _ := u["output_tokens_details"].(map[string]any); d["reasoning_tokens"] == nil {
			return fmt.Errorf("usage lacks output_tokens_details.reasoning_tokens: %v", u)
		}
	} else if r["usage"] != nil {
		return fmt.Errorf("usage %v", r["usage"])
	}
	for _, o := range r["output"].([]any) {
		it, _ := o.(map[string]any)
		if err := checkItem(it, true); err != nil {
			return err
		}
	}
	return nil
}

// checkItem checks an output item's members: a message, a reasoning item
// or a function call, each with the members its type requires.
func checkItem(it map[string]any, whole bool) error {
	id, _ := it["id"].(string)
	var err error
	switch it["type"] {
	case "message":
		err = exactKeys(it, "id", "type", "status", "role", "content")
		if err == nil && (!strings.HasPrefix(id, "msg_") || it["role"] != "assistant") {
			err = fmt.Errorf("message %v", it)
		}
		if err == nil && whole {
			parts, _ := it["content"].([]any)
			if len(parts) != 1 {
				err = fmt.Errorf("message with %d parts: %v", len(parts), it)
			} else if p, _ := parts[0].(map[string]any); exactKeys(p, "type", "text", "annotations", "logprobs") != nil {
				err = fmt.Errorf("message part %v", p)
			}
		}
	case "reasoning":
		err = exactKeys(it, "id", "type", "status", "summary", "content")
		if err == nil && !strings.HasPrefix(id, "rs_") {
			err = fmt.Errorf("reasoning %v", it)
		}
	case "function_call":
		err = exactKeys(it, "id", "type", "status", "call_id", "name", "arguments")
		if c, _ := it["call_id"].(string); err == nil && (!strings.HasPrefix(id, "fc_") || c == "" || it["name"] == "") {
			err = fmt.Errorf("function_call %v", it)
		}
		if _, ok := it["arguments"].(string); err == nil && !ok {
			err = fmt.Errorf("function_call arguments %v", it)
		}
	case "compaction":
		keys := []string{"id", "type", "encrypted_content", "created_by"}
		if !whole {
			keys = append(keys, "status") // tracked as in_progress while it is open
		}
		err = exactKeys(it, keys...)
		if c, _ := it["encrypted_content"].(string); err == nil && (!strings.HasPrefix(id, "cmp_") || whole && c == "") {
			err = fmt.Errorf("compaction %v", it)
		}
	case "mcp_call":
		err = exactKeys(it, "id", "type", "status", "server_label", "name", "arguments", "approval_request_id", "output", "error")
		if _, ok := it["arguments"].(string); err == nil && (!strings.HasPrefix(id, "mcp_") || it["name"] == "" || !ok) {
			err = fmt.Errorf("mcp_call %v", it)
		}
	case "mcp_approval_request":
		keys := []string{"id", "type", "server_label", "name", "arguments"}
		if !whole {
			keys = append(keys, "status") // tracked as in_progress while it is open
		}
		err = exactKeys(it, keys...)
		if _, ok := it["arguments"].(string); err == nil && (id == "" || it["name"] == "" || !ok) {
			err = fmt.Errorf("mcp_approval_request %v", it)
		}
	default:
		err = fmt.Errorf("output item of type %v", it["type"])
	}
	return err
}

func exactKeys(m map[string]any, keys ...string) error {
	if len(m) != len(keys) {
		return fmt.Errorf("fields %v, want %v", m, keys)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("fields %v lack %s", m, k)
		}
	}
	return nil
}

// checkWhole checks a response that is one JSON body: a Response with
// status 200, completed or incomplete, or an error object with 502/504.
// It returns the body decoded.
func checkWhole(out []byte, status int) (map[string]any, error) {
	if len(out) == 0 || out[len(out)-1] != '\n' || strings.Count(string(out), "\n") != 1 {
		return nil, fmt.Errorf("body is not one line: %q", out)
	}
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(string(out)))
	if err := dec.Decode(&m); err != nil || dec.More() {
		return nil, fmt.Errorf("body is not one JSON object: %v: %s", err, out)
	}
	if e, ok := m["error"].(map[string]any); ok && len(m) == 1 {
		if status != http.StatusBadGateway && status != http.StatusGatewayTimeout {
			return nil, fmt.Errorf("error body with status %d", status)
		}
		if err := exactKeys(e, "type", "code", "message", "param"); err != nil {
			return nil, err
		}
		if e["code"] == "" || e["message"] == "" || e["type"] != "upstream_error" {
			return nil, fmt.Errorf("error body: %s", out)
		}
		return m, nil
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("response with status %d", status)
	}
	st, _ := m["status"].(string)
	if st != "completed" && st != "incomplete" {
		return nil, fmt.Errorf("whole response with status %q", st)
	}
	if err := checkResponse(m, st); err != nil {
		return nil, err
	}
	items := m["output"].([]any)
	for i, o := range items {
		// Only the last item of an incomplete response may be cut; a call
		// to a tool the gateway runs may have failed; an approval request
		// has no status.
		if it := o.(map[string]any); it["type"] != "mcp_approval_request" && it["status"] != "completed" && !(it["status"] == "incomplete" && st == "incomplete" && i == len(items)-1) &&
			(it["type"] != "mcp_call" || it["status"] == "in_progress") {
			return nil, fmt.Errorf("whole response with an unfinished item: %v", o)
		}
	}
	return m, nil
}
