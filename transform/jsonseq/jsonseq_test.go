package jsonseq_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/jsonseq"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// contentEvents are the JSONSeq content events (specs/001 §1) and the
// extra ones (CONTRACT.md §5).
var contentEvents = map[string]bool{
	"serp_summary": true, "thinking_start": true, "phase_start": true, "phase_delta": true,
	"thinking_end": true, "final_delta": true, "serp_queries": true, "final_end": true,
	"tool_call": true, "clarify": true, "artifacts": true,
	"tool_progress": true, "tool_result": true, "round_start": true,
}

// checkStream checks a JSONSeq stream: known events, one-line JSON data led
// by message_id and request_id, exactly one terminal event and it last,
// reply_len equal to the characters of the final_delta texts, and the order
// rules of specs/001 §2: thinking before final, phase_delta only for the
// open phase, at most one final_end and only system events after it.
func checkStream(out []byte, meta transform.Meta) error {
	evs, err := encodertest.ReadGymBroSSE(out, meta)
	if err != nil {
		return err
	}
	var answer strings.Builder
	terminal, finalEnd := -1, -1
	thinking, thought := false, false
	phase := -1.0
	serverCalls := map[string]bool{}
	for i, e := range evs {
		m := e.Fields
		if finalEnd >= 0 && contentEvents[e.Name] {
			return fmt.Errorf("event %d %s after final_end (specs/001 §2)", i, e.Name)
		}
		switch e.Name {
		case "thinking_start":
			if thinking || thought {
				return fmt.Errorf("second thinking_start")
			}
			thinking = true
		case "phase_start":
			if !thinking {
				return fmt.Errorf("phase_start outside thinking")
			}
			phase = m["id"].(float64)
			if m["title"] == "" {
				return fmt.Errorf("phase_start with an empty title")
			}
		case "phase_delta":
			if !thinking || m["id"] != phase {
				return fmt.Errorf("phase_delta for phase %v, open phase %v", m["id"], phase)
			}
		case "thinking_end":
			thinking, thought = false, true
		case "final_delta":
			if thinking {
				return fmt.Errorf("final_delta before thinking_end (specs/001 §2)")
			}
			answer.WriteString(m["text"].(string))
		case "final_end":
			finalEnd = i
		case "serp_queries":
			if _, ok := m["queries"].([]any); !ok {
				return fmt.Errorf("serp_queries without a queries array")
			}
		case "tool_call":
			if m["id"] == nil || m["name"] == nil || m["args"] == nil {
				return fmt.Errorf("tool_call lacks id, name or args: %s", e.Data)
			}
			if _, ok := m["server"]; ok {
				serverCalls[m["id"].(string)] = true
			}
		case "tool_progress", "tool_result":
			// The agent loop's extra events (CONTRACT.md §12) follow the
			// server call's tool_call.
			if !serverCalls[m["id"].(string)] {
				return fmt.Errorf("%s for %v, which no server tool_call announced", e.Name, m["id"])
			}
			if e.Name == "tool_result" {
				if s := m["status"]; s != "completed" && s != "error" {
					return fmt.Errorf("tool_result status %v", s)
				}
				delete(serverCalls, m["id"].(string))
			}
		case "round_start":
			if _, ok := m["round"].(float64); !ok {
				return fmt.Errorf("round_start without a round")
			}
		case "serp_summary", "clarify", "artifacts", "status", "heartbeat":
		case "completed":
			terminal = i
			if finalEnd != i-1 {
				return fmt.Errorf("completed does not follow final_end")
			}
			if n := float64(utf8.RuneCountInString(answer.String())); m["reply_len"] != n {
				return fmt.Errorf("reply_len %v, want %v (the answer's characters)", m["reply_len"], n)
			}
		case "error":
			terminal = i
		default:
			return fmt.Errorf("event %d: unknown event %q", i, e.Name)
		}
	}
	if terminal < 0 {
		return fmt.Errorf("no terminal event")
	}
	return nil
}

func TestScenarios(t *testing.T) {
	encodertest.CheckScenarios(t, "", func(evs []transform.Event) ([]byte, error) {
		meta := encodertest.Meta()
		out := encodertest.Run(jsonseq.New(meta), evs)
		return out, checkStream(out, meta)
	})
}

// TestEvents checks the data of each event, as specs/001 §1 and CONTRACT.md
// §5 shape it, without the leading message_id and request_id.
func TestEvents(t *testing.T) {
	tests := []struct {
		name string
		evs  []transform.Event
		want []string // "event data-without-ids" lines, in order
	}{
		{"serp_summary", []transform.Event{encodertest.Text(transform.KindSerpSummary, "用户要计划")},
			[]string{`serp_summary {"text":"用户要计划"}`}},
		{"thinking_phases", []transform.Event{encodertest.Event(transform.KindThinkingStart), encodertest.Phase(1, "Scope"), encodertest.PhaseDelta(1, "a"), encodertest.PhaseDelta(1, ""), encodertest.PhaseEnd(1), encodertest.Event(transform.KindThinkingEnd)},
			[]string{`thinking_start {}`, `phase_start {"id":1,"title":"Scope"}`, `phase_delta {"id":1,"text":"a"}`, `thinking_end {}`}},
		{"thinking_phases_end", []transform.Event{encodertest.Event(transform.KindThinkingStart), encodertest.Phase(1, "Scope"), encodertest.PhaseDelta(1, "a"), encodertest.PhaseEnd(1), encodertest.Event(transform.KindThinkingEnd), encodertest.Answer("x")},
			[]string{`thinking_start {}`, `phase_start {"id":1,"title":"Scope"}`, `phase_delta {"id":1,"text":"a"}`, `thinking_end {}`, `final_delta {"text":"x"}`}},
		{"reasoning_not_emitted", []transform.Event{encodertest.Event(transform.KindReasoningStart), encodertest.Reasoning("secret"), encodertest.Event(transform.KindReasoningEnd), encodertest.Raw("<think>secret</think>")},
			nil},
		{"final", []transform.Event{encodertest.Event(transform.KindAnswerStart), encodertest.Answer("a"), encodertest.Answer(""), {Kind: transform.KindSerpQueries, List: []string{"q"}}, encodertest.Event(transform.KindAnswerEnd), encodertest.Finish("stop")},
			[]string{`final_delta {"text":"a"}`, `serp_queries {"queries":["q"]}`, `final_end {}`, `completed`}},
		{"empty_queries", []transform.Event{encodertest.Answer("a"), {Kind: transform.KindSerpQueries}, encodertest.Finish("stop")},
			[]string{`final_delta {"text":"a"}`, `serp_queries {"queries":[]}`, `final_end {}`, `completed`}},
		{"tool_call_object", []transform.Event{encodertest.ToolStart(0, "c1", "f"), encodertest.ToolArgs(0, "c1", "f", `{"a":`), encodertest.ToolEnd(0, "c1", "f", "{\"a\": [1,\n 2]}")},
			[]string{`tool_call {"id":"c1","name":"f","args":{"a":[1,2]}}`}},
		{"tool_call_invalid_json", []transform.Event{encodertest.ToolEnd(0, "c1", "f", `{"a": `)},
			[]string{`tool_call {"id":"c1","name":"f","args":"{\"a\": "}`}},
		{"tool_call_invalid_utf8", []transform.Event{encodertest.ToolEnd(0, "c1", "f", "{\"a\":\"\xff\"}")},
			[]string{`tool_call {"id":"c1","name":"f","args":"{\"a\":\"\ufffd\"}"}`}},
		{"clarify", []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Q?", Options: []string{"a"}, Hint: "h"}}},
			[]string{`clarify {"question":"Q?","options":["a"],"hint":"h"}`}},
		{"clarify_bare", []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Q?"}}, {Kind: transform.KindClarify}},
			[]string{`clarify {"question":"Q?","options":[],"hint":null}`}},
		{"artifacts", []transform.Event{encodertest.Text(transform.KindArtifacts, "[\"file-ready:pptx\"]")},
			[]string{`artifacts {"items":["file-ready:pptx"]}`}},
		{"artifacts_invalid", []transform.Event{encodertest.Text(transform.KindArtifacts, "[\"x\"")},
			[]string{`artifacts {"items":"[\"x\""}`}},
		// specs/001 §2 item 8: one final_delta or more before final_end.
		{"final_end_without_answer", []transform.Event{encodertest.ToolEnd(0, "c", "f", "{}"), encodertest.Finish("tool_calls")},
			[]string{`tool_call {"id":"c","name":"f","args":{}}`, `final_delta {"text":""}`, `final_end {}`, `completed`}},
		{"final_end_after_tool_calls", []transform.Event{encodertest.Event(transform.KindAnswerStart), encodertest.Answer("x"), encodertest.Event(transform.KindAnswerEnd), encodertest.ToolEnd(0, "c", "f", "{}"), encodertest.Finish("stop")},
			[]string{`final_delta {"text":"x"}`, `tool_call {"id":"c","name":"f","args":{}}`, `final_end {}`, `completed`}},
		// An error never claims the answer whole, even after the answer's
		// section closed: the pipeline closes sections when a stream fails.
		{"error_after_answer_end", []transform.Event{encodertest.Event(transform.KindAnswerStart), encodertest.Answer("x"), encodertest.Event(transform.KindAnswerEnd), encodertest.Failure("upstream_error", "cut")},
			[]string{`final_delta {"text":"x"}`, `error`}},
		{"error_inside_answer", []transform.Event{encodertest.Event(transform.KindAnswerStart), encodertest.Answer("x"), encodertest.Failure("upstream_error", "cut")},
			[]string{`final_delta {"text":"x"}`, `error`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := encodertest.Meta()
			out := encodertest.Run(jsonseq.New(meta), tt.evs)
			sse, err := encodertest.ReadSSE(out)
			if err != nil {
				t.Fatal(err)
			}
			ids := `{"message_id":"msg-1","request_id":"req-1"`
			var got []string
			for _, e := range sse {
				if e.Name == "status" {
					continue
				}
				if e.Name == "completed" || e.Name == "error" {
					got = append(got, e.Name)
					continue
				}
				data := strings.TrimPrefix(e.Data, ids)
				data = "{" + strings.TrimPrefix(data, ",")
				got = append(got, e.Name+" "+data)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestSystemEvents checks that the system events are gymbro's.
func TestSystemEvents(t *testing.T) {
	out := string(encodertest.Run(jsonseq.New(encodertest.Meta()), []transform.Event{
		encodertest.Routed("m", "u"), encodertest.Heartbeat(), encodertest.Event(transform.KindAnswerStart), encodertest.Answer("你好"), encodertest.Event(transform.KindAnswerEnd), encodertest.Finish("stop"),
	}))
	for _, want := range []string{
		`data: {"message_id":"msg-1","request_id":"req-1","state":"queued"}`,
		`data: {"message_id":"msg-1","request_id":"req-1","state":"routed","provider":"openai","resolved_model":"m","endpoint_id":3,"upstream_request_id":"u"}`,
		`data: {"message_id":"msg-1","request_id":"req-1","ts":1735787135000}`,
		`"reply_len":2,"metadata":{"finish_reason":"stop","usage":null,"violations":[]}}`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %s\n%s", want, out)
		}
	}
}

// newEncoder returns a jsonseq encoder for encodertest's checks.
func newEncoder() transform.Encoder { return jsonseq.New(encodertest.Meta()) }

func TestNothingAfterTerminal(t *testing.T) {
	encodertest.CheckNothingAfterTerminal(t, newEncoder)
}

func TestZeroAllocs(t *testing.T) {
	encodertest.CheckZeroAllocs(t, newEncoder, []transform.Event{encodertest.Routed("m", "id")})
}

func BenchmarkEncoder(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), []transform.Event{encodertest.Routed("m", "id")}, transform.KindPhaseDelta, transform.KindAnswerDelta)
}

// FuzzEncoder feeds arbitrary event sequences, whether or not they keep
// the pipeline's promises: the encoder must not panic, and the stream must
// keep every rule of specs/001 (wiretest's checker) all the same, since
// the order is the encoder's to keep (CONTRACT.md §7). Without a terminal
// event the stream is ended with a finish.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{10, 0, 11, 3, 12, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{19, 1, 16, 2, 18, 3, 13, 9, 25, 4, 23, 1}, "{\"a\":1}")
	f.Add([]byte{24, 0, 7, 5, 8, 200, 9, 1}, "\xe4\xbd\xa0好")
	f.Add([]byte{11, 1, 5, 0, 7, 3, 8, 3, 13, 0, 11, 2, 9, 1, 6, 0, 22, 0}, "answer before thought")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		meta := encodertest.Meta()
		meta.Limits.MaxBlockBytes = 8
		evs := encodertest.Promised(encodertest.FuzzEvents(ops, pool))
		out := encodertest.Run(jsonseq.New(meta), evs)
		if _, err := wiretest.Check("jsonseq", out, meta); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
