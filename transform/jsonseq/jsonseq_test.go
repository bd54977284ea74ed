package jsonseq_test

import (
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonseq"
)

// contentEvents are the JSONSeq content events (specs/001 §1) and the
// extra ones (CONTRACT.md §5).
var contentEvents = map[string]bool{
	"serp_summary": true, "thinking_start": true, "phase_start": true, "phase_delta": true,
	"thinking_end": true, "final_delta": true, "serp_queries": true, "final_end": true,
	"tool_call": true, "clarify": true, "artifacts": true,
}

// checkStream checks a JSONSeq stream: known events, one-line JSON data led
// by message_id and request_id, exactly one terminal event and it last,
// reply_len equal to the characters of the final_delta texts, and the order
// rules of specs/001 §2: thinking before final, phase_delta only for the
// open phase, at most one final_end and only system events after it.
func checkStream(out []byte, meta transform.Meta) error {
	evs, err := readSSE(out)
	if err != nil {
		return err
	}
	ids := `{"message_id":` + jsonString(meta.MessageID) + `,"request_id":` + jsonString(meta.RequestID)
	var answer strings.Builder
	terminal, finalEnd := -1, -1
	thinking, thought := false, false
	phase := -1.0
	for i, e := range evs {
		if e.comment {
			return errorf("event %d: jsonseq sends no comments", i)
		}
		if !strings.HasPrefix(e.data, ids) {
			return errorf("event %d %s: data does not start with message_id and request_id: %s", i, e.name, e.data)
		}
		m, err := decodeData(e)
		if err != nil {
			return err
		}
		if terminal >= 0 {
			return errorf("event %d %s after the terminal event", i, e.name)
		}
		if finalEnd >= 0 && contentEvents[e.name] {
			return errorf("event %d %s after final_end (specs/001 §2)", i, e.name)
		}
		switch e.name {
		case "thinking_start":
			if thinking || thought {
				return errorf("second thinking_start")
			}
			thinking = true
		case "phase_start":
			if !thinking {
				return errorf("phase_start outside thinking")
			}
			phase = m["id"].(float64)
			if m["title"] == "" {
				return errorf("phase_start with an empty title")
			}
		case "phase_delta":
			if !thinking || m["id"] != phase {
				return errorf("phase_delta for phase %v, open phase %v", m["id"], phase)
			}
		case "thinking_end":
			thinking, thought = false, true
		case "final_delta":
			if thinking {
				return errorf("final_delta before thinking_end (specs/001 §2)")
			}
			answer.WriteString(m["text"].(string))
		case "final_end":
			finalEnd = i
		case "serp_queries":
			if _, ok := m["queries"].([]any); !ok {
				return errorf("serp_queries without a queries array")
			}
		case "tool_call":
			if m["id"] == nil || m["name"] == nil || m["args"] == nil {
				return errorf("tool_call lacks id, name or args: %s", e.data)
			}
		case "serp_summary", "clarify", "artifacts", "status", "heartbeat":
		case "completed":
			terminal = i
			if finalEnd != i-1 {
				return errorf("completed does not follow final_end")
			}
			if n := float64(utf8.RuneCountInString(answer.String())); m["reply_len"] != n {
				return errorf("reply_len %v, want %v (the answer's characters)", m["reply_len"], n)
			}
		case "error":
			terminal = i
		default:
			return errorf("event %d: unknown event %q", i, e.name)
		}
	}
	if terminal < 0 {
		return errorf("no terminal event")
	}
	return nil
}

func jsonString(s string) string { return string(transform.AppendJSONStringS(nil, s)) }

func TestScenarios(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			meta := testMeta()
			out := run(jsonseq.New(meta), s.evs)
			if err := checkStream(out, meta); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			golden(t, s.name, out)
		})
	}
}

// TestEvents checks the data of each event, as specs/001 §1 and CONTRACT.md
// §5 shape it, without the leading message_id and request_id.
func TestEvents(t *testing.T) {
	tests := []struct {
		name string
		evs  []transform.Event
		want []string // "event data-without-ids" lines, in order
	}{
		{"serp_summary", []transform.Event{text(transform.KindSerpSummary, "用户要计划")},
			[]string{`serp_summary {"text":"用户要计划"}`}},
		{"thinking_phases", []transform.Event{ev(transform.KindThinkingStart), phase(1, "Scope"), phaseDelta(1, "a"), phaseDelta(1, ""), phaseEnd(1), ev(transform.KindThinkingEnd)},
			[]string{`thinking_start {}`, `phase_start {"id":1,"title":"Scope"}`, `phase_delta {"id":1,"text":"a"}`, `thinking_end {}`}},
		{"reasoning_not_emitted", []transform.Event{ev(transform.KindReasoningStart), text(R, "secret"), ev(transform.KindReasoningEnd), raw("<think>secret</think>")},
			nil},
		{"final", []transform.Event{ev(transform.KindAnswerStart), text(F, "a"), text(F, ""), {Kind: transform.KindSerpQueries, List: []string{"q"}}, ev(transform.KindAnswerEnd), finish("stop")},
			[]string{`final_delta {"text":"a"}`, `serp_queries {"queries":["q"]}`, `final_end {}`, `completed`}},
		{"empty_queries", []transform.Event{{Kind: transform.KindSerpQueries}},
			[]string{`serp_queries {"queries":[]}`}},
		{"tool_call_object", []transform.Event{toolStart(0, "c1", "f"), toolArgs(0, "c1", "f", `{"a":`), toolEnd(0, "c1", "f", "{\"a\": [1,\n 2]}")},
			[]string{`tool_call {"id":"c1","name":"f","args":{"a":[1,2]}}`}},
		{"tool_call_invalid_json", []transform.Event{toolEnd(0, "c1", "f", `{"a": `)},
			[]string{`tool_call {"id":"c1","name":"f","args":"{\"a\": "}`}},
		{"tool_call_invalid_utf8", []transform.Event{toolEnd(0, "c1", "f", "{\"a\":\"\xff\"}")},
			[]string{`tool_call {"id":"c1","name":"f","args":"{\"a\":\"\ufffd\"}"}`}},
		{"clarify", []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Q?", Options: []string{"a"}, Hint: "h"}}},
			[]string{`clarify {"question":"Q?","options":["a"],"hint":"h"}`}},
		{"clarify_bare", []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Q?"}}, {Kind: transform.KindClarify}},
			[]string{`clarify {"question":"Q?","options":[],"hint":null}`}},
		{"artifacts", []transform.Event{text(transform.KindArtifacts, "[\"file-ready:pptx\"]")},
			[]string{`artifacts {"items":["file-ready:pptx"]}`}},
		{"artifacts_invalid", []transform.Event{text(transform.KindArtifacts, "[\"x\"")},
			[]string{`artifacts {"items":"[\"x\""}`}},
		{"final_end_without_answer", []transform.Event{toolEnd(0, "c", "f", "{}"), finish("tool_calls")},
			[]string{`tool_call {"id":"c","name":"f","args":{}}`, `final_end {}`, `completed`}},
		{"final_end_after_tool_calls", []transform.Event{ev(transform.KindAnswerStart), text(F, "x"), ev(transform.KindAnswerEnd), toolEnd(0, "c", "f", "{}"), finish("stop")},
			[]string{`final_delta {"text":"x"}`, `tool_call {"id":"c","name":"f","args":{}}`, `final_end {}`, `completed`}},
		{"error_after_complete_answer", []transform.Event{ev(transform.KindAnswerStart), text(F, "x"), ev(transform.KindAnswerEnd), failure("upstream_error", "cut")},
			[]string{`final_delta {"text":"x"}`, `final_end {}`, `error`}},
		{"error_inside_answer", []transform.Event{ev(transform.KindAnswerStart), text(F, "x"), failure("upstream_error", "cut")},
			[]string{`final_delta {"text":"x"}`, `error`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := testMeta()
			out := run(jsonseq.New(meta), tt.evs)
			sse, err := readSSE(out)
			if err != nil {
				t.Fatal(err)
			}
			ids := `{"message_id":"msg-1","request_id":"req-1"`
			var got []string
			for _, e := range sse {
				if e.name == "status" {
					continue
				}
				if e.name == "completed" || e.name == "error" {
					got = append(got, e.name)
					continue
				}
				data := strings.TrimPrefix(e.data, ids)
				data = "{" + strings.TrimPrefix(data, ",")
				got = append(got, e.name+" "+data)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestSystemEvents checks that the system events are gymbro's.
func TestSystemEvents(t *testing.T) {
	out := string(run(jsonseq.New(testMeta()), []transform.Event{
		routed("m", "u"), heartbeat(), ev(transform.KindAnswerStart), text(F, "你好"), ev(transform.KindAnswerEnd), finish("stop"),
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

func TestNothingAfterTerminal(t *testing.T) {
	for _, term := range []transform.Event{finish("stop"), failure("upstream_error", "x")} {
		t.Run(term.Kind.String(), func(t *testing.T) {
			enc := jsonseq.New(testMeta())
			enc.Begin(nil)
			enc.AppendEvent(nil, term)
			if out := enc.AppendEvent(nil, text(F, "late")); len(out) != 0 {
				t.Errorf("event after the terminal event wrote %q", out)
			}
			if out := enc.AppendHeartbeat(nil, time.Now()); len(out) != 0 {
				t.Errorf("heartbeat after the terminal event wrote %q", out)
			}
		})
	}
}

func TestZeroAllocs(t *testing.T) {
	tests := []struct {
		name string
		ev   transform.Event
	}{
		{"final_delta", text(F, "some answer text, with \"quotes\"\n")},
		{"final_delta_chinese", text(F, "三分化训练计划")},
		{"phase_delta", phaseDelta(2, "reasoning text")},
		{"reasoning_ignored", text(R, "hidden")},
		{"raw_ignored", raw("<final>")},
		{"heartbeat", heartbeat()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := jsonseq.New(testMeta())
			buf := enc.Begin(make([]byte, 0, 64<<10))
			buf = enc.AppendEvent(buf, routed("m", "id"))
			now := time.Now()
			allocs := testing.AllocsPerRun(1000, func() {
				if tt.ev.Kind == kindHeartbeat {
					buf = enc.AppendHeartbeat(buf[:0], now)
					return
				}
				buf = enc.AppendEvent(buf[:0], tt.ev)
			})
			if allocs != 0 {
				t.Errorf("%v allocations per event, want 0", allocs)
			}
		})
	}
}

func BenchmarkEncoder(b *testing.B) {
	deltas := []transform.Event{
		phaseDelta(1, "Thinking about "), phaseDelta(1, "the user's plan"),
		text(F, "Here is a plan:\n"), text(F, "- 第二天：拉\n"), text(F, "\"quoted\" \\ text"),
	}
	var size int64
	for _, d := range deltas {
		size += int64(len(d.Text))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	enc := jsonseq.New(testMeta())
	buf := enc.Begin(make([]byte, 0, 64<<10))
	buf = enc.AppendEvent(buf, routed("m", "id"))
	b.ResetTimer()
	for b.Loop() {
		for _, d := range deltas {
			buf = enc.AppendEvent(buf[:0], d)
		}
	}
	b.ReportMetric(float64(b.N*len(deltas))/b.Elapsed().Seconds(), "events/s")
}

// FuzzEncoder feeds arbitrary event sequences: the encoder must not panic
// and must write well-formed events. The order rules of specs/001 §2 hold
// only for sequences that keep the pipeline's promises, so the fuzz target
// checks framing, JSON and the terminal event only.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{10, 0, 11, 3, 12, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{19, 1, 16, 2, 18, 3, 13, 9, 25, 4, 23, 1}, "{\"a\":1}")
	f.Add([]byte{24, 0, 7, 5, 8, 200, 9, 1}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		meta := testMeta()
		out := run(jsonseq.New(meta), fuzzEvents(ops, pool))
		sse, err := readSSE(out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		for i, e := range sse {
			if _, err := decodeData(e); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if (e.name == "completed" || e.name == "error") && i != len(sse)-1 {
				t.Fatalf("terminal event %d is not last\n%s", i, out)
			}
		}
	})
}
