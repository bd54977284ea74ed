package wiretest

import (
	"fmt"
	"math"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// aguiShapes are the fields of the AG-UI events an agent streams to
// @ag-ui/client (the @ag-ui/core 1.0.0 zod schemas, whose fields the
// 0.0.59 schemas of @copilotkit/runtime's client declare too): the
// required ones, then after "?" the optional ones, each with its type (s
// string, o object, a array, b boolean, * any value). Every event may also
// carry timestamp (an integer), metadata (an object) and rawEvent. 1.0
// strips any other field with a warning, so a field not listed is an
// error; so is an event type not listed: 0.0.59's schemas refuse one it
// does not know, ending the run.
var aguiShapes = map[string]string{
	"RUN_STARTED":               "threadId:s runId:s ? protocolVersion:s parentRunId:s input:o",
	"RUN_FINISHED":              "threadId:s runId:s ? result:* outcome:o usage:a",
	"RUN_ERROR":                 "message:s ? code:s usage:a",
	"STEP_STARTED":              "stepName:s",
	"STEP_FINISHED":             "stepName:s",
	"TEXT_MESSAGE_START":        "messageId:s ? role:s name:s",
	"TEXT_MESSAGE_CONTENT":      "messageId:s delta:s",
	"TEXT_MESSAGE_END":          "messageId:s",
	"TOOL_CALL_START":           "toolCallId:s toolCallName:s ? parentMessageId:s",
	"TOOL_CALL_ARGS":            "toolCallId:s delta:s",
	"TOOL_CALL_END":             "toolCallId:s",
	"TOOL_CALL_RESULT":          "messageId:s toolCallId:s content:s ? role:s",
	"REASONING_START":           "messageId:s",
	"REASONING_MESSAGE_START":   "messageId:s role:s",
	"REASONING_MESSAGE_CONTENT": "messageId:s delta:s",
	"REASONING_MESSAGE_END":     "messageId:s",
	"REASONING_END":             "messageId:s",
	"ACTIVITY_SNAPSHOT":         "messageId:s activityType:s content:o ? replace:b",
	"ACTIVITY_DELTA":            "messageId:s activityType:s patch:a",
	"CUSTOM":                    "name:s value:*",
}

// aguiUsageFields are the fields of a TokenUsage entry both versions
// declare (1.0's cacheWriteInputTokens is not in 0.0.59's).
var aguiUsageFields = map[string]bool{
	"provider": true, "model": true, "inputTokens": true, "outputTokens": true, "totalTokens": true,
	"reasoningTokens": true, "cachedInputTokens": true,
}

// aguiClient reads an AG-UI run as @ag-ui/client's HttpAgent does with
// event verification on (1.0.0, and 0.0.59 as @copilotkit/runtime pins
// it), and sends a RunAgentInput. Reasoning messages carry every piece of
// reasoning, phases under their titles.
var aguiClient = &Client{
	Protocol: "agui", RequestFormat: "agui",
	Request: `{"threadId":"thread-1","runId":"run-1","messages":[{"id":"m1","role":"user","content":"hi"}],` +
		`"tools":[],"context":[],"state":{},"forwardedProps":{}}`,
	Missing: [3]string{`{"threadId":"t","runId":"r"}`, "missing_messages", "messages"},
	Codes:   true, Heartbeat: commentBeat, CheckReasoning: reasoningInOrder,
	stream: checkAGUI,
}

// aguiRun is what checkAGUI tracks of one run.
type aguiRun struct {
	threadID, runID string
	// ids holds every message id used, by kind ("text", "reasoning",
	// "span", "activity", "result"): ids are unique across kinds, and
	// parentMessageId names a text message's.
	ids      map[string]string
	text     map[string]bool // open text messages
	spans    map[string]bool // open reasoning spans
	thoughts map[string]bool // open reasoning messages
	steps    map[string]bool // active steps
	// calls maps a toolCallId to its state: 1 open, 2 ended, 3 answered;
	// names keeps its name, order the order calls started.
	calls    map[string]int
	names    map[string]string
	order    []string
	activity map[string]string // activity message id: its type
}

// checkAGUI checks an AG-UI run streamed over SSE, as HttpAgent parses and
// verifies it: data lines only (keep-alive comments aside; the parser
// splits events on LF LF), each one JSON object, an event the schemas
// know with exactly their fields (aguiShapes; THINKING_* is gone in 1.0);
// RUN_STARTED first and once, RUN_FINISHED (its threadId and runId
// RUN_STARTED's) or RUN_ERROR last, nothing after it. Text messages: a
// START with an id never used, CONTENT (non-empty, the spec says) and END
// only while open. Reasoning: spans REASONING_START … REASONING_END,
// messages REASONING_MESSAGE_START … END (role "reasoning") inside an open
// span, ended before it ends. Tool calls: START with an id never used,
// ARGS and END while open, one TOOL_CALL_RESULT (role "tool") for an ended
// call. Steps: STEP_FINISHED names an active step. Message ids are unique
// across text, reasoning, activity and tool results (the client keeps
// them in one list), a tool call's parentMessageId is no other kind's.
// ACTIVITY_DELTA patches an activity message the stream made, with valid
// JSON Patch operations. RUN_FINISHED only with nothing open: no text or
// reasoning message, span, tool call or step. CUSTOM events have a name.
func checkAGUI(out []byte, _ transform.Meta) (Seen, error) {
	var seen Seen
	if strings.Contains(string(out), "\r") {
		return seen, fmt.Errorf("a CR in the stream: HttpAgent splits events on LF LF only")
	}
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return seen, err
	}
	r := aguiRun{ids: map[string]string{}, text: map[string]bool{}, spans: map[string]bool{},
		thoughts: map[string]bool{}, steps: map[string]bool{}, calls: map[string]int{},
		names: map[string]string{}, activity: map[string]string{}}
	var answer, reasoning strings.Builder
	started, ended := false, false
	for i, e := range evs {
		if e.Comment {
			continue
		}
		m, err := e.DecodeData()
		typ, _ := m["type"].(string)
		fail := func(format string, args ...any) (Seen, error) {
			return seen, fmt.Errorf("event %d %s: %s", i, typ, fmt.Sprintf(format, args...))
		}
		if e.Name != "" {
			return fail("an event: line; AG-UI's SSE carries data lines only")
		}
		if err != nil {
			return seen, err
		}
		if ended {
			return fail("after the run ended")
		}
		if err := checkAGUIShape(typ, m); err != nil {
			return fail("%v", err)
		}
		if (typ == "RUN_STARTED") != !started {
			return fail("RUN_STARTED comes first, once")
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		id := str("messageId")
		switch typ {
		case "RUN_STARTED":
			started = true
			r.threadID, r.runID = str("threadId"), str("runId")
		case "TEXT_MESSAGE_START":
			if err := r.newID(id, "text"); err != nil {
				return fail("%v", err)
			}
			if role := str("role"); role != "" && role != "assistant" && role != "user" && role != "system" && role != "developer" {
				return fail("role %q", role)
			}
			r.text[id] = true
		case "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END":
			if !r.text[id] {
				return fail("for text message %q, which is not open", id)
			}
			if typ == "TEXT_MESSAGE_END" {
				delete(r.text, id)
				break
			}
			if str("delta") == "" {
				return fail("an empty delta")
			}
			answer.WriteString(str("delta"))
		case "REASONING_START":
			if err := r.newID(id, "span"); err != nil {
				return fail("%v", err)
			}
			r.spans[id] = true
		case "REASONING_MESSAGE_START":
			if len(r.spans) == 0 {
				return fail("outside a reasoning span")
			}
			if str("role") != "reasoning" {
				return fail(`role %q, want "reasoning"`, str("role"))
			}
			if err := r.newID(id, "reasoning"); err != nil {
				return fail("%v", err)
			}
			r.thoughts[id] = true
		case "REASONING_MESSAGE_CONTENT", "REASONING_MESSAGE_END":
			if !r.thoughts[id] {
				return fail("for reasoning message %q, which is not open", id)
			}
			if typ == "REASONING_MESSAGE_END" {
				delete(r.thoughts, id)
				break
			}
			if str("delta") == "" {
				return fail("an empty delta")
			}
			reasoning.WriteString(str("delta"))
		case "REASONING_END":
			if !r.spans[id] || len(r.thoughts) > 0 {
				return fail("for span %q, which is not open or has a message open: %v", id, r.thoughts)
			}
			delete(r.spans, id)
		case "TOOL_CALL_START":
			call := str("toolCallId")
			if _, used := r.calls[call]; used || call == "" {
				return fail("toolCallId %q empty or used before", call)
			}
			if p, ok := m["parentMessageId"].(string); ok && r.ids[p] != "" && r.ids[p] != "text" {
				return fail("parentMessageId %q is a %s message's", p, r.ids[p])
			}
			r.calls[call], r.names[call] = 1, str("toolCallName")
			r.order = append(r.order, call)
		case "TOOL_CALL_ARGS", "TOOL_CALL_END":
			call := str("toolCallId")
			if r.calls[call] != 1 {
				return fail("for call %q, which is not open", call)
			}
			if typ == "TOOL_CALL_END" {
				r.calls[call] = 2
			}
		case "TOOL_CALL_RESULT":
			call := str("toolCallId")
			if r.calls[call] != 2 {
				return fail("for call %q, which is not ended or has its result", call)
			}
			if role, ok := m["role"]; ok && role != "tool" {
				return fail(`role %v, want "tool"`, role)
			}
			if err := r.newID(id, "result"); err != nil {
				return fail("%v", err)
			}
			r.calls[call] = 3
		case "STEP_STARTED", "STEP_FINISHED":
			name := str("stepName")
			if r.steps[name] == (typ == "STEP_STARTED") {
				return fail("step %q (active: %v)", name, r.steps)
			}
			if typ == "STEP_STARTED" {
				r.steps[name] = true
			} else {
				delete(r.steps, name)
			}
		case "ACTIVITY_SNAPSHOT":
			if kind, used := r.ids[id]; used && kind != "activity" {
				return fail("messageId %q is a %s message's", id, kind)
			}
			r.ids[id] = "activity"
			r.activity[id] = str("activityType")
		case "ACTIVITY_DELTA":
			if t, ok := r.activity[id]; !ok || t != str("activityType") {
				return fail("for activity %q, which no snapshot of type %q made", id, str("activityType"))
			}
			if err := checkJSONPatch(m["patch"]); err != nil {
				return fail("%v", err)
			}
		case "CUSTOM":
			if str("name") == "" {
				return fail("without a name")
			}
			if str("name") == "llmstream.violation" {
				v, _ := m["value"].(map[string]any)
				code, _ := v["code"].(string)
				seen.Violations = append(seen.Violations, code)
			}
		case "RUN_FINISHED":
			if str("threadId") != r.threadID || str("runId") != r.runID {
				return fail("threadId %q runId %q, RUN_STARTED said %q %q", str("threadId"), str("runId"), r.threadID, r.runID)
			}
			if open := r.open(); open != "" {
				return fail("while %s", open)
			}
			ended = true
		case "RUN_ERROR":
			ended = true
			seen.Failed = true
			seen.Code, seen.Message = str("code"), str("message")
			if seen.Message == "" {
				return fail("without a message")
			}
		}
	}
	if !ended {
		return seen, fmt.Errorf("the run did not end with RUN_FINISHED or RUN_ERROR")
	}
	for _, call := range r.order {
		if r.calls[call] != 3 {
			seen.ToolCalls = append(seen.ToolCalls, r.names[call])
		}
	}
	seen.ToolUse = len(seen.ToolCalls) > 0
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	return seen, nil
}

// newID records a message id of kind, which must be new.
func (r *aguiRun) newID(id, kind string) error {
	if id == "" {
		return fmt.Errorf("an empty messageId")
	}
	if prev, used := r.ids[id]; used {
		return fmt.Errorf("messageId %q used before (by a %s message)", id, prev)
	}
	r.ids[id] = kind
	return nil
}

// open names what is still open, "" for nothing.
func (r *aguiRun) open() string {
	var open []string
	for what, m := range map[string]map[string]bool{"text messages": r.text, "reasoning messages": r.thoughts,
		"reasoning spans": r.spans, "steps": r.steps} {
		if len(m) > 0 {
			open = append(open, fmt.Sprintf("%s %v are open", what, m))
		}
	}
	for call, st := range r.calls {
		if st == 1 {
			open = append(open, "tool call "+call+" is open")
		}
	}
	return strings.Join(open, ", ")
}

// checkAGUIShape checks event m of type typ against aguiShapes.
func checkAGUIShape(typ string, m map[string]any) error {
	if strings.HasPrefix(typ, "THINKING_") {
		return fmt.Errorf("the deprecated THINKING_* events are gone in AG-UI 1.0: REASONING_*")
	}
	shape, ok := aguiShapes[typ]
	if !ok {
		return fmt.Errorf("not an event type of the AG-UI schemas")
	}
	required, optional, _ := strings.Cut(shape, "?")
	fields := map[string]string{"type": "s", "timestamp": "i", "metadata": "o", "rawEvent": "*"}
	for _, f := range strings.Fields(required) {
		name, kind, _ := strings.Cut(f, ":")
		if _, ok := m[name]; !ok {
			return fmt.Errorf("lacks %s: %v", name, m)
		}
		fields[name] = kind
	}
	for _, f := range strings.Fields(optional) {
		name, kind, _ := strings.Cut(f, ":")
		fields[name] = kind
	}
	for k, v := range m {
		kind, ok := fields[k]
		if !ok {
			return fmt.Errorf("has %s, which the schemas do not declare (1.0 strips it)", k)
		}
		if err := aguiType(k, v, kind); err != nil {
			return err
		}
	}
	if md, ok := m["metadata"].(map[string]any); ok {
		if _, reserved := md["ag-ui"]; reserved {
			return fmt.Errorf("metadata uses the reserved key ag-ui")
		}
	}
	if o, ok := m["outcome"].(map[string]any); ok && (o["type"] != "success" || len(o) != 1) {
		return fmt.Errorf("outcome %v: 0.0.59 takes {type: \"success\"} exactly", o)
	}
	if us, ok := m["usage"].([]any); ok {
		for _, u := range us {
			entry, ok := u.(map[string]any)
			if !ok {
				return fmt.Errorf("a usage entry that is no object")
			}
			for k, v := range entry {
				if !aguiUsageFields[k] {
					return fmt.Errorf("usage has %s, which the TokenUsage schemas do not both declare", k)
				}
				if k == "provider" || k == "model" {
					if _, ok := v.(string); !ok {
						return fmt.Errorf("usage.%s is not a string", k)
					}
				} else if n, ok := v.(float64); !ok || n < 0 || n != math.Trunc(n) {
					return fmt.Errorf("usage.%s = %v is not a non-negative integer", k, v)
				}
			}
		}
	}
	return nil
}

// aguiType checks field k's value v against kind (aguiShapes).
func aguiType(k string, v any, kind string) error {
	ok := true
	switch kind {
	case "s":
		_, ok = v.(string)
	case "o":
		_, ok = v.(map[string]any)
	case "a":
		_, ok = v.([]any)
	case "b":
		_, ok = v.(bool)
	case "i":
		n, isNum := v.(float64)
		ok = isNum && n == math.Trunc(n)
	case "*":
		ok = k != "rawEvent" || v != nil
	}
	if !ok {
		return fmt.Errorf("%s = %v is not of its type (%s)", k, v, kind)
	}
	return nil
}

// checkJSONPatch checks an RFC 6902 patch: operations with a known op and
// a JSON Pointer path, and a value where the op takes one.
func checkJSONPatch(v any) error {
	ops, _ := v.([]any)
	for _, o := range ops {
		op, _ := o.(map[string]any)
		path, isPath := op["path"].(string)
		if !isPath || path != "" && !strings.HasPrefix(path, "/") {
			return fmt.Errorf("patch operation %v without a JSON Pointer path", op)
		}
		switch op["op"] {
		case "add", "replace", "test":
			if _, ok := op["value"]; !ok {
				return fmt.Errorf("patch operation %v without a value", op)
			}
		case "remove", "move", "copy":
		default:
			return fmt.Errorf("patch operation %v: unknown op", op)
		}
	}
	return nil
}
