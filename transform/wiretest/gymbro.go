package wiretest

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// chatRequest is an OpenAI chat-completions request asking for a stream,
// the body the protocols without one of their own take.
const chatRequest = `{"model":"client-model","messages":[{"role":"user","content":"hi"}],"stream":true}`

// missingMessages is an OpenAI body without messages, and its 400.
var missingMessages = [3]string{`{"model":"m","stream":true}`, "missing_messages", "messages"}

// namedBeat is the keep-alive of gymbro and jsonseq, a heartbeat event.
func namedBeat(ev encodertest.SSEEvent) bool { return ev.Name == "heartbeat" }

// gymbroClient reads GymBro SSE. Its answer is the raw reply (specs/000
// §6.2 content_delta): tool calls and reasoning are in it as the model
// wrote them, and nothing else shows them.
var gymbroClient = &Client{
	Protocol: "gymbro", Request: chatRequest, Missing: missingMessages,
	RawAnswer: true, Codes: true, Heartbeat: namedBeat, CheckReasoning: noReasoning,
	stream: checkGymBro,
}

// checkGymBro checks a GymBro stream (specs/000 §6, CONTRACT.md §5):
// status states in the order queued → working → routed, each at most
// once; content_delta with seq 1, 2, 3, …; heartbeat {ts}; exactly one
// terminal event, completed or error, last; completed.reply_len the
// characters of the assembled reply and metadata.violations an array;
// error with code, and message equal to the legacy error. The agent loop
// (CONTRACT.md §12) adds status events after routed whose state is
// "working" again and which say what happens in one more field (see
// loopStatus).
func checkGymBro(out []byte, meta transform.Meta) (Seen, error) {
	var seen Seen
	evs, err := encodertest.ReadGymBroSSE(out, meta)
	if err != nil {
		return seen, err
	}
	var reply strings.Builder
	state, seq := -1, 0.0
	terminal := false
	var loop loopState
	for i, e := range evs {
		m := e.Fields
		switch e.Name {
		case "status":
			if isLoopStatus(m) {
				if err := loop.status(state, m); err != nil {
					return seen, fmt.Errorf("event %d: %v", i, err)
				}
				break
			}
			if err := nextState(&state, m["state"]); err != nil {
				return seen, fmt.Errorf("event %d: %v", i, err)
			}
		case "content_delta":
			seq++
			if m["seq"] != seq {
				return seen, fmt.Errorf("event %d: content_delta seq %v, want %v (specs/000 §6.2)", i, m["seq"], seq)
			}
			d, ok := m["delta"].(string)
			if !ok {
				return seen, fmt.Errorf("event %d: content_delta without a delta string", i)
			}
			reply.WriteString(d)
		case "heartbeat":
			if _, ok := m["ts"].(float64); !ok {
				return seen, fmt.Errorf("event %d: heartbeat without ts", i)
			}
		case "completed":
			terminal = true
			if n := float64(utf8.RuneCountInString(reply.String())); m["reply_len"] != n {
				return seen, fmt.Errorf("completed.reply_len %v, want %v", m["reply_len"], n)
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
			return seen, fmt.Errorf("event %d: %q is no GymBro event (specs/000 §6.1)", i, e.Name)
		}
	}
	if !terminal {
		return seen, fmt.Errorf("no terminal event")
	}
	seen.Answer = reply.String()
	return seen, nil
}

// statusStates are the states of status, in their order (specs/000 §6.3).
var statusStates = []string{"queued", "working", "routed"}

// nextState checks that status state s comes after *state and records it.
func nextState(state *int, s any) error {
	for k, name := range statusStates {
		if s == name {
			if k <= *state {
				return fmt.Errorf("status %s after %s (queued → working → routed)", name, statusStates[*state])
			}
			*state = k
			return nil
		}
	}
	return fmt.Errorf("status state %v is none of %v", s, statusStates)
}

// violations returns the codes of completed.metadata.violations, and
// whether its finish_reason is tool_calls.
func violations(completed map[string]any) ([]string, bool, error) {
	md, ok := completed["metadata"].(map[string]any)
	if !ok {
		return nil, false, fmt.Errorf("completed without metadata")
	}
	finish, ok := md["finish_reason"].(string)
	if !ok {
		return nil, false, fmt.Errorf("completed.metadata without finish_reason")
	}
	list, ok := md["violations"].([]any)
	if !ok {
		return nil, false, fmt.Errorf("completed.metadata.violations is not an array")
	}
	codes := make([]string, 0, len(list))
	for _, v := range list {
		o, _ := v.(map[string]any)
		code, ok := o["code"].(string)
		if !ok || code == "" {
			return nil, false, fmt.Errorf("violation without a code: %v", v)
		}
		codes = append(codes, code)
	}
	return codes, finish == "tool_calls", nil
}

// checkError checks the error event of gymbro and jsonseq (specs/000
// §6.3) and records it in seen.
func checkError(m map[string]any, seen *Seen) error {
	seen.Failed = true
	seen.Code, _ = m["code"].(string)
	seen.Message, _ = m["message"].(string)
	if seen.Code == "" {
		return fmt.Errorf("error without a code")
	}
	if seen.Message == "" || m["error"] != seen.Message {
		return fmt.Errorf("error: message empty or unlike the legacy error field")
	}
	return nil
}

// loopState follows the agent loop's status events of a gymbro stream:
// the calls to tools the gateway runs (1 called, 2 resulted, by id) and
// the last round.
type loopState struct {
	calls map[string]int
	round float64
}

// isLoopStatus reports whether a status event is the agent loop's: it has
// a tool or a round field.
func isLoopStatus(m map[string]any) bool {
	_, tool := m["tool"]
	_, round := m["round"]
	return tool || round
}

// status checks a loop status, which comes after routed (state is the
// last plain status state): state "working" (a state every GymBro client
// knows) with either tool {event: call|progress|result, id, name, …} (a
// call before its progress and its one result; result with status
// completed or error and an output) or round (2, 3, … in order).
func (l *loopState) status(state int, m map[string]any) error {
	if state != len(statusStates)-1 || m["state"] != "working" {
		return fmt.Errorf("a loop status with state %v before routed, or not working", m["state"])
	}
	if l.calls == nil {
		l.calls, l.round = map[string]int{}, 1
	}
	if r, ok := m["round"]; ok {
		if r != l.round+1 {
			return fmt.Errorf("round %v after round %v", r, l.round)
		}
		l.round++
		return nil
	}
	t, _ := m["tool"].(map[string]any)
	id, _ := t["id"].(string)
	if _, ok := t["name"].(string); !ok || id == "" {
		return fmt.Errorf("tool status without id or name: %v", t)
	}
	switch t["event"] {
	case "call":
		if l.calls[id] != 0 {
			return fmt.Errorf("call %q twice", id)
		}
		l.calls[id] = 1
	case "progress":
		if l.calls[id] != 1 {
			return fmt.Errorf("progress of %q, which is no running call", id)
		}
	case "result":
		_, out := t["output"].(string)
		if l.calls[id] != 1 || !out || t["status"] != "completed" && t["status"] != "error" {
			return fmt.Errorf("result of %q, which is no running call, or without status or output: %v", id, t)
		}
		l.calls[id] = 2
	default:
		return fmt.Errorf("tool status event %v", t["event"])
	}
	return nil
}
