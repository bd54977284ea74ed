package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// The agent loop through Caddy (CONTRACT.md §12): a route with the
// built-in demo tool server in front of llm_mock's by_round script, which
// calls search_knowledge in round 1 and quotes its result in round 2. The
// client sees both rounds in one stream, in its own protocol.

// loopSite serves one llm_stream route per protocol at /<protocol>, in
// front of the scripted mock at /mock.
func loopSite(t *testing.T) site {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	var s site
	route := func(path, opts string) string {
		return `	handle ` + path + ` {
		llm_stream {
			format text
			` + opts + `
			tools {
				mcp demo {
					builtin demo
					label search_knowledge 知识检索
				}
			}
		}
		rewrite * /mock/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
`
	}
	body := `	handle /mock/* {
		llm_mock {
			record
			by_round
			interval 0
			reply_text "Let me search."
			tool_calls_file testdata/loop/search_call.json
			reply_text "Found: {{tool_result}}"
			tool_calls_file testdata/loop/no_calls.json
		}
	}
` + route("/openai", "protocol openai") +
		route("/skillpet", "protocol skillpet\n\t\t\trequest_format skillpet\n\t\t\tmodel m") +
		route("/aisdk", "protocol aisdk") +
		route("/jsonseq", "protocol jsonseq") +
		route("/agui", "protocol agui\n\t\t\trequest_format agui\n\t\t\tmodel m") +
		route("/conv/*", "protocol skillpet\n\t\t\trequest_format skillpet\n\t\t\tmodel m\n\t\t\tconversation {\n\t\t\t\tstore file "+t.TempDir()+"\n\t\t\t}")
	s = startSite(t, "", body)
	return s
}

// loopPost posts body to path and returns the response's SSE events.
func loopPost(t *testing.T, s site, path, body string) (*http.Response, []sseEvent) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := post(ctx, newClient(t, "h1"), s.url(path), body, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	evs, err := parseSSE(string(raw))
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, raw)
	}
	return resp, evs
}

func TestLoopThroughCaddy(t *testing.T) {
	s := loopSite(t)
	chat := `{"model":"m","stream":true,"messages":[{"role":"user","content":"What is Caddy?"}]}`

	t.Run("openai: both rounds' text in one message, no server call shown", func(t *testing.T) {
		_, evs := loopPost(t, s, "/openai", chat)
		var text strings.Builder
		finish := ""
		for _, ev := range evs {
			if ev.Data == "[DONE]" {
				continue
			}
			d := gjson.Parse(ev.Data)
			text.WriteString(d.Get("choices.0.delta.content").String())
			if d.Get("choices.0.delta.tool_calls").Exists() {
				t.Errorf("a server call reached the openai client: %s", ev.Data)
			}
			if f := d.Get("choices.0.finish_reason").String(); f != "" {
				finish = f
			}
		}
		got := text.String()
		if !strings.HasPrefix(got, "Let me search.\n\nFound: ") || !strings.Contains(got, "Caddy is a web server") {
			t.Errorf("content = %q: want round 1's text, then round 2's quoting the real result", got)
		}
		if finish != "stop" {
			t.Errorf("finish_reason = %q, want stop", finish)
		}
	})

	t.Run("skillpet: tool_start, tool_result, round_start, the answer, done", func(t *testing.T) {
		_, evs := loopPost(t, s, "/skillpet", `{"projectId":"p1","message":"What is Caddy?"}`)
		var names []string
		for _, ev := range evs {
			if ev.Name != ":comment" && ev.Name != "tool_args_heartbeat" && ev.Name != "token" {
				names = append(names, ev.Name)
			}
			if ev.Name == "tool_start" && gjson.Get(ev.Data, "label").String() != "知识检索" {
				t.Errorf("tool_start without its label: %s", ev.Data)
			}
			if ev.Name == "tool_result" && gjson.Get(ev.Data, "status").String() != "completed" {
				t.Errorf("tool_result: %s", ev.Data)
			}
		}
		// The demo search reports progress three times, as status events.
		if got := strings.Join(names, " "); !strings.HasPrefix(got, "tool_start status") ||
			!strings.Contains(got, "status tool_result round_start") || !strings.HasSuffix(got, "done") {
			t.Errorf("events: %s", got)
		}
	})

	t.Run("agui: the call, its result, round 2 a step; the next run sends the rounds back", func(t *testing.T) {
		clearRecorded(t, s)
		_, evs := loopPost(t, s, "/agui", `{"threadId":"th","runId":"r1","messages":[{"id":"u1","role":"user","content":"What is Caddy?"}]}`)
		var wire strings.Builder
		var types []string
		var callID, args, result string
		for _, ev := range evs {
			if ev.Name == ":comment" {
				continue
			}
			wire.WriteString("data: " + ev.Data + "\n\n")
			d := gjson.Parse(ev.Data)
			typ := d.Get("type").String()
			types = append(types, typ)
			switch typ {
			case "TOOL_CALL_START":
				callID = d.Get("toolCallId").String()
				if d.Get("toolCallName").String() != "search_knowledge" || d.Get("metadata.llmstream.label").String() != "知识检索" {
					t.Errorf("the server call: %s", ev.Data)
				}
			case "TOOL_CALL_ARGS":
				args += d.Get("delta").String()
			case "TOOL_CALL_RESULT":
				result = d.Get("content").String()
			}
		}
		seen, err := wiretest.Check("agui", []byte(wire.String()), transform.Meta{Stream: true})
		if err != nil {
			t.Fatalf("the run breaks AG-UI's rules: %v\n%s", err, wire.String())
		}
		got := strings.Join(types, " ")
		for _, want := range []string{"RUN_STARTED", "TOOL_CALL_END TEXT_MESSAGE_END ACTIVITY_SNAPSHOT", "TOOL_CALL_RESULT ACTIVITY_DELTA STEP_STARTED", "STEP_FINISHED RUN_FINISHED"} {
			if !strings.Contains(got, want) {
				t.Errorf("events %s lack %s", got, want)
			}
		}
		if !strings.Contains(result, "Caddy is a web server") || !strings.HasPrefix(seen.Answer, "Let me search.Found: ") || len(seen.ToolCalls) != 0 {
			t.Errorf("result %q, answer %q, calls left to the client %v", result, seen.Answer, seen.ToolCalls)
		}
		// The next run carries the messages HttpAgent assembled: round 1
		// with its call, the call's result as a tool message, round 2.
		round2 := strings.TrimPrefix(seen.Answer, "Let me search.")
		q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
		next := `{"threadId":"th","runId":"r2","messages":[{"id":"u1","role":"user","content":"What is Caddy?"},` +
			`{"id":"a1","role":"assistant","content":"Let me search.","toolCalls":[{"id":` + q(callID) + `,"type":"function","function":{"name":"search_knowledge","arguments":` + q(args) + `}}]},` +
			`{"id":"t1","role":"tool","toolCallId":` + q(callID) + `,"content":` + q(result) + `},` +
			`{"id":"a2","role":"assistant","content":` + q(round2) + `},{"id":"u2","role":"user","content":"And Redis?"}]}`
		clearRecorded(t, s)
		loopPost(t, s, "/agui", next)
		bodies := recorded(t, s)
		if len(bodies) == 0 {
			t.Fatal("no upstream request")
		}
		if got := roles(bodies[0].Messages); got != "user,assistant,tool,assistant,user" || !strings.Contains(bodies[0].Messages[2].text(), "Caddy is a web server") {
			t.Errorf("the next run's upstream request: %s, tool message %q", got, bodies[0].Messages[2].text())
		}
	})

	t.Run("the upstream saw the result as a tool message", func(t *testing.T) {
		// The mock quotes the last tool message: its text is in round 2.
		_, evs := loopPost(t, s, "/aisdk", `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"What is Caddy?"}]}],"trigger":"submit-message"}`)
		var types []string
		for _, ev := range evs {
			if ev.Data == "[DONE]" {
				continue
			}
			var chunk struct{ Type string }
			_ = json.Unmarshal([]byte(ev.Data), &chunk)
			types = append(types, chunk.Type)
		}
		got := strings.Join(types, " ")
		if strings.Count(got, " start ") > 0 || strings.Count(got, "finish") < 1 || !strings.HasPrefix(got, "start") {
			t.Errorf("one lifecycle per turn: %s", got)
		}
	})
}

// TestLoopClientLeavesMidCall: a client that leaves while a tool runs
// cancels the call, no next round is asked upstream, the handler ends
// (outcome client_gone), and no goroutine is left behind.
func TestLoopClientLeavesMidCall(t *testing.T) {
	s := loopSite(t)
	client := newClient(t, "h1")
	// One whole turn first, so that the servers and the pools are warm
	// for the goroutine baseline.
	loopPost(t, s, "/skillpet", `{"projectId":"p1","message":"warm up"}`)
	clearRecorded(t, s)
	base := stableGoroutines(t)
	before := streamsEnded(t)

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := post(ctx, client, s.url("/skillpet"), `{"projectId":"p1","message":"What is Caddy?"}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Leave at the call's first progress report: the call is running.
	buf := make([]byte, 4096)
	var got []byte
	for !strings.Contains(string(got), "event: status") {
		n, err := resp.Body.Read(buf)
		got = append(got, buf[:n]...)
		if err != nil {
			t.Fatalf("the stream ended before the call reported progress: %v\n%s", err, got)
		}
	}
	cancel()
	resp.Body.Close()

	waitEnded(t, before, "client_gone", 1, 10*time.Second)
	if n := len(recorded(t, s)); n != 1 {
		t.Errorf("%d upstream requests, want 1: a round was asked after the client left", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for n := runtime.NumGoroutine(); n > base+3; n = runtime.NumGoroutine() {
		if time.Now().After(deadline) {
			var b bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
			t.Fatalf("%d goroutines, baseline %d:\n%s", n, base, b.String())
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not an assertion
	}
}

// clearRecorded forgets the requests the mock recorded.
func clearRecorded(t *testing.T, s site) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodDelete, s.url("/mock/llm_mock/requests"), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestLoopConversation: a conversation route stores each server call and
// its result, so that init replays the tool card and the next turn's
// upstream request carries the real result (CONTRACT.md §12).
func TestLoopConversation(t *testing.T) {
	s := loopSite(t)
	auth := http.Header{"Authorization": {"Bearer u1"}}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := newClient(t, "h1")
	turn := func(msg string) {
		resp, err := post(ctx, client, s.url("/conv/stream"), `{"projectId":"p1","message":"`+msg+`"}`, auth)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	turn("What is Caddy?")
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.url("/conv/init/p1"), nil)
	req.Header = auth
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var init struct {
		Messages []struct{ Role, Content string }
	}
	err = json.NewDecoder(resp.Body).Decode(&init)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	var initRoles []string
	for _, m := range init.Messages {
		initRoles = append(initRoles, m.Role)
	}
	// user, round 1 with its call, the call's result, round 2.
	if got := strings.Join(initRoles, " "); got != "user assistant tool assistant" {
		t.Fatalf("init messages: %s", got)
	}
	if tool := init.Messages[2].Content; gjson.Get(tool, "_t").String() != "_pub_tool" || !strings.Contains(gjson.Get(tool, "body").String(), "Caddy is a web server") {
		t.Errorf("the tool record: %s", tool)
	}
	if call := init.Messages[1].Content; gjson.Get(call, "tool_calls.0.function.name").String() != "search_knowledge" {
		t.Errorf("round 1's record: %s", call)
	}

	clearRecorded(t, s)
	turn("And Redis?")
	bodies := recorded(t, s)
	if len(bodies) == 0 {
		t.Fatal("no upstream request")
	}
	var toolMsg string
	for _, m := range bodies[0].Messages {
		if m.Role == "tool" {
			toolMsg = m.text()
		}
	}
	if got := roles(bodies[0].Messages); got != "user,assistant,tool,assistant,user" || !strings.Contains(toolMsg, "Caddy is a web server") {
		t.Errorf("turn 2's upstream request does not carry the stored result: %s, tool message %q", got, toolMsg)
	}
}
