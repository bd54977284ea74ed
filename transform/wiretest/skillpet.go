package wiretest

import (
	"fmt"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// skillpetShapes are the data fields of each skillpet event (specs/002
// §3.2–§3.8): the required ones, then after "?" the optional ones.
var skillpetShapes = map[string]string{
	"thinking":            "content",
	"thinking_done":       "",
	"token":               "content",
	"status":              "message",
	"round_start":         "round",
	"tool_start":          "id name label ? args agentId",
	"tool_result":         "id name label mode status message ? options",
	"tool_args_heartbeat": "status",
	"ask_user":            "questions",
	"resource":            "resourceType data ? fallbackText",
	"done":                "conversationId",
	"error":               "message",
}

// skillpetClient reads skillpet SSE and sends the skillpet POST /stream
// body (specs/002 §2.3), whose errors are {"error": CODE, "message": …}:
// every failure before the stream as CHAT_FAILED, a bad request as
// MISSING_PARAMS or its upper-case code. Its thinking events show the
// reasoning, phases under their titles; its request turns thinking on,
// as the component's toggle does (specs/002 §3.2: thinking is sent only
// when enableThinking is true).
var skillpetClient = &Client{
	Protocol: "skillpet", Request: `{"projectId":"p1","message":"hi","enableThinking":true}`, RequestFormat: "skillpet",
	Missing:     [3]string{`{"message":"hi"}`, "MISSING_PARAMS", "projectId"},
	RefusalCode: func(string) string { return "CHAT_FAILED" },
	ErrorCode: func(code string) string {
		if code == "invalid_json" { // specs/002 §2.3 knows no other 400
			return "MISSING_PARAMS"
		}
		return strings.ToUpper(code)
	},
	Heartbeat: commentBeat, CheckReasoning: reasoningInOrder,
	stream: checkSkillpet, body: readFlatError,
}

// checkSkillpet checks a skillpet stream (specs/002 §3): every event one
// of the spec's with exactly its fields, data one line of JSON,
// keep-alives as comments, and done or error once and last. Within a round
// (the stream, or what follows a round_start) the thinking comes first:
// thinking events, then thinking_done, then the reply (token, tool_start,
// ask_user, resource). So thinking_done comes only after thinking, at
// most once, before the reply and the end if thinking was sent (§3.2
// "标志思考阶段结束，后续 token 为正式回复"), and no thinking follows
// thinking_done or the reply (CONTRACT.md §7). status and
// tool_args_heartbeat may come anywhere. tool_start ids are unique: the
// client matches tool_result to them, so a tool_result (§3.3: mode auto,
// interactive or ask_user; status completed, error or awaiting_user) is
// for a tool_start before it, once, and is part of the reply like it.
func checkSkillpet(out []byte, _ transform.Meta) (Seen, error) {
	var seen Seen
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return seen, err
	}
	var answer, reasoning strings.Builder
	thinking, thinkingDone, replied := false, false, false
	round := 1.0
	tools, results := map[string]bool{}, map[string]bool{}
	terminal := false
	for i, e := range evs {
		if e.Comment {
			continue
		}
		fail := func(format string, args ...any) (Seen, error) {
			return seen, fmt.Errorf("event %d %s: %s (specs/002 §3)", i, e.Name, fmt.Sprintf(format, args...))
		}
		if terminal {
			return fail("after the terminal event")
		}
		shape, ok := skillpetShapes[e.Name]
		if !ok {
			return fail("no skillpet event")
		}
		m, err := e.DecodeData()
		if err != nil {
			return seen, err
		}
		if err := checkFields(m, shape); err != nil {
			return fail("%v", err)
		}
		// endThinking checks what the reply or the end needs of the
		// thinking before it.
		endThinking := func() error {
			if thinking && !thinkingDone {
				return fmt.Errorf("thinking was sent and no thinking_done ended it")
			}
			return nil
		}
		switch e.Name {
		case "thinking":
			if thinkingDone || replied {
				return fail("thinking after thinking_done or the reply, in the same round")
			}
			text, ok := m["content"].(string)
			if !ok {
				return fail("content is no string")
			}
			reasoning.WriteString(text)
			thinking = true
		case "thinking_done":
			if !thinking || thinkingDone {
				return fail("thinking_done without thinking before it, or twice")
			}
			thinkingDone = true
		case "token", "tool_start", "tool_result", "ask_user", "resource":
			if err := endThinking(); err != nil {
				return fail("%v", err)
			}
			replied = true
			switch e.Name {
			case "token":
				text, ok := m["content"].(string)
				if !ok {
					return fail("content is no string")
				}
				answer.WriteString(text)
			case "tool_start":
				id, _ := m["id"].(string)
				if id == "" || tools[id] {
					return fail("tool_start id %q empty or repeated", id)
				}
				tools[id] = true
				name, _ := m["name"].(string)
				seen.ToolCalls = append(seen.ToolCalls, name)
				if args, ok := m["args"]; ok {
					if _, ok := args.(map[string]any); !ok {
						return fail("args is no object")
					}
				}
			case "tool_result":
				id, _ := m["id"].(string)
				if !tools[id] || results[id] {
					return fail("tool_result for %q, which had no tool_start, or twice", id)
				}
				results[id] = true
				mode, status := m["mode"], m["status"]
				if mode != "auto" && mode != "interactive" && mode != "ask_user" ||
					status != "completed" && status != "error" && status != "awaiting_user" {
					return fail("mode %v status %v", mode, status)
				}
				for _, k := range []string{"name", "label", "message"} {
					if _, ok := m[k].(string); !ok {
						return fail("%s is no string", k)
					}
				}
			case "ask_user":
				if err := checkQuestions(m["questions"]); err != nil {
					return fail("%v", err)
				}
				seen.ToolCalls = append(seen.ToolCalls, "ask_user")
			}
		case "round_start":
			if n, _ := m["round"].(float64); n != round+1 {
				return fail("round %v after round %v", m["round"], round)
			}
			if err := endThinking(); err != nil {
				return fail("%v", err)
			}
			round++
			thinking, thinkingDone, replied = false, false, false
		case "tool_args_heartbeat":
			if m["status"] != "generating_tool_args" {
				return fail("status %v", m["status"])
			}
		case "status":
		case "done", "error":
			terminal = true
			if seen.Failed = e.Name == "error"; seen.Failed {
				seen.Message, _ = m["message"].(string)
			}
			if err := endThinking(); err != nil {
				return fail("%v", err)
			}
			for _, v := range m {
				if _, ok := v.(string); !ok {
					return fail("field is no string")
				}
			}
		}
	}
	if !terminal {
		return seen, fmt.Errorf("no done or error")
	}
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	seen.ToolUse = len(seen.ToolCalls) > 0
	return seen, nil
}

// checkFields reports whether m has exactly the fields of shape.
func checkFields(m map[string]any, shape string) error {
	req, opt, _ := strings.Cut(shape, "?")
	allowed := map[string]bool{}
	for _, k := range strings.Fields(req) {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("lacks %s", k)
		}
		allowed[k] = true
	}
	for _, k := range strings.Fields(opt) {
		allowed[k] = true
	}
	for k := range m {
		if !allowed[k] {
			return fmt.Errorf("field %s is not the spec's", k)
		}
	}
	return nil
}

// checkQuestions checks ask_user's questions (specs/002 §3.4
// AskUserQuestion): id and prompt strings, options {id, label} that may be
// empty only when allowFreeText is true. A clarification's question may
// carry its frontend hint (specs/004 §7.2 ClarifyPayload.hint), a string
// that a component following specs/002 ignores.
func checkQuestions(v any) error {
	qs, ok := v.([]any)
	if !ok {
		return fmt.Errorf("questions is not an array")
	}
	for _, q := range qs {
		m, ok := q.(map[string]any)
		if !ok {
			return fmt.Errorf("a question is not an object")
		}
		if err := checkFields(m, "id prompt options ? allowMultiple allowFreeText freeTextPlaceholder hint"); err != nil {
			return fmt.Errorf("question: %v", err)
		}
		if h, ok := m["hint"]; ok {
			if _, isStr := h.(string); !isStr || m["id"] != "clarify" {
				return fmt.Errorf("question: a hint that is not a clarification's string: %v", m)
			}
		}
		_, id := m["id"].(string)
		_, prompt := m["prompt"].(string)
		opts, isList := m["options"].([]any)
		if !id || !prompt || !isList || len(opts) == 0 && m["allowFreeText"] != true {
			return fmt.Errorf("question without id, prompt, or options when free text is not allowed: %v", m)
		}
		for _, o := range opts {
			om, _ := o.(map[string]any)
			if err := checkFields(om, "id label"); err != nil {
				return fmt.Errorf("option: %v", err)
			}
		}
	}
	return nil
}
