package pipeline

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/transformtest"
	"github.com/llmstream/llmstream/transform/validate"
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

// TestLoopParkAndResume: a round with a call that waits for the user
// (CONTRACT.md §13) ends the turn with finish tool_calls, after the
// round's other call ran; its state, resumed on a new stream with the
// user's answer, runs only the parked call, repeats the round's assistant
// message and both results to the model, and numbers the next round's
// calls after the resumed ones.
func TestLoopParkAndResume(t *testing.T) {
	r := newLoopRun(t, format.Text, demoLoop(8), nil)
	r.reply(1<<20, append(append([]string{content("Checking.")}, nativeCall("w1", "get_weather", `{"city":"Paris"}`)...),
		`{"tool_calls":[{"index":1,"id":"s1","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}]}`,
		"finish:tool_calls", `usage:{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`)...)
	park := agent.Approval("search")
	before := len(r.rec.events)
	r.p.RunTool(nil, 0)
	r.p.RunTool(nil, 1)
	r.p.ToolResult(nil, 0, agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: "18°C"}}})
	r.p.ToolResult(nil, 1, agent.Result{Park: &park})
	if !r.p.Parked() {
		t.Fatal("Parked() is false with a call waiting")
	}
	if step := r.p.Next(); step != agent.StepEnd {
		t.Fatalf("Next = %v, want the end of the turn", step)
	}
	st := r.p.ParkedRound()
	r.p.EndTurn(nil)
	want := `RUN0 RUN1 RES0(completed "18°C") RES1(awaiting_user "是否允许运行「search」？") U{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15} FIN(tool_calls)`
	if got := r.events(before); got != want {
		t.Errorf("round 1:\n got %s\nwant %s", got, want)
	}
	if ev := r.rec.events[before+3]; ev.Tool == nil || ev.Tool.Await == nil || ev.Tool.Await.Kind != transform.AwaitApproval {
		t.Errorf("the awaiting result carries no approval: %+v", ev.Tool)
	}
	if st.Round != 1 || st.Content != "Checking." || len(st.Calls) != 2 || st.Calls[0].Result == nil || st.Calls[1].Park == nil {
		t.Fatalf("ParkedRound = %+v", st)
	}

	// The answer, on a new stream.
	r2 := newLoopRun(t, format.Text, demoLoop(8), nil)
	r2.p.Resume(st, map[string]agent.Answer{"s1": {OptionID: transform.OptionApprove}})
	calls := r2.p.ServerCalls()
	if len(calls) != 2 || !calls[0].Done() || calls[1].Done() || calls[1].Answer == nil || calls[1].Answer.OptionID != "approve" {
		t.Fatalf("resumed calls = %+v", calls)
	}
	r2.p.RunTool(nil, 0) // ran before: nothing
	r2.p.RunTool(nil, 1)
	r2.p.ToolResult(nil, 1, agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: "found"}}})
	if got := r2.events(0); got != `RUN1 RES1(completed "found")` {
		t.Errorf("resumed: %s", got)
	}
	if step := r2.p.Next(); step != agent.StepNextRound {
		t.Fatalf("Next = %v", step)
	}
	msgs := string(r2.p.AppendRoundMessages(nil))
	wantMsgs := `{"role":"assistant","content":"Checking.","tool_calls":[{"id":"w1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
		`{"id":"s1","type":"function","function":{"name":"search","arguments":"{\"q\":\"x\"}"}}]},` +
		`{"role":"tool","tool_call_id":"w1","content":"18°C"},{"role":"tool","tool_call_id":"s1","content":"found"}`
	if msgs != wantMsgs {
		t.Errorf("round messages:\n got %s\nwant %s", msgs, wantMsgs)
	}
	before = len(r2.rec.events)
	r2.p.NextRound(nil, false)
	r2.reply(1<<20, append(nativeCall("w2", "get_weather", `{"city":"Rome"}`), "finish:tool_calls",
		`usage:{"prompt_tokens":30,"completion_tokens":7,"total_tokens":37}`)...)
	if got := r2.events(before); !strings.HasPrefix(got, `ROUND(2) ROUTED(m,up) TC{2 w2 get_weather*}`) {
		t.Errorf("round 2: %s", got)
	}
	r2.p.RunTool(nil, 0)
	r2.p.ToolResult(nil, 0, agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: "20°C"}}})
	r2.p.Next()
	r2.p.NextRound(nil, false)
	r2.reply(1<<20, content("Done."), "finish:stop", `usage:{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}`)
	if got := r2.events(0); !strings.Contains(got, `U{"completion_tokens":13,"prompt_tokens":41,"total_tokens":54} FIN(stop)`) {
		t.Errorf("the usage is not summed over the resumed turn: %s", got)
	}
}

// TestLoopResumeStillWaiting: a resumed round whose parked call got no
// answer (another call of the round was answered) shows it waiting again
// and ends the turn again.
func TestLoopResumeStillWaiting(t *testing.T) {
	park := agent.Approval("search")
	st := RoundState{Round: 3, Content: "", Calls: []CallState{
		{Index: 4, ID: "a", Name: "search", Arguments: `{}`, Park: &park},
		{Index: 5, ID: "b", Name: "search", Arguments: `{}`, Park: &park},
	}}
	r := newLoopRun(t, format.Text, demoLoop(8), nil)
	r.p.Resume(st, map[string]agent.Answer{"a": {OptionID: transform.OptionDeny}})
	calls := r.p.ServerCalls()
	if calls[0].Answer == nil || calls[1].Answer != nil {
		t.Fatalf("answers: %+v", calls)
	}
	r.p.RunTool(nil, 0)
	r.p.RunTool(nil, 1)
	r.p.ToolResult(nil, 0, agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: "declined"}}})
	r.p.ToolResult(nil, 1, agent.Result{Park: calls[1].Park})
	if !r.p.Parked() || r.p.Next() != agent.StepEnd {
		t.Fatal("the call still waiting does not end the turn")
	}
	st2 := r.p.ParkedRound()
	if st2.Round != 3 || st2.Calls[0].Result == nil || *st2.Calls[0].Result != "declined" || st2.Calls[1].Park == nil {
		t.Errorf("the round kept again: %+v", st2)
	}
}

// TestLoopEvidenceIsEvents: validate's terminal-state rules take the
// loop's real events (specs/004 §7.3.1, events first): an artifact tool
// that ran but whose result carried no file and is no configured event
// emitted nothing, and artifact_ready is retried (artifact_tool_failed);
// a result with a file the client can fetch, or the route's event for
// the tool, is the artifact, and artifact_ready passes. The results'
// artifacts travel on their events.
func TestLoopEvidenceIsEvents(t *testing.T) {
	loop := &Loop{
		Server: func(name string) (transform.Tool, bool) {
			switch name {
			case "generate_pptx":
				return transform.Tool{Label: "PPT", Server: "s"}, true
			case "generate_quiz_questions":
				return transform.Tool{Label: "Quiz", Server: "s", Event: "quiz-complete"}, true
			}
			return transform.Tool{}, false
		},
		MaxRounds: 8, MaxResultBytes: 1000,
	}
	tests := []struct {
		name      string
		tool      string
		result    agent.Result
		artifacts string
		retry     bool
	}{
		{"text only: no event", "generate_pptx", agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: "Generated the deck."}}}, "", true},
		{"failed: no event", "generate_pptx", agent.ErrorResult("render failed"), "", true},
		{"a file", "generate_pptx", agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: "ok"},
			{Kind: agent.PartResourceLink, URI: "file:///tmp/deck.pptx", MIMEType: "application/pptx", URL: "/r?llmstream_file=f1"}}},
			"file-ready /r?llmstream_file=f1 deck.pptx application/pptx", false},
		{"the route's event", "generate_quiz_questions", agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: `{"questions":3}`}}},
			`quiz-complete {"questions":3}`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newLoopRun(t, format.FinalResult, loop, &Validation{Act: true, Retries: 1, Terminal: true,
				ArtifactTools: validate.ArtifactTools{"generate_pptx", "generate_quiz_questions"}})
			r.reply(1<<20, append(nativeCall("a1", tt.tool, `{}`), "finish:tool_calls")...)
			r.p.RunTool(nil, 0)
			r.p.ToolResult(nil, 0, tt.result)
			res := r.rec.events[len(r.rec.events)-1]
			var arts []string
			for _, a := range res.Tool.Artifacts {
				arts = append(arts, strings.Join(strings.Fields(a.Kind+" "+a.URL+" "+a.Name+" "+a.Type+" "+string(a.Data)), " "))
			}
			if got := strings.Join(arts, ";"); got != tt.artifacts {
				t.Errorf("artifacts %q, want %q", got, tt.artifacts)
			}
			if r.p.Next() != agent.StepNextRound {
				t.Fatal("no next round")
			}
			r.p.NextRound(nil, false)
			r.reply(1<<20, finalResult("artifact_ready", "Done.", ""), "finish:stop")
			if r.p.RetryPending() != tt.retry {
				t.Errorf("retry pending %v, want %v", r.p.RetryPending(), tt.retry)
			}
		})
	}
}
