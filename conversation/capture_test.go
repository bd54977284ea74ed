package conversation

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/skillpet"
)

func ev(k transform.Kind, text string) transform.Event {
	return transform.Event{Kind: k, Text: []byte(text)}
}

func call(i int, id, name, args string) transform.Event {
	return transform.Event{Kind: transform.KindToolCallEnd, Index: i, ID: id, Name: name, Text: []byte(args)}
}

const askArgs = `{"questions":[{"id":"genre","question":"题材？","choices":["玄幻","科幻"]}]}`

// run feeds events to a Capture of a real skillpet encoder and returns
// what the client got, the reply, and how often onEnd ran (with the bytes
// written before it ran).
func run(t *testing.T, events []transform.Event, closeAfter bool) (string, *Reply, int, string) {
	t.Helper()
	meta := transform.Meta{MessageID: "msg_1", Request: request.SkillpetFacts{ConversationID: "p1"}, Now: time.Now}
	var out []byte
	ends := 0
	var atEnd string
	c := NewCapture(skillpet.New(meta), "msg_1", func(*Reply) { ends++; atEnd = string(out) })
	out = c.Begin(out)
	for _, e := range events {
		out = c.AppendEvent(out, e)
		out = c.AppendHeartbeat(out, time.Now())
	}
	if closeAfter {
		c.Close()
	}
	return string(out), c.Reply(), ends, atEnd
}

func TestCapture(t *testing.T) {
	answer := []transform.Event{
		{Kind: transform.KindReasoningStart}, ev(transform.KindReasoningDelta, "hmm"), {Kind: transform.KindReasoningEnd},
		{Kind: transform.KindAnswerStart}, ev(transform.KindAnswerDelta, "Hello, "), ev(transform.KindAnswerDelta, "\"world\"\n"),
		{Kind: transform.KindAnswerEnd},
	}
	finish := transform.Event{Kind: transform.KindFinish, Code: "stop"}
	fail := transform.Event{Kind: transform.KindError, Code: "upstream_error", Text: []byte("broke")}
	cases := []struct {
		name       string
		events     []transform.Event
		close      bool
		wantText   string
		wantStatus Status
		wantCalls  []ToolCall
		wantForms  int
		wantParts  string // the kinds of the parts, t or r, in order
	}{
		{name: "answer", events: append(answer, finish), wantText: "Hello, \"world\"\n", wantStatus: StatusComplete, wantParts: "t"},
		{name: "error mid-answer", events: append(answer, fail), wantText: "Hello, \"world\"\n", wantStatus: StatusFailed, wantParts: "t"},
		{name: "client left", events: answer, close: true, wantText: "Hello, \"world\"\n", wantStatus: StatusInterrupted, wantParts: "t"},
		{
			name: "resources between texts",
			events: append(append(answer[:5:5], transform.Event{Kind: transform.KindSerpQueries, List: []string{"a", "b"}},
				ev(transform.KindAnswerDelta, "after")), finish),
			wantText: "Hello, after", wantStatus: StatusComplete, wantParts: "trt",
		},
		{
			name: "ask_user and another tool",
			events: append(answer,
				transform.Event{Kind: transform.KindToolCallStart, ID: "call_a", Name: "ask_user"},
				transform.Event{Kind: transform.KindToolArgsDelta, ID: "call_a", Name: "ask_user", Text: []byte(askArgs)},
				call(0, "call_a", "ask_user", askArgs),
				call(1, "call_s", "search", `{"q":1}`),
				finish),
			wantText: "Hello, \"world\"\n", wantStatus: StatusComplete, wantParts: "t", wantForms: 1,
			wantCalls: []ToolCall{{ID: "call_a", Name: "ask_user", Arguments: askArgs}, {ID: "call_s", Name: "search", Arguments: `{"q":1}`}},
		},
		{
			name:       "clarify",
			events:     []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "which?", Options: []string{"x"}}}, finish},
			wantStatus: StatusComplete, wantForms: 1,
		},
		{name: "error before anything", events: []transform.Event{fail}, wantStatus: StatusFailed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out, r, ends, atEnd := run(t, tc.events, tc.close)
			if ends != 1 {
				t.Fatalf("onEnd ran %d times, want 1", ends)
			}
			if !tc.close && atEnd != "" && strings.Contains(atEnd, "event: done") {
				t.Errorf("onEnd ran after done was returned: %q", atEnd)
			}
			if r.Status != tc.wantStatus {
				t.Errorf("status = %v, want %v", r.Status, tc.wantStatus)
			}
			if got := r.Text(); got != tc.wantText {
				t.Errorf("text = %q, want %q", got, tc.wantText)
			}
			var parts string
			for _, p := range r.parts {
				if p.resource != nil {
					parts += "r"
				} else {
					parts += "t"
				}
			}
			if parts != tc.wantParts {
				t.Errorf("parts = %q, want %q", parts, tc.wantParts)
			}
			if len(r.Calls()) != len(tc.wantCalls) {
				t.Fatalf("calls = %+v, want %+v", r.Calls(), tc.wantCalls)
			}
			for i, c := range tc.wantCalls {
				if r.Calls()[i] != c {
					t.Errorf("call %d = %+v, want %+v", i, r.Calls()[i], c)
				}
			}
			if len(r.Forms()) != tc.wantForms {
				t.Fatalf("forms = %d, want %d", len(r.Forms()), tc.wantForms)
			}
			// The stored questions are the ask_user event's, byte for byte.
			for i, f := range r.Forms() {
				want := askUserData(t, out, i)
				if string(f.Questions) != want {
					t.Errorf("form %d questions = %s, want %s", i, f.Questions, want)
				}
			}
			if tc.name == "ask_user and another tool" && r.Forms()[0].ToolCallID != "call_a" {
				t.Errorf("form call id = %q, want call_a", r.Forms()[0].ToolCallID)
			}
			if tc.name == "clarify" && !strings.HasPrefix(r.Forms()[0].ToolCallID, "form_msg_1_") {
				t.Errorf("clarify form id = %q, want a made-up one", r.Forms()[0].ToolCallID)
			}
			if !tc.close && !strings.HasSuffix(out, "\n\n") {
				t.Errorf("output %q", out)
			}
		})
	}
}

// askUserData returns the questions of the i-th ask_user event in out.
func askUserData(t *testing.T, out string, i int) string {
	t.Helper()
	for _, block := range strings.Split(out, "\n\n") {
		if !strings.HasPrefix(block, "event: ask_user\n") {
			continue
		}
		if i > 0 {
			i--
			continue
		}
		var v struct{ Questions json.RawMessage }
		if err := json.Unmarshal([]byte(strings.TrimPrefix(block, "event: ask_user\ndata: ")), &v); err != nil {
			t.Fatal(err)
		}
		return string(v.Questions)
	}
	t.Fatalf("no ask_user event %d in %q", i, out)
	return ""
}

func TestCaptureCloseAfterEnd(t *testing.T) {
	_, _, ends, _ := run(t, []transform.Event{ev(transform.KindAnswerDelta, "x"), {Kind: transform.KindFinish}}, true)
	if ends != 1 {
		t.Fatalf("onEnd ran %d times after done and Close, want 1", ends)
	}
}

// TestCaptureRestart: with show_retries the client sees the refused reply,
// the round_start marker and the retry; the conversation keeps the retry.
func TestCaptureRestart(t *testing.T) {
	meta := transform.Meta{MessageID: "msg_1", Request: request.SkillpetFacts{ConversationID: "p1"}, Now: time.Now}
	var stored *Reply
	c := NewCapture(skillpet.New(meta), "msg_1", func(r *Reply) { stored = r })
	out := c.Begin(nil)
	for _, e := range []transform.Event{
		{Kind: transform.KindAnswerStart}, ev(transform.KindAnswerDelta, "refused"), {Kind: transform.KindAnswerEnd},
		call(0, "call_1", AskUserTool, askArgs),
	} {
		out = c.AppendEvent(out, e)
	}
	out = c.AppendRestart(out, 2, "clarify_without_question")
	for _, e := range []transform.Event{
		{Kind: transform.KindAnswerStart}, ev(transform.KindAnswerDelta, "accepted"), {Kind: transform.KindAnswerEnd},
		{Kind: transform.KindFinish, Code: "stop"},
	} {
		out = c.AppendEvent(out, e)
	}
	got := string(out)
	for _, want := range []string{"refused", "event: round_start", "accepted", "event: done"} {
		if !strings.Contains(got, want) {
			t.Errorf("the client did not get %q:\n%s", want, got)
		}
	}
	if stored == nil {
		t.Fatal("nothing stored")
	}
	if text := stored.Text(); text != "accepted" || len(stored.calls) != 0 || len(stored.forms) != 0 {
		t.Errorf("stored %q, %d calls, %d forms; want only the accepted reply", text, len(stored.calls), len(stored.forms))
	}
}

// TestCaptureToolRounds: a turn in which the gateway ran a tool is stored
// round by round (CONTRACT.md §12): the first reply with its call, the
// call's result as its tool record, then the answer; the next turn's
// upstream request carries the real result, not NoteToolNotRun.
func TestCaptureToolRounds(t *testing.T) {
	server := func(k transform.Kind, text string) transform.Event {
		return transform.Event{Kind: k, Index: 0, ID: "call_s", Name: "search", Server: true, Text: []byte(text),
			Tool: &transform.Tool{Label: "搜索", Server: "demo", Round: 1}}
	}
	result := server(transform.KindToolResult, "")
	result.Tool = &transform.Tool{Status: transform.ToolCompleted, Output: "Caddy is a web server."}
	events := []transform.Event{
		{Kind: transform.KindAnswerStart}, ev(transform.KindAnswerDelta, "Let me look."), {Kind: transform.KindAnswerEnd},
		server(transform.KindToolCallStart, ""), server(transform.KindToolArgsDelta, `{"q":"caddy"}`), server(transform.KindToolCallEnd, `{"q":"caddy"}`),
		server(transform.KindToolRun, `{"q":"caddy"}`), result,
		{Kind: transform.KindRoundStart, Index: 2},
		{Kind: transform.KindAnswerStart}, ev(transform.KindAnswerDelta, "It is a web server."), {Kind: transform.KindAnswerEnd},
		{Kind: transform.KindFinish, Code: "stop"},
	}
	_, reply, ends, _ := run(t, events, false)
	if ends != 1 {
		t.Fatalf("onEnd ran %d times", ends)
	}
	n := 0
	recs := reply.Records("msg_1", func() string { n++; return "id" + string(rune('0'+n)) }, 1)
	var got []string
	for _, r := range recs {
		got = append(got, r.ID+" "+r.Role+" "+r.Content)
	}
	want := []string{
		`msg_1 assistant {"_t":"_pub_asst","text":"Let me look.","tool_calls":[{"id":"call_s","type":"function","function":{"name":"search","arguments":"{\"q\":\"caddy\"}"}}]}`,
		`id1 tool {"_t":"_pub_tool","toolCallId":"call_s","body":"Caddy is a web server."}`,
		`id2 assistant {"_t":"_pub_asst","text":"It is a web server."}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The next turn's upstream request: the call answered by its result.
	msgs, _ := Messages(nil, recs, Record{Role: RoleUser, Content: "and Redis?"}, Budget{})
	wantMsgs := `{"role":"assistant","content":"Let me look.","tool_calls":[{"id":"call_s","type":"function","function":{"name":"search","arguments":"{\"q\":\"caddy\"}"}}]},` +
		`{"role":"tool","tool_call_id":"call_s","content":"Caddy is a web server."},` +
		`{"role":"assistant","content":"It is a web server."},{"role":"user","content":"and Redis?"}`
	if string(msgs) != wantMsgs {
		t.Errorf("upstream messages:\n%s\nwant\n%s", msgs, wantMsgs)
	}
	var v []json.RawMessage
	if err := json.Unmarshal(append(append([]byte{'['}, msgs...), ']'), &v); err != nil {
		t.Error(err)
	}
}

// TestCaptureParkedAndResumed: a turn that ends with a call waiting for
// the user's choice stores the call and "[等待用户选择] " with the
// question (specs/002 §4.5); the turn that resumes it (the user's answer,
// POST /tool-response) stores the call's result first, with the choice,
// then its own rounds. The next turn's upstream request answers the call
// with its real result.
func TestCaptureParkedAndResumed(t *testing.T) {
	server := func(k transform.Kind, text string) transform.Event {
		return transform.Event{Kind: k, Index: 0, ID: "call_c", Name: "choose", Server: true, Text: []byte(text),
			Tool: &transform.Tool{Label: "选择", Server: "demo", Round: 1}}
	}
	awaiting := server(transform.KindToolResult, "")
	awaiting.Tool = &transform.Tool{Status: transform.ToolAwaiting, Output: "选哪个？",
		Await: &transform.Await{Kind: transform.AwaitChoice, Message: "选哪个？", Options: []transform.Option{{ID: "a", Label: "甲"}, {ID: "b", Label: "乙"}}}}
	out, reply, _, _ := run(t, []transform.Event{
		server(transform.KindToolCallStart, ""), server(transform.KindToolCallEnd, `{}`),
		server(transform.KindToolRun, `{}`), awaiting, {Kind: transform.KindFinish, Code: "tool_calls"},
	}, false)
	if !strings.Contains(out, `"mode":"interactive","status":"awaiting_user"`) {
		t.Fatalf("the client did not see the choice:\n%s", out)
	}
	turn1 := reply.Records("m1", func() string { return "m1b" }, 1)
	if len(turn1) != 2 || turn1[1].Content != `{"_t":"_pub_tool","toolCallId":"call_c","body":"[等待用户选择] 选哪个？"}` {
		t.Fatalf("turn 1 records: %+v", turn1)
	}

	run2 := server(transform.KindToolRun, `{}`)
	run2.Tool = &transform.Tool{Label: "选择", Choice: &transform.Option{ID: "b", Label: "乙"}}
	result := server(transform.KindToolResult, "")
	result.Tool = &transform.Tool{Status: transform.ToolCompleted, Output: "picked b", Choice: &transform.Option{ID: "b", Label: "乙"}}
	_, reply2, _, _ := run(t, []transform.Event{
		run2, result, {Kind: transform.KindRoundStart, Index: 2},
		{Kind: transform.KindAnswerStart}, ev(transform.KindAnswerDelta, "You picked 乙."), {Kind: transform.KindAnswerEnd},
		{Kind: transform.KindFinish, Code: "stop"},
	}, false)
	turn2 := reply2.Records("m2", func() string { return "m2b" }, 2)
	var got []string
	for _, r := range turn2 {
		got = append(got, r.Role+" "+r.Content)
	}
	want := []string{
		`tool {"_t":"_pub_tool","toolCallId":"call_c","body":"picked b","choice":{"id":"b","label":"乙"}}`,
		`assistant {"_t":"_pub_asst","text":"You picked 乙."}`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("turn 2 records:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	history := append([]Record{{ID: "u1", Role: RoleUser, Content: "go"}}, append(turn1, turn2...)...)
	msgs, _ := Messages(nil, history, Record{Role: RoleUser, Content: "next"}, Budget{})
	wantMsgs := `{"role":"user","content":"go"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"call_c","type":"function","function":{"name":"choose","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_c","content":"picked b"},` +
		`{"role":"assistant","content":"You picked 乙."},{"role":"user","content":"next"}`
	if string(msgs) != wantMsgs {
		t.Errorf("upstream messages:\n%s\nwant\n%s", msgs, wantMsgs)
	}
}
