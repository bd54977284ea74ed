package skillpet_test

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/skillpet"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// Event builders for the order cases, as the format parsers emit them.
var (
	rStart  = encodertest.Event(transform.KindReasoningStart)
	rEnd    = encodertest.Event(transform.KindReasoningEnd)
	thStart = encodertest.Event(transform.KindThinkingStart)
	thEnd   = encodertest.Event(transform.KindThinkingEnd)
	fStart  = encodertest.Event(transform.KindAnswerStart)
	fEnd    = encodertest.Event(transform.KindAnswerEnd)
	finish  = encodertest.Finish("stop")
)

// TestOrder checks the repairs that keep the thinking before the reply
// (specs/002 §3.2, CONTRACT.md §7), one case per way a model breaks the
// order; the wire is checked by wiretest's skillpet checker, written from
// the spec.
func TestOrder(t *testing.T) {
	tests := []struct {
		name     string
		maxBlock int
		evs      []transform.Event
		want     string // "name data" joined by " | "
		repairs  string
	}{
		{name: "in_order",
			evs:  []transform.Event{rStart, encodertest.Reasoning("r"), rEnd, fStart, encodertest.Answer("x"), fEnd, finish},
			want: `thinking {"content":"r"} | thinking_done {} | token {"content":"x"} | done {"conversationId":"msg-1"}`},
		// aiplan with direct_response before thought.
		{name: "answer_before_reasoning",
			evs: []transform.Event{fStart, encodertest.Answer("x"), fEnd, thStart, encodertest.Phase(1, "Thought"), encodertest.PhaseDelta(1, "t"),
				encodertest.PhaseEnd(1), thEnd, finish},
			want:    `token {"content":"x"} | done {"conversationId":"msg-1"}`,
			repairs: "reasoning_left_out"},
		// Native reasoning resumed after content: two blocks, each reported.
		{name: "reasoning_resumes_twice",
			evs: []transform.Event{encodertest.Answer("x"), rStart, encodertest.Reasoning("a"), encodertest.Reasoning("b"), rEnd,
				encodertest.Answer("y"), rStart, encodertest.Reasoning("c"), rEnd, finish},
			want:    `token {"content":"x"} | token {"content":"y"} | done {"conversationId":"msg-1"}`,
			repairs: "reasoning_left_out reasoning_left_out"},
		// jsonl writing final_delta inside its thinking: the answer waits.
		{name: "answer_inside_thinking",
			evs: []transform.Event{thStart, encodertest.Phase(1, "A"), encodertest.PhaseDelta(1, "a"), fStart, encodertest.Answer("x"),
				encodertest.PhaseDelta(1, "b"), encodertest.PhaseEnd(1), thEnd, encodertest.Answer("y"), fEnd, finish},
			want: `thinking {"content":"**A**\n\n"} | thinking {"content":"a"} | thinking {"content":"b"} | thinking_done {} | ` +
				`token {"content":"x"} | token {"content":"y"} | done {"conversationId":"msg-1"}`},
		{name: "answer_held_to_max_block", maxBlock: 2,
			evs: []transform.Event{thStart, encodertest.Phase(1, "A"), fStart, encodertest.Answer("xy"), encodertest.Answer("z"),
				encodertest.PhaseDelta(1, "b"), encodertest.PhaseEnd(1), thEnd, fEnd, finish},
			want: `thinking {"content":"**A**\n\n"} | thinking_done {} | token {"content":"xy"} | token {"content":"z"} | ` +
				`done {"conversationId":"msg-1"}`,
			repairs: "reasoning_left_out"},
		// aiplan with tool_calls before thought.
		{name: "tool_call_before_reasoning",
			evs: []transform.Event{encodertest.ToolStart(0, "c", "f"), encodertest.ToolEnd(0, "c", "f", "{}"),
				thStart, encodertest.Phase(1, "Thought"), encodertest.PhaseDelta(1, "t"), encodertest.PhaseEnd(1), thEnd, finish},
			want:    `tool_start {"id":"c","name":"f","label":"f","args":{}} | done {"conversationId":"msg-1"}`,
			repairs: "reasoning_left_out"},
		// jsonl serp_queries before its thinking: the resource waits.
		{name: "queries_before_reasoning",
			evs: []transform.Event{{Kind: transform.KindSerpQueries, List: []string{"q"}}, rStart, encodertest.Reasoning("r"), rEnd,
				encodertest.Answer("x"), finish},
			want: `thinking {"content":"r"} | thinking_done {} | token {"content":"x"} | ` +
				`resource {"resourceType":"serp_queries","data":["q"],"fallbackText":"相关搜索：q"} | done {"conversationId":"msg-1"}`},
		{name: "held_answer_on_error",
			evs:  []transform.Event{thStart, encodertest.Phase(1, "A"), encodertest.Answer("x"), encodertest.Failure("upstream_error", "cut")},
			want: `thinking {"content":"**A**\n\n"} | thinking_done {} | token {"content":"x"} | error {"message":"cut"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := encodertest.Meta()
			meta.Limits.MaxBlockBytes = tt.maxBlock
			enc := skillpet.New(meta)
			out := encodertest.Run(enc, tt.evs)
			if _, err := wiretest.Check("skillpet", out, meta); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sse, _ := encodertest.ReadSSE(out)
			var got []string
			for _, e := range sse {
				got = append(got, e.Name+" "+e.Data)
			}
			if g := strings.Join(got, " | "); g != tt.want {
				t.Errorf("events:\n %s\nwant:\n %s", g, tt.want)
			}
			codes, n := enc.Repairs()
			if g := strings.Join(codes, " "); g != tt.repairs || n != len(codes) {
				t.Errorf("repairs %q (%d), want %q", g, n, tt.repairs)
			}
		})
	}
}

// TestOrderNoThinking checks that with enableThinking false nothing is
// held back or reported: no thinking is shown anyway.
func TestOrderNoThinking(t *testing.T) {
	meta := encodertest.Meta()
	meta.Request = request.SkillpetFacts{NoThinking: true}
	enc := skillpet.New(meta)
	out := encodertest.Run(enc, []transform.Event{thStart, encodertest.Phase(1, "A"), encodertest.Answer("x"),
		encodertest.PhaseDelta(1, "b"), encodertest.PhaseEnd(1), thEnd, finish})
	if got, want := string(out), "event: token\ndata: {\"content\":\"x\"}\n\nevent: done\ndata: {\"conversationId\":\"msg-1\"}\n\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if _, n := enc.Repairs(); n != 0 {
		t.Errorf("%d repairs", n)
	}
}
