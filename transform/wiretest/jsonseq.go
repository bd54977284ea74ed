package wiretest

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// The positions of a JSONSeq stream in the order of specs/001 §2:
//
//  1. (optional) serp_summary
//  2. thinking_start
//  3. phase_start(id=1, title)          4. phase_delta(id=1)*
//  5. phase_start(id=2, title) (opt.)   6. phase_delta(id=2)*
//  7. thinking_end
//  8. final_delta (one or more)
//  9. (optional) serp_queries
//  10. final_end
//
// The thinking section (items 2–7) may be absent as a whole: CONTRACT.md
// §5 sends a text reply as final_deltas and final_end only. When present it
// holds at least one phase (item 3 is not optional).
type seqPos uint8

const (
	posStart    seqPos = iota
	posSummary         // after serp_summary
	posThinking        // after thinking_start, before its first phase
	posPhase           // a phase open
	posThought         // after thinking_end
	posFinal           // after a final_delta
	posQueries         // after serp_queries
	posEnded           // after final_end
)

// jsonseqClient reads JSONSeq events. Of the reasoning it shows the
// ThinkingML phases, as phase_delta; free reasoning (native, or <think>)
// has no place in it (specs/001 §2), and an encoder that holds answer text
// behind reasoning past max_block reports leaving the rest out.
var jsonseqClient = &Client{
	Protocol: "jsonseq", Request: chatRequest, Missing: missingMessages,
	Codes: true, Heartbeat: namedBeat, stream: checkJSONSeq,
	CheckReasoning: func(seen Seen, found Found) error {
		all := strings.Join(found.Phases, "")
		if found.LeftOut && !strings.HasPrefix(all, seen.Reasoning) || !found.LeftOut && seen.Reasoning != all {
			return fmt.Errorf("phase text on the wire\n %q\nin the reply\n %q (left out: %v)", seen.Reasoning, all, found.LeftOut)
		}
		return nil
	},
}

// checkJSONSeq checks a JSONSeq stream: the event order of specs/001 §2
// (above) with the field rules of §1 and §6 (phase ids 1, 2, 3, … in
// order, titles not empty, phase_delta for the phase last started,
// serp_queries at most 5, unique, each at most 80 characters), the extra
// events tool_call, clarify and artifacts anywhere before final_end
// (CONTRACT.md §5), nothing but system events after final_end, and the
// system events of specs/001 §3 as gymbro has them: completed only after
// final_end, with reply_len the characters of the final_delta texts; an
// error may end the stream anywhere. The agent loop (CONTRACT.md §12) adds
// the extra events tool_progress and tool_result, for a server call's
// tool_call (one with a server field) before them, the result once, and
// round_start {round: 2, 3, …}, all before final_end.
func checkJSONSeq(out []byte, meta transform.Meta) (Seen, error) {
	var seen Seen
	evs, err := encodertest.ReadGymBroSSE(out, meta)
	if err != nil {
		return seen, err
	}
	var answer, reasoning strings.Builder
	pos, phase, state := posStart, 0, -1
	terminal := false
	serverCalls := map[string]int{} // id: 1 called, 2 resulted
	round := 1.0
	for i, e := range evs {
		m := e.Fields
		fail := func(format string, args ...any) (Seen, error) {
			return seen, fmt.Errorf("event %d %s: %s (specs/001 §2)", i, e.Name, fmt.Sprintf(format, args...))
		}
		switch e.Name {
		case "serp_summary":
			if pos != posStart {
				return fail("serp_summary comes first, once")
			}
			if _, ok := m["text"].(string); !ok {
				return fail("no text")
			}
			pos = posSummary
		case "thinking_start":
			if pos != posStart && pos != posSummary {
				return fail("thinking_start after %s", posName(pos))
			}
			pos = posThinking
		case "phase_start":
			if pos != posThinking && pos != posPhase {
				return fail("phase_start outside thinking_start … thinking_end")
			}
			id, _ := m["id"].(float64)
			if id != float64(phase+1) {
				return fail("phase id %v, want %d (ids are 1, 2, 3, …, specs/001 §1.2)", m["id"], phase+1)
			}
			if title, _ := m["title"].(string); title == "" {
				return fail("empty title (specs/001 §1.2)")
			}
			phase, pos = phase+1, posPhase
		case "phase_delta":
			if pos != posPhase || m["id"] != float64(phase) {
				return fail("phase_delta id %v, but the phase last started is %d", m["id"], phase)
			}
			text, ok := m["text"].(string)
			if !ok {
				return fail("no text")
			}
			reasoning.WriteString(text)
		case "thinking_end":
			if pos != posPhase {
				return fail("thinking_end after %s: a thinking section holds a phase", posName(pos))
			}
			pos = posThought
		case "final_delta":
			switch pos {
			case posThinking, posPhase:
				return fail("final_delta before thinking_end")
			case posQueries:
				return fail("final_delta after serp_queries")
			case posEnded:
				return fail("final_delta after final_end")
			}
			text, ok := m["text"].(string)
			if !ok {
				return fail("no text")
			}
			answer.WriteString(text)
			pos = posFinal
		case "serp_queries":
			if pos != posFinal {
				return fail("serp_queries after %s: it follows the final_deltas, once", posName(pos))
			}
			if err := checkQueries(m["queries"]); err != nil {
				return fail("%v", err)
			}
			pos = posQueries
		case "final_end":
			if pos != posFinal && pos != posQueries {
				return fail("final_end after %s: one final_delta or more comes first", posName(pos))
			}
			pos = posEnded
		case "tool_call", "clarify", "artifacts":
			if pos == posEnded {
				return fail("after final_end")
			}
			if err := checkExtra(e.Name, m); err != nil {
				return fail("%v", err)
			}
			if _, ok := m["server"]; ok && e.Name == "tool_call" {
				id := m["id"].(string)
				if serverCalls[id] != 0 {
					return fail("server call %q twice", id)
				}
				serverCalls[id] = 1
			} else if e.Name == "tool_call" {
				name, _ := m["name"].(string)
				seen.ToolCalls = append(seen.ToolCalls, name)
			}
		case "tool_progress", "tool_result":
			id, _ := m["id"].(string)
			if pos == posEnded || serverCalls[id] != 1 {
				return fail("for %q, which is no running server call, or after final_end", id)
			}
			if _, ok := m["name"].(string); !ok {
				return fail("no name")
			}
			if e.Name == "tool_result" {
				if _, ok := m["output"].(string); !ok || m["status"] != "completed" && m["status"] != "error" {
					return fail("status %v, output %v", m["status"], m["output"])
				}
				serverCalls[id] = 2
			}
		case "round_start":
			if pos == posEnded || m["round"] != round+1 {
				return fail("round %v after round %v, or after final_end", m["round"], round)
			}
			round++
		case "status":
			if err := nextState(&state, m["state"]); err != nil {
				return fail("%v", err)
			}
		case "heartbeat":
		case "completed":
			terminal = true
			if pos != posEnded {
				return fail("completed before final_end")
			}
			if n := float64(utf8.RuneCountInString(answer.String())); m["reply_len"] != n {
				return fail("reply_len %v, want %v", m["reply_len"], n)
			}
			if seen.Violations, seen.ToolUse, err = violations(m); err != nil {
				return seen, err
			}
		case "error":
			terminal = true
			if err := checkError(m, &seen); err != nil {
				return seen, err
			}
		default:
			return fail("no JSONSeq event")
		}
	}
	if !terminal {
		return seen, fmt.Errorf("no terminal event")
	}
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	return seen, nil
}

func posName(p seqPos) string {
	return [...]string{"the start", "serp_summary", "thinking_start", "a phase", "thinking_end",
		"final_delta", "serp_queries", "final_end"}[p]
}

// checkQueries checks serp_queries.queries (specs/001 §1.1): at most 5
// strings, no duplicates, none over 80 characters.
func checkQueries(v any) error {
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("queries is not an array")
	}
	if len(list) > 5 {
		return fmt.Errorf("%d queries, at most 5", len(list))
	}
	seen := map[string]bool{}
	for _, q := range list {
		s, ok := q.(string)
		if !ok || seen[s] || utf8.RuneCountInString(s) > 80 {
			return fmt.Errorf("query %v is no string, repeated or over 80 characters", q)
		}
		seen[s] = true
	}
	return nil
}

// checkExtra checks the extra events of CONTRACT.md §5.
func checkExtra(name string, m map[string]any) error {
	switch name {
	case "tool_call":
		_, id := m["id"].(string)
		_, n := m["name"].(string)
		if _, args := m["args"]; !id || !n || !args {
			return fmt.Errorf("tool_call needs id, name and args")
		}
	case "clarify":
		_, q := m["question"].(string)
		_, o := m["options"].([]any)
		if !q || !o {
			return fmt.Errorf("clarify needs a question and options")
		}
	case "artifacts":
		if _, ok := m["items"]; !ok {
			return fmt.Errorf("artifacts needs items")
		}
	}
	return nil
}
