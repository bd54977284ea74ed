package jsonseq_test

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/jsonseq"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// Event builders for the order cases, as the format parsers emit them.
var (
	thStart = encodertest.Event(transform.KindThinkingStart)
	thEnd   = encodertest.Event(transform.KindThinkingEnd)
	fStart  = encodertest.Event(transform.KindAnswerStart)
	fEnd    = encodertest.Event(transform.KindAnswerEnd)
	phase   = encodertest.Phase
	delta   = encodertest.PhaseDelta
	pEnd    = encodertest.PhaseEnd
	answer  = encodertest.Answer
	finish  = encodertest.Finish("stop")
)

func queries(q ...string) transform.Event {
	return transform.Event{Kind: transform.KindSerpQueries, List: q}
}

// TestOrder checks the repairs that keep specs/001 §2 on the wire
// (CONTRACT.md §7), one case per way a model breaks the order: the events
// come as the parsers emit them for such a reply, the wire is checked by
// wiretest's JSONSeq checker (written from the spec), and the repairs
// that change what the model wrote are reported in completed.
func TestOrder(t *testing.T) {
	tests := []struct {
		name       string
		maxBlock   int
		evs        []transform.Event
		want       string // the content events, "name data-without-ids" joined by " | "
		violations string // completed.metadata.violations codes, joined by " "
	}{
		{name: "in_order",
			evs:  []transform.Event{thStart, phase(1, "A"), delta(1, "a"), pEnd(1), thEnd, fStart, answer("x"), queries("q"), fEnd, finish},
			want: `thinking_start {} | phase_start {"id":1,"title":"A"} | phase_delta {"id":1,"text":"a"} | thinking_end {} | final_delta {"text":"x"} | serp_queries {"queries":["q"]} | final_end {}`},
		// aiplan with direct_response before thought (specs/003 fixes no
		// key order): the answer went out first; the thought has no
		// legal place left.
		{name: "answer_before_reasoning",
			evs:        []transform.Event{fStart, answer("x"), fEnd, thStart, phase(1, "Thought"), delta(1, "t"), pEnd(1), thEnd, finish},
			want:       `final_delta {"text":"x"} | final_end {}`,
			violations: "reasoning_left_out"},
		// jsonl writing final_delta inside its thinking: the answer waits
		// for thinking_end, so the later phase text keeps its place.
		{name: "answer_inside_thinking",
			evs: []transform.Event{thStart, phase(1, "A"), delta(1, "a"), fStart, answer("x"), delta(1, "b"), pEnd(1), thEnd, answer("y"), fEnd, finish},
			want: `thinking_start {} | phase_start {"id":1,"title":"A"} | phase_delta {"id":1,"text":"a"} | phase_delta {"id":1,"text":"b"} | thinking_end {} | ` +
				`final_delta {"text":"x"} | final_delta {"text":"y"} | final_end {}`},
		// ... but only up to max_block: then the thinking ends on the wire
		// and the rest of it is left out.
		{name: "answer_held_to_max_block", maxBlock: 4,
			evs: []transform.Event{thStart, phase(1, "A"), delta(1, "a"), fStart, answer("xyz"), answer("uvw"), delta(1, "b"), pEnd(1), phase(2, "B"), pEnd(2), thEnd, fEnd, finish},
			want: `thinking_start {} | phase_start {"id":1,"title":"A"} | phase_delta {"id":1,"text":"a"} | thinking_end {} | ` +
				`final_delta {"text":"xyz"} | final_delta {"text":"uvw"} | final_end {}`,
			violations: "synthesized_event reasoning_left_out reasoning_left_out"},
		// jsonl phase_start without thinking_start.
		{name: "phase_outside_thinking",
			evs:        []transform.Event{phase(1, "A"), delta(1, "a"), pEnd(1), answer("x"), finish},
			want:       `thinking_start {} | phase_start {"id":1,"title":"A"} | phase_delta {"id":1,"text":"a"} | thinking_end {} | final_delta {"text":"x"} | final_end {}`,
			violations: "synthesized_event"},
		{name: "ids_renumbered",
			evs: []transform.Event{thStart, phase(2, "A"), delta(2, "a"), pEnd(2), phase(7, "B"), delta(7, "b"), pEnd(7), phase(1, "C"), pEnd(1), thEnd, answer("x"), finish},
			want: `thinking_start {} | phase_start {"id":1,"title":"A"} | phase_delta {"id":1,"text":"a"} | phase_start {"id":2,"title":"B"} | ` +
				`phase_delta {"id":2,"text":"b"} | phase_start {"id":3,"title":"C"} | thinking_end {} | final_delta {"text":"x"} | final_end {}`,
			violations: "phase_renumbered phase_renumbered phase_renumbered"},
		{name: "empty_title",
			evs:        []transform.Event{thStart, phase(1, ""), delta(1, "a"), pEnd(1), thEnd, answer("x"), finish},
			want:       `thinking_start {} | phase_start {"id":1,"title":"Thought"} | phase_delta {"id":1,"text":"a"} | thinking_end {} | final_delta {"text":"x"} | final_end {}`,
			violations: "synthesized_event"},
		// A second <thinking> before <final>: thinking_end went out when the
		// first closed, so the second has no place.
		{name: "two_thinking_sections",
			evs: []transform.Event{thStart, phase(1, "A"), pEnd(1), thEnd, thStart, phase(2, "B"), delta(2, "b"), pEnd(2), thEnd, answer("x"), finish},
			want: `thinking_start {} | phase_start {"id":1,"title":"A"} | thinking_end {} | ` +
				`final_delta {"text":"x"} | final_end {}`,
			violations: "reasoning_left_out"},
		// A phase outside thinking: its synthesised section ends before what
		// follows the reasoning, so a second such phase still has a place.
		{name: "phases_outside_thinking",
			evs: []transform.Event{phase(1, "A"), pEnd(1), phase(2, "B"), pEnd(2), answer("x"), finish},
			want: `thinking_start {} | phase_start {"id":1,"title":"A"} | phase_start {"id":2,"title":"B"} | thinking_end {} | ` +
				`final_delta {"text":"x"} | final_end {}`,
			violations: "synthesized_event"},
		// A thinking section without a phase sends nothing (item 3).
		{name: "empty_thinking",
			evs:  []transform.Event{thStart, thEnd, fStart, answer("x"), fEnd, finish},
			want: `final_delta {"text":"x"} | final_end {}`},
		{name: "summary_late",
			evs:        []transform.Event{thStart, phase(1, "A"), pEnd(1), thEnd, encodertest.Text(transform.KindSerpSummary, "s"), answer("x"), finish},
			want:       `thinking_start {} | phase_start {"id":1,"title":"A"} | thinking_end {} | final_delta {"text":"x"} | final_end {}`,
			violations: "serp_summary_left_out"},
		{name: "summary_before_lazy_thinking",
			evs:  []transform.Event{thStart, encodertest.Text(transform.KindSerpSummary, "s"), phase(1, "A"), pEnd(1), thEnd, answer("x"), finish},
			want: `serp_summary {"text":"s"} | thinking_start {} | phase_start {"id":1,"title":"A"} | thinking_end {} | final_delta {"text":"x"} | final_end {}`},
		// jsonl serp_queries before the answer, and a second list.
		{name: "queries_early_and_twice",
			evs:        []transform.Event{queries("q1"), answer("x"), queries("q2"), answer("y"), finish},
			want:       `final_delta {"text":"x"} | final_delta {"text":"y"} | serp_queries {"queries":["q1"]} | final_end {}`,
			violations: "serp_queries_left_out"},
		{name: "tool_call_ends_reasoning",
			evs: []transform.Event{thStart, phase(1, "A"), pEnd(1), thEnd, encodertest.ToolEnd(0, "c", "f", "{}"), thStart, phase(2, "B"), pEnd(2), thEnd, finish},
			want: `thinking_start {} | phase_start {"id":1,"title":"A"} | thinking_end {} | tool_call {"id":"c","name":"f","args":{}} | ` +
				`final_delta {"text":""} | final_end {}`,
			violations: "reasoning_left_out"},
		{name: "tool_call_inside_reasoning",
			evs: []transform.Event{thStart, phase(1, "A"), encodertest.ToolEnd(0, "c", "f", "{}"), delta(1, "a"), pEnd(1), thEnd, answer("x"), finish},
			want: `thinking_start {} | phase_start {"id":1,"title":"A"} | tool_call {"id":"c","name":"f","args":{}} | phase_delta {"id":1,"text":"a"} | ` +
				`thinking_end {} | final_delta {"text":"x"} | final_end {}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := encodertest.Meta()
			meta.Limits.MaxBlockBytes = tt.maxBlock
			out := encodertest.Run(jsonseq.New(meta), tt.evs)
			seen, err := wiretest.Check("jsonseq", out, meta)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := wireEvents(t, out); got != tt.want {
				t.Errorf("events:\n %s\nwant:\n %s", got, tt.want)
			}
			if got := strings.Join(seen.Violations, " "); got != tt.violations {
				t.Errorf("violations %q, want %q", got, tt.violations)
			}
		})
	}
}

// TestOrderOnError checks that a stream that fails still gets the answer
// text held for it, after thinking_end, and no final_end.
func TestOrderOnError(t *testing.T) {
	meta := encodertest.Meta()
	enc := jsonseq.New(meta)
	out := encodertest.Run(enc, []transform.Event{thStart, phase(1, "A"), answer("x"), queries("q"), encodertest.Failure("upstream_error", "cut")})
	if _, err := wiretest.Check("jsonseq", out, meta); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := `thinking_start {} | phase_start {"id":1,"title":"A"} | thinking_end {} | final_delta {"text":"x"} | serp_queries {"queries":["q"]}`
	if got := wireEvents(t, out); got != want {
		t.Errorf("events:\n %s\nwant:\n %s", got, want)
	}
	if codes, n := enc.Repairs(); n != 1 || codes[0] != transform.CodeSynthesizedEvent {
		t.Errorf("repairs %v (%d), want the synthesised thinking_end", codes, n)
	}
}

// wireEvents lists the content events of a JSONSeq stream as "name
// data", the data without message_id and request_id.
func wireEvents(t *testing.T, out []byte) string {
	t.Helper()
	sse, err := encodertest.ReadSSE(out)
	if err != nil {
		t.Fatal(err)
	}
	ids := `{"message_id":"msg-1","request_id":"req-1"`
	var got []string
	for _, e := range sse {
		switch e.Name {
		case "status", "heartbeat", "completed", "error":
			continue
		}
		data := "{" + strings.TrimPrefix(strings.TrimPrefix(e.Data, ids), ",")
		got = append(got, e.Name+" "+data)
	}
	return strings.Join(got, " | ")
}
