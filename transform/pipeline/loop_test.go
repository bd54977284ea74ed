package pipeline

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// The agent loop through the router (CONTRACT.md §12): which calls the
// gateway runs, what each round shows, what the next round's request
// adds, and how the turn ends.

// demoLoop runs get_weather and search on a server named demo.
func demoLoop(maxRounds int) *Loop {
	return &Loop{
		Server: func(name string) (transform.Tool, bool) {
			switch name {
			case "get_weather":
				return transform.Tool{Label: "天气", Server: "demo"}, true
			case "search":
				return transform.Tool{Label: "search", Server: "demo"}, true
			}
			return transform.Tool{}, false
		},
		MaxRounds:      maxRounds,
		MaxResultBytes: 100,
	}
}

func newLoopRun(t *testing.T, f format.Name, l *Loop, v *Validation) *validationRun {
	r := newValidationRun(t, f, v)
	r.p.SetLoop(l)
	return r
}

func TestLoopRounds(t *testing.T) {
	r := newLoopRun(t, format.Text, demoLoop(8), nil)
	got := r.reply(7, append(append([]string{content("Let me check.")},
		nativeCall("w1", "get_weather", `{"city":"Paris"}`)...),
		"finish:tool_calls", `usage:{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`)...)
	want := `ROUTED(m,up) F{ F"Let me check." TC{0 w1 get_weather*} TA0"{\"city\":\"Paris\"}" TC}0 {"city":"Paris"} F}`
	if got != want {
		t.Fatalf("round 1:\n got %s\nwant %s", got, want)
	}
	if !r.p.ToolsPending() || r.p.Ended() {
		t.Fatal("the reply with a server call did not wait for its result")
	}
	calls := r.p.ServerCalls()
	if len(calls) != 1 || calls[0].ID != "w1" || calls[0].Tool.Label != "天气" || calls[0].Tool.Round != 1 {
		t.Fatalf("ServerCalls = %+v", calls)
	}
	before := len(r.rec.events)
	r.p.RunTool(nil, 0)
	r.p.ToolProgress(nil, 0, agent.Progress{Progress: 1, Total: 2, Message: "asking"})
	r.p.ToolResult(nil, 0, agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: "18°C"}}})
	r.p.ToolProgress(nil, 0, agent.Progress{Progress: 2, Total: 2}) // after the result: dropped
	r.p.ToolResult(nil, 0, agent.ErrorResult("twice"))              // a second result: dropped
	if got := r.events(before); got != `RUN0 PROG0(1/2 "asking") RES0(completed "18°C")` {
		t.Errorf("the call's events: %s", got)
	}
	if step := r.p.Next(); step != agent.StepNextRound {
		t.Fatalf("Next = %v", step)
	}
	msgs := string(r.p.AppendRoundMessages(nil))
	wantMsgs := `{"role":"assistant","content":"Let me check.","tool_calls":[{"id":"w1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
		`{"role":"tool","tool_call_id":"w1","content":"18°C"}`
	if msgs != wantMsgs {
		t.Errorf("round messages:\n got %s\nwant %s", msgs, wantMsgs)
	}
	before = len(r.rec.events)
	r.p.NextRound(nil, false)
	r.reply(3, content("It is 18°C."), "finish:stop", `usage:{"prompt_tokens":30,"completion_tokens":7,"total_tokens":37}`)
	want = `ROUND(2) F{ F"It is 18°C." F} U{"completion_tokens":12,"prompt_tokens":40,"total_tokens":52} FIN(stop)`
	if got := r.events(before); got != want {
		t.Errorf("round 2:\n got %s\nwant %s", got, want)
	}
	if s := r.p.Summary(); s.Rounds != 2 || s.ServerCalls != 1 || s.FinishReason != "stop" {
		t.Errorf("Summary: rounds %d, server calls %d, finish %q", s.Rounds, s.ServerCalls, s.FinishReason)
	}
}

// events is the notation of the events recorded since before.
func (r *validationRun) events(before int) string {
	return formatEvents(r.rec.events[before:])
}

// TestLoopMixedTurn: a reply that calls a server tool and a client tool
// runs the server's, then ends the turn with the client's, finish
// tool_calls; the usage is the reply's.
func TestLoopMixedTurn(t *testing.T) {
	r := newLoopRun(t, format.Text, demoLoop(8), nil)
	r.reply(1<<20, `{"tool_calls":[{"index":0,"id":"s","function":{"name":"search","arguments":"{}"}},`+
		`{"index":1,"id":"c","function":{"name":"open_file","arguments":"{\"path\":\"a\"}"}}]}`, "finish:tool_calls")
	if !r.p.ToolsPending() || len(r.p.ServerCalls()) != 1 {
		t.Fatalf("pending %v, calls %+v", r.p.ToolsPending(), r.p.ServerCalls())
	}
	before := len(r.rec.events)
	r.p.RunTool(nil, 0)
	r.p.ToolResult(nil, 0, agent.ErrorResult("search timed out after 30s"))
	if step := r.p.Next(); step != agent.StepEnd {
		t.Fatalf("Next = %v, want end: the client runs its call", step)
	}
	r.p.EndTurn(nil)
	want := `RUN0 RES0(error "Error: search timed out after 30s") FIN(tool_calls)`
	if got := r.events(before); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	if !r.p.Ended() {
		t.Error("the turn did not end")
	}
}

// TestLoopServerCallsOnlyFinishStop: a turn whose last reply only called
// server tools (the last round) finishes stop, not tool_calls: the client
// has nothing to run.
func TestLoopLastRound(t *testing.T) {
	r := newLoopRun(t, format.Text, demoLoop(1), nil)
	r.reply(1<<20, append(nativeCall("a", "search", `{"q":"x"}`), "finish:tool_calls")...)
	r.p.RunTool(nil, 0)
	r.p.ToolResult(nil, 0, agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: strings.Repeat("x", 500)}}})
	if step := r.p.Next(); step != agent.StepLastRound {
		t.Fatalf("Next = %v, want the last round", step)
	}
	if msgs := string(r.p.AppendRoundMessages(nil)); !strings.Contains(msgs, `[cut: the result has 500 bytes`) {
		t.Errorf("the 500-byte result was not cut at max_result_bytes 100: %s", msgs)
	}
	before := len(r.rec.events)
	r.p.NextRound(nil, true)
	// The model calls anyway: the call is not run, the turn ends.
	r.reply(1<<20, append(nativeCall("b", "search", `{"q":"y"}`), "finish:tool_calls")...)
	if !r.p.ToolsPending() {
		t.Fatal("the last round's call is not pending")
	}
	calls := r.p.ServerCalls()
	if len(calls) != 1 || calls[0].Refused != agent.NotRunLastRound {
		t.Fatalf("calls = %+v", calls)
	}
	if step := r.p.Next(); step != agent.StepEnd {
		t.Fatalf("Next = %v, want end", step)
	}
	r.p.EndTurn(nil)
	want := `ROUND(2) V(max_rounds@0:1 rounds made tool calls (max_rounds); the last round was asked with tools disabled) ` +
		`TC{1 b search*} TA1"{\"q\":\"y\"}" TC}1 {"q":"y"} FIN(stop)`
	if got := r.events(before); got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestLoopValidationRefusesServerCall: a server call whose arguments
// break its schema is not run and not retried: the model gets the
// correction as its result, and the loop goes on.
func TestLoopValidationRefusesServerCall(t *testing.T) {
	v := &Validation{Tools: tools(t), Act: true, Retries: 1}
	r := newLoopRun(t, format.Text, demoLoop(8), v)
	r.reply(1<<20, append(nativeCall("a", "get_weather", `{"unit":"f"}`), "finish:tool_calls")...)
	if r.p.RetryPending() {
		t.Fatal("a server call's bad arguments asked for a retry")
	}
	calls := r.p.ServerCalls()
	if len(calls) != 1 || !strings.Contains(calls[0].Refused, "missing property 'city'") {
		t.Fatalf("calls = %+v", calls)
	}
	if msgs := string(r.p.AppendRoundMessages(nil)); !strings.Contains(msgs, `"tool_call_id":"a","content":"`) ||
		!strings.Contains(msgs, "missing property 'city'") {
		t.Errorf("the correction is not the call's result: %s", msgs)
	}
}

// formatEvents is the notation of evs, adjacent deltas merged.
func formatEvents(evs []transform.Event) string {
	norm, _ := transformtest.Normalize(evs)
	return transformtest.Format(norm)
}
