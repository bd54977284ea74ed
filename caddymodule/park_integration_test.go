package caddymodule

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// Calls that wait for the user, through Caddy (CONTRACT.md §13): a
// conversation route whose round 1 calls the demo's choose_direction (an
// MCP elicitation of one choice, asked as the current revision asks) or
// get_weather (marked approve), and an aisdk route whose get_weather
// needs approval. The turn ends awaiting the user; the answer
// (/tool-response, or useChat's approval) resumes the call and the loop
// goes on in a stream of its own.

// parkSite serves the routes in front of two by_round mocks.
func parkSite(t *testing.T, ttl string) site {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	dir := t.TempDir()
	mock := func(path, call string) string {
		return `	handle ` + path + `/* {
		llm_mock {
			record
			by_round
			interval 0
			reply_text "Let me ask."
			tool_calls_file testdata/park/` + call + `
			reply_text "Result: {{tool_result}}"
			tool_calls_file testdata/loop/no_calls.json
		}
	}
`
	}
	route := func(path, mockPath, opts string) string {
		return `	handle ` + path + ` {
		llm_stream {
			format text
			model m
			` + opts + `
			tools {
				mcp demo {
					builtin demo
					label choose_direction 选择方向
					approve get_weather
				}
				park {
					ttl ` + ttl + `
				}
			}
		}
		rewrite * ` + mockPath + `/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
`
	}
	conv := "protocol skillpet\n\t\t\trequest_format skillpet\n\t\t\tconversation {\n\t\t\t\tstore file " + dir + "\n\t\t\t}"
	body := mock("/mock", "choose_call.json") + mock("/mockw", "weather_call.json") +
		route("/conv/*", "/mock", conv) + route("/convw/*", "/mockw", conv) +
		strings.Replace(route("/aisdk", "/mockw", "protocol aisdk\n\t\t\trequest_format aisdk"), "ttl "+ttl,
			"ttl "+ttl+"\n\t\t\t\t\tstore file "+dir+"/parked", 1) +
		strings.Replace(route("/responses", "/mockw", "protocol responses\n\t\t\trequest_format responses"), "ttl "+ttl,
			"ttl "+ttl+"\n\t\t\t\t\tstore file "+dir+"/parked", 1)
	return startSite(t, "", body)
}

// toolResponse posts a /tool-response body and returns the status and
// the events (or the error body as one ":body" event).
func (c *chatClient) toolResponse(body string) (int, []sseEvent) {
	c.t.Helper()
	resp := c.do(context.Background(), http.MethodPost, c.base+"/tool-response", body)
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, []sseEvent{{Name: ":body", Data: string(raw)}}
	}
	evs, err := parseSSE(string(raw))
	if err != nil {
		c.t.Fatalf("tool-response: %v", err)
	}
	return resp.StatusCode, evs
}

// eventNames lists the events' names, comments left out and repeats
// (token after token) named once.
func eventNames(evs []sseEvent) string {
	var names []string
	for _, e := range evs {
		if e.Name != ":comment" && e.Name != "tool_args_heartbeat" && (len(names) == 0 || names[len(names)-1] != e.Name) {
			names = append(names, e.Name)
		}
	}
	return strings.Join(names, " ")
}

func eventNamed(evs []sseEvent, name string) string {
	for _, e := range evs {
		if e.Name == name {
			return e.Data
		}
	}
	return ""
}

// TestParkedChoice: the elicitation's choice ends the turn awaiting the
// user, stored as "[等待用户选择] "; /tool-response resumes it with the
// user's option, stored with the choice, and the loop goes on with the
// real result; a second answer, another user's, a wrong option are
// refused with a clear error.
func TestParkedChoice(t *testing.T) {
	s := parkSite(t, "1m")
	c := newChatClient(t, s.url("/conv"), "Bearer u1")
	evs := c.stream("p1", "write me a story")
	if got := eventNames(evs); got != "token tool_start tool_result done" {
		t.Fatalf("turn 1: %s", got)
	}
	res := gjson.Parse(eventNamed(evs, "tool_result"))
	if res.Get("mode").String() != "interactive" || res.Get("status").String() != "awaiting_user" ||
		res.Get("message").String() != "请选择故事方向" || res.Get("options.1.id").String() != "scifi" ||
		res.Get("options.1.label").String() != "科幻/未来" || res.Get("label").String() != "选择方向" {
		t.Fatalf("tool_result: %s", res.Raw)
	}
	callID := res.Get("id").String()
	init := c.init("p1")
	if n := len(init.Messages); n != 3 || !strings.Contains(init.Messages[2].Content, `"body":"[等待用户选择] 请选择故事方向"`) {
		t.Fatalf("init after turn 1: %+v", init.Messages)
	}

	answer := func(option string) string {
		b, _ := json.Marshal(map[string]any{"projectId": "p1", "toolCallId": callID, "toolName": "choose_direction", "optionId": option})
		return string(b)
	}
	if status, evs := c.toolResponse(answer("romance")); status != http.StatusBadRequest || !strings.Contains(evs[0].Data, "INVALID_OPTION") {
		t.Errorf("a wrong option: %d %v", status, evs)
	}
	other := newChatClient(t, s.url("/conv"), "Bearer u2")
	if status, evs := other.toolResponse(answer("scifi")); status != http.StatusNotFound || !strings.Contains(evs[0].Data, "NOT_WAITING") {
		t.Errorf("another user's answer: %d %v", status, evs)
	}
	clearRecorded(t, s)
	status, evs := c.toolResponse(answer("scifi"))
	if status != http.StatusOK {
		t.Fatalf("tool-response: %d %v", status, evs)
	}
	if got := eventNames(evs); got != "tool_start tool_result round_start token done" {
		t.Fatalf("the continuation: %s", got)
	}
	if r := gjson.Parse(eventNamed(evs, "tool_result")); r.Get("id").String() != callID || r.Get("status").String() != "completed" ||
		!strings.Contains(r.Get("message").String(), "科幻/未来 (scifi)") {
		t.Errorf("the resumed result: %s", r.Raw)
	}
	if got := tokens(t, evs); !strings.Contains(got, "Result: The user chose the direction 科幻/未来") {
		t.Errorf("round 2 does not quote the real result: %q", got)
	}
	bodies := recorded(t, s)
	if len(bodies) != 1 || roles(bodies[0].Messages) != "user,assistant,tool" {
		t.Fatalf("the continuation's upstream request: %d requests", len(bodies))
	}
	init = c.init("p1")
	var got []string
	for _, m := range init.Messages {
		got = append(got, m.Role)
	}
	if strings.Join(got, " ") != "user assistant tool tool assistant" ||
		gjson.Get(init.Messages[3].Content, "choice.id").String() != "scifi" ||
		gjson.Get(init.Messages[3].Content, "choice.label").String() != "科幻/未来" {
		t.Errorf("init after the answer: %+v", init.Messages)
	}
	if status, evs := c.toolResponse(answer("fantasy")); status != http.StatusConflict || !strings.Contains(evs[0].Data, "ALREADY_ANSWERED") {
		t.Errorf("a second answer: %d %v", status, evs)
	}
}

// TestParkedApprovalDenied: a tool the route marks approve waits before
// it runs; declined, it is not run, and the model is told.
func TestParkedApprovalDenied(t *testing.T) {
	s := parkSite(t, "1m")
	c := newChatClient(t, s.url("/convw"), "Bearer u1")
	evs := c.stream("p1", "weather?")
	res := gjson.Parse(eventNamed(evs, "tool_result"))
	if res.Get("status").String() != "awaiting_user" || res.Get("options.0.id").String() != "approve" || res.Get("options.1.id").String() != "deny" {
		t.Fatalf("tool_result: %s", res.Raw)
	}
	b, _ := json.Marshal(map[string]any{"projectId": "p1", "toolCallId": res.Get("id").String(), "toolName": "get_weather", "optionId": "deny"})
	status, evs := c.toolResponse(string(b))
	if status != http.StatusOK {
		t.Fatalf("tool-response: %d %v", status, evs)
	}
	if got := tokens(t, evs); !strings.Contains(got, "The user declined the call of get_weather: it was not run.") {
		t.Errorf("the model was not told: %q", got)
	}
}

// TestParkedExpired: an answer after the park ttl is refused, 410.
func TestParkedExpired(t *testing.T) {
	s := parkSite(t, "300ms")
	c := newChatClient(t, s.url("/conv"), "Bearer u1")
	evs := c.stream("p1", "write")
	id := gjson.Get(eventNamed(evs, "tool_result"), "id").String()
	time.Sleep(400 * time.Millisecond) // past the ttl: the behaviour under test is expiry
	b, _ := json.Marshal(map[string]any{"projectId": "p1", "toolCallId": id, "toolName": "choose_direction", "optionId": "urban"})
	if status, evs := c.toolResponse(string(b)); status != http.StatusGone || !strings.Contains(evs[0].Data, "EXPIRED") {
		t.Errorf("an answer after the ttl: %d %v", status, evs)
	}
}

// TestParkedAISDKApproval: on an aisdk route the approval is a
// tool-approval-request part; the request useChat sends after
// addToolApprovalResponse resumes the call, which runs, and the loop goes
// on in the same assistant message.
func TestParkedAISDKApproval(t *testing.T) {
	s := parkSite(t, "1m")
	_, evs := loopPost(t, s, "/aisdk", `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"weather?"}]}],"trigger":"submit-message"}`)
	var approvalID, callID, finish string
	for _, e := range evs {
		d := gjson.Parse(e.Data)
		switch d.Get("type").String() {
		case "tool-approval-request":
			approvalID, callID = d.Get("approvalId").String(), d.Get("toolCallId").String()
		case "finish":
			finish = d.Get("finishReason").String()
		}
	}
	if !strings.HasPrefix(approvalID, "apr_") || callID == "" || finish != "tool-calls" {
		t.Fatalf("no approval request: %v", evs)
	}
	resendBody := func(approved bool) string {
		return `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"weather?"}]},` +
			`{"id":"a1","role":"assistant","parts":[{"type":"step-start"},{"type":"text","text":"Let me ask.","state":"done"},` +
			`{"type":"dynamic-tool","toolName":"get_weather","toolCallId":"` + callID + `","state":"approval-responded","input":{"city":"Paris"},"providerExecuted":true,` +
			`"approval":{"id":"` + approvalID + `","approved":` + map[bool]string{true: "true", false: "false"}[approved] + `}}]}],"trigger":"submit-message"}`
	}
	_, evs = loopPost(t, s, "/aisdk", resendBody(true))
	// The continuation extends the message useChat answered (a1).
	if start := gjson.Parse(evs[0].Data); start.Get("type").String() != "start" || start.Get("messageId").String() != "a1" {
		t.Errorf("the continuation's start: %s", evs[0].Data)
	}
	var types []string
	var text strings.Builder
	for _, e := range evs {
		d := gjson.Parse(e.Data)
		types = append(types, d.Get("type").String())
		if d.Get("type").String() == "tool-output-available" && !strings.Contains(d.Get("output").String(), "Paris:") {
			t.Errorf("the tool's output: %s", e.Data)
		}
		text.WriteString(d.Get("delta").String())
	}
	if got := strings.Join(types, " "); !strings.Contains(got, "tool-input-available tool-output-available") || !strings.Contains(got, "finish") {
		t.Errorf("the continuation: %s", got)
	}
	if !strings.Contains(text.String(), "Result: Paris:") {
		t.Errorf("round 2: %q", text.String())
	}
	resp, err := post(context.Background(), newClient(t, "h1"), s.url("/aisdk"), resendBody(false), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusConflict || !strings.Contains(string(b), "ALREADY_ANSWERED") {
		t.Errorf("the same approval again: %d %s", resp.StatusCode, b)
	}
}

// TestParkedResponsesApproval: on a Responses route an approve-marked call
// is an mcp_approval_request item (its mcp_call ends incomplete, unrun);
// the client's mcp_approval_response, sent with the output it got, runs
// the call in a new response (an mcp_call with its output, round 2's
// answer); the same approval again is 409 ALREADY_ANSWERED, an unknown one
// 404 (CONTRACT.md §13).
func TestParkedResponsesApproval(t *testing.T) {
	s := parkSite(t, "1m")
	_, evs := loopPost(t, s, "/responses", `{"model":"m","stream":true,"input":"weather?"}`)
	var output string
	for _, e := range evs {
		if e.Name == "response.completed" {
			output = gjson.Get(e.Data, "response.output").Raw
		}
	}
	items := gjson.Parse(output).Array()
	if len(items) < 2 {
		t.Fatalf("output: %s", output)
	}
	call, ask := items[len(items)-2], items[len(items)-1]
	if call.Get("type").String() != "mcp_call" || call.Get("status").String() != "incomplete" || call.Get("output").Type != gjson.Null {
		t.Errorf("the waiting call: %s", call.Raw)
	}
	approvalID := ask.Get("id").String()
	if ask.Get("type").String() != "mcp_approval_request" || !strings.HasPrefix(approvalID, "apr_") ||
		ask.Get("name").String() != "get_weather" || ask.Get("server_label").String() != "demo" || !strings.Contains(ask.Get("arguments").String(), "Paris") {
		t.Fatalf("the approval request: %s", ask.Raw)
	}
	answer := func(id string, approve bool) string {
		return `{"model":"m","stream":true,"input":[{"role":"user","content":"weather?"},` + strings.Join(func() []string {
			var raws []string
			for _, it := range items {
				raws = append(raws, it.Raw)
			}
			return raws
		}(), ",") + `,{"type":"mcp_approval_response","approval_request_id":"` + id + `","approve":` + map[bool]string{true: "true", false: "false"}[approve] + `}]}`
	}
	_, evs = loopPost(t, s, "/responses", answer(approvalID, true))
	var text strings.Builder
	ran := false
	for _, e := range evs {
		switch e.Name {
		case "response.output_text.delta":
			text.WriteString(gjson.Get(e.Data, "delta").String())
		case "response.output_item.done":
			it := gjson.Get(e.Data, "item")
			if it.Get("type").String() == "mcp_call" && it.Get("name").String() == "get_weather" &&
				it.Get("status").String() == "completed" && strings.Contains(it.Get("output").String(), "Paris:") {
				ran = true
			}
		}
	}
	if !ran || !strings.Contains(text.String(), "Result: Paris:") {
		t.Errorf("the continuation: ran %v, text %q, events %v", ran, text.String(), evs)
	}
	for _, tc := range []struct {
		id     string
		status int
		code   string
	}{{approvalID, http.StatusConflict, "ALREADY_ANSWERED"}, {"apr_nope_0", http.StatusNotFound, "NOT_WAITING"}} {
		resp, err := post(context.Background(), newClient(t, "h1"), s.url("/responses"), answer(tc.id, false), nil)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tc.status || !strings.Contains(string(b), tc.code) {
			t.Errorf("approval %s: %d %s, want %d %s", tc.id, resp.StatusCode, b, tc.status, tc.code)
		}
	}
}
