package caddymodule

import (
	"bufio"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// The integration tests run Caddy in process (caddytest: one global
// instance, admin on localhost:2999; each config serves on a fresh port, see
// startSite), so they never run in parallel and are skipped under -short.

// gatedUpstream is a fake OpenAI upstream that writes one SSE chunk, then
// waits for the test to release the next. A client that sees an event
// before releasing proves the event was flushed on its own: without
// per-event flushing the read would wait for bytes that never come.
type gatedUpstream struct {
	*httptest.Server
	chunks  []string
	release chan struct{}
	mu      sync.Mutex
	bodies  [][]byte
	status  int    // answer status; 0 means 200 with the chunks
	refusal string // the body of a non-2xx answer
}

func newGatedUpstream(t *testing.T, chunks ...string) *gatedUpstream {
	u := &gatedUpstream{chunks: chunks, release: make(chan struct{}, len(chunks)+1)}
	u.Server = httptest.NewServer(http.HandlerFunc(u.serve))
	t.Cleanup(func() {
		close(u.release)
		u.Close()
	})
	return u
}

func (u *gatedUpstream) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	u.mu.Lock()
	u.bodies = append(u.bodies, body)
	u.mu.Unlock()
	if u.status != 0 {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(u.status)
		_, _ = io.WriteString(w, u.refusal)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Request-Id", "up-42")
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	_ = rc.Flush()
	for _, c := range u.chunks {
		if _, err := io.WriteString(w, c); err != nil {
			return
		}
		_ = rc.Flush()
		select {
		case _, ok := <-u.release:
			if !ok {
				return
			}
		case <-r.Context().Done():
			return
		case <-time.After(20 * time.Second):
			return
		}
	}
}

// lastBody returns the last request body the upstream received.
func (u *gatedUpstream) lastBody() []byte {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		return nil
	}
	return u.bodies[len(u.bodies)-1]
}

// chunk is one chat.completion.chunk SSE event with the given delta.
func chunk(delta string) string {
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":` +
		delta + `,"finish_reason":null}]}` + "\n\n"
}

const finishChunks = `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n" +
	`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}` + "\n\n" +
	"data: [DONE]\n\n"

// sseEvent is one event the client read.
type sseEvent struct {
	Name string
	Data string
}

func (e sseEvent) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(e.Data), &m); err != nil {
		t.Fatalf("event %s: data is not a JSON object: %v: %s", e.Name, err, e.Data)
	}
	return m
}

// eventReader reads SSE events from a response body in the background.
type eventReader struct {
	events chan sseEvent
	errc   chan error
}

// readEvents reads body, gunzipping it when gzip says so (the tests ask for
// gzip to prove encode does not hold events back).
func readEvents(body io.Reader, gzipped bool) *eventReader {
	er := &eventReader{events: make(chan sseEvent, 256), errc: make(chan error, 1)}
	go func() {
		if gzipped {
			zr, err := gzip.NewReader(body)
			if err != nil {
				er.errc <- err
				close(er.events)
				return
			}
			body = zr
		}
		br := bufio.NewReader(body)
		var ev sseEvent
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				er.errc <- err
				close(er.events)
				return
			}
			line = strings.TrimRight(line, "\r\n")
			switch {
			case line == "":
				if ev.Data != "" || ev.Name != "" {
					er.events <- ev
				}
				ev = sseEvent{}
			case strings.HasPrefix(line, ":"):
				er.events <- sseEvent{Name: ":comment"}
			case strings.HasPrefix(line, "event:"):
				ev.Name = strings.TrimSpace(line[len("event:"):])
			case strings.HasPrefix(line, "data:"):
				ev.Data = strings.TrimPrefix(line[len("data:"):], " ")
			}
		}
	}()
	return er
}

// next returns the next event, failing the test if none comes in time.
func (er *eventReader) next(t *testing.T, step int) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-er.events:
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Fatalf("step %d: no event within 10s: the stream was not flushed", step)
		return sseEvent{}, false
	}
}

// step is one upstream chunk and the labels of the events the client must
// receive for it before the next chunk is released.
type step struct {
	chunk string
	want  []string
}

// protocolCase is one protocol's run over the same reply.
type protocolCase struct {
	protocol string
	options  string // extra llm_stream options
	request  string // the client's body
	label    func(t *testing.T, ev sseEvent) string
	steps    []step
	check    func(t *testing.T, events []sseEvent, resp *http.Response, upstreamBody []byte)
}

// The reply every protocol streams, cut so that each chunk completes
// something a client sees.
var (
	stepRole      = chunk(`{"role":"assistant","content":""}`)
	stepReasoning = chunk(`{"reasoning_content":"Let me think. "}`)
	stepPhase     = chunk(`{"content":"<thinking><phase id=\"1\"><title>Plan</title>"}`)
	stepPhaseText = chunk(`{"content":"step one</phase></thinking>"}`)
	stepFinal     = chunk(`{"content":"<final>Hello"}`)
	stepQueries   = chunk(`{"content":" world<!-- <serp_queries>\n[\"q1\",\"q2\"]\n</serp_queries> --></final>"}`)
)

func nameLabel(_ *testing.T, ev sseEvent) string { return ev.Name }

func TestProtocolsStreamThroughReverseProxy(t *testing.T) {
	if testing.Short() {
		t.Skip("caddytest integration test")
	}
	for _, proto := range []string{"h1", "h2c"} {
		for _, tc := range protocolCases() {
			t.Run(proto+"/"+tc.protocol, func(t *testing.T) {
				runProtocolCase(t, proto, tc)
			})
		}
	}
}

func runProtocolCase(t *testing.T, proto string, tc protocolCase) {
	chunks := make([]string, len(tc.steps))
	for i, s := range tc.steps {
		chunks[i] = s.chunk
	}
	up := newGatedUpstream(t, chunks...)
	st := startSite(t, "", fmt.Sprintf(`
	encode
	llm_stream {
		protocol %s
		format thinkingml
		system_prompt_text "You are a test."
		heartbeat 0
		%s
	}
	reverse_proxy %s {
		flush_interval -1
	}
`, tc.protocol, tc.options, strings.TrimPrefix(up.URL, "http://")))
	client := newClient(t, proto)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, st.chatURL(), strings.NewReader(tc.request))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "client-req-1")
	req.Header.Set("Accept-Encoding", "gzip") // encode must not hold events back
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if want := map[string]int{"h1": 1, "h2c": 2}[proto]; resp.ProtoMajor != want {
		t.Fatalf("response over HTTP/%d, want HTTP/%d", resp.ProtoMajor, want)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("status %d: %s", resp.StatusCode, b)
	}
	er := readEvents(resp.Body, resp.Header.Get("Content-Encoding") == "gzip")
	var all []sseEvent
	last := ""
	for i, s := range tc.steps {
		// Everything the step must produce arrives before the upstream
		// sends the next chunk. A label may repeat (a chunk can give two
		// content_delta events), but nothing else may come in between.
		for matched := 0; matched < len(s.want); {
			ev, ok := er.next(t, i)
			if !ok {
				t.Fatalf("step %d: stream ended, want %s", i, s.want[matched])
			}
			all = append(all, ev)
			switch got := tc.label(t, ev); got {
			case s.want[matched]:
				matched++
				last = got
			case last:
			default:
				t.Fatalf("step %d: got %s (%s), want %s", i, got, ev.Data, s.want[matched])
			}
		}
		up.release <- struct{}{}
	}
	for {
		ev, ok := <-er.events
		if !ok {
			break
		}
		t.Errorf("unexpected event after the terminal one: %s %s", ev.Name, ev.Data)
	}
	if err := <-er.errc; err != io.EOF {
		t.Errorf("stream ended with %v, want a clean EOF", err)
	}
	tc.check(t, all, resp, up.lastBody())
}

// checkHeaders checks the headers every SSE protocol answers with
// (CONTRACT §5).
func checkHeaders(t *testing.T, resp *http.Response) {
	t.Helper()
	for k, want := range map[string]string{
		"Content-Type":      "text/event-stream",
		"Cache-Control":     "no-cache",
		"X-Accel-Buffering": "no",
		"X-Request-Id":      "client-req-1",
	} {
		if got := resp.Header.Get(k); !strings.HasPrefix(got, want) {
			t.Errorf("header %s = %q, want %q", k, got, want)
		}
	}
	if resp.Header.Get("Content-Length") != "" {
		t.Error("a stream must not have a Content-Length")
	}
}

// checkShaped checks the request the upstream received.
func checkShaped(t *testing.T, body []byte) {
	t.Helper()
	var req struct {
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
		Messages []struct {
			Role    string `json:"role"`
			Content string `json:"content"`
		} `json:"messages"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		t.Fatalf("upstream body: %v: %s", err, body)
	}
	if !req.Stream || !req.StreamOptions.IncludeUsage {
		t.Errorf("upstream body not forced to stream with usage: %s", body)
	}
	if len(req.Messages) == 0 || req.Messages[0].Role != "system" || req.Messages[0].Content != "You are a test." {
		t.Errorf("upstream body lacks the system prompt first: %s", body)
	}
}

// checkIDs checks that every event carries the same message_id and the
// client's request_id (gymbro and jsonseq, specs/000 §6.2).
func checkIDs(t *testing.T, events []sseEvent) {
	t.Helper()
	var msgID string
	for _, ev := range events {
		m := ev.json(t)
		id, _ := m["message_id"].(string)
		if msgID == "" {
			msgID = id
		}
		if id == "" || id != msgID || m["request_id"] != "client-req-1" {
			t.Errorf("event %s: message_id %v, request_id %v", ev.Name, m["message_id"], m["request_id"])
		}
	}
}

func find(events []sseEvent, label func(sseEvent) bool) []sseEvent {
	var out []sseEvent
	for _, ev := range events {
		if label(ev) {
			out = append(out, ev)
		}
	}
	return out
}

func named(name string) func(sseEvent) bool { return func(ev sseEvent) bool { return ev.Name == name } }

const openaiRequest = `{"model":"client-model","messages":[{"role":"user","content":"hi"}],"stream":true,"temperature":0.2}`

func protocolCases() []protocolCase {
	return []protocolCase{
		{
			protocol: "gymbro",
			request:  openaiRequest,
			label:    nameLabel,
			steps: []step{
				{stepRole, []string{"status", "status", "status"}},
				{stepReasoning, nil},
				{stepPhase, []string{"content_delta"}},
				{stepPhaseText, []string{"content_delta"}},
				{stepFinal, []string{"content_delta"}},
				{stepQueries, []string{"content_delta"}},
				{finishChunks, []string{"completed"}},
			},
			check: func(t *testing.T, events []sseEvent, resp *http.Response, up []byte) {
				checkHeaders(t, resp)
				checkShaped(t, up)
				checkIDs(t, events)
				states := []string{}
				for _, ev := range find(events, named("status")) {
					states = append(states, ev.json(t)["state"].(string))
				}
				if strings.Join(states, ",") != "queued,working,routed" {
					t.Errorf("status states %v", states)
				}
				routed := find(events, named("status"))[2].json(t)
				if routed["resolved_model"] != "up-model" || routed["upstream_request_id"] != "up-42" || routed["provider"] != "openai" {
					t.Errorf("routed status %v", routed)
				}
				var reply strings.Builder
				for i, ev := range find(events, named("content_delta")) {
					m := ev.json(t)
					if m["seq"] != float64(i+1) {
						t.Errorf("content_delta %d has seq %v", i, m["seq"])
					}
					reply.WriteString(m["delta"].(string))
				}
				want := `<thinking><phase id="1"><title>Plan</title>step one</phase></thinking><final>Hello world<!-- <serp_queries>` + "\n" + `["q1","q2"]` + "\n" + `</serp_queries> --></final>`
				if reply.String() != want {
					t.Errorf("reply %q\nwant  %q", reply.String(), want)
				}
				done := find(events, named("completed"))[0].json(t)
				meta, _ := done["metadata"].(map[string]any)
				usage, _ := meta["usage"].(map[string]any)
				if done["reply_len"] != float64(len([]rune(want))) || meta["finish_reason"] != "stop" || usage["total_tokens"] != float64(12) {
					t.Errorf("completed %v", done)
				}
			},
		},
		{
			protocol: "jsonseq",
			request:  openaiRequest,
			label:    nameLabel,
			steps: []step{
				{stepRole, []string{"status", "status", "status"}},
				{stepReasoning, nil},
				{stepPhase, []string{"thinking_start", "phase_start"}},
				{stepPhaseText, []string{"phase_delta", "thinking_end"}},
				{stepFinal, []string{"final_delta"}},
				// serp_queries waits for the answer's end, just before
				// final_end (specs/001 §2 order).
				{stepQueries, []string{"final_delta"}},
				{finishChunks, []string{"serp_queries", "final_end", "completed"}},
			},
			check: func(t *testing.T, events []sseEvent, resp *http.Response, up []byte) {
				checkHeaders(t, resp)
				checkShaped(t, up)
				checkIDs(t, events)
				ps := find(events, named("phase_start"))[0].json(t)
				pd := find(events, named("phase_delta"))[0].json(t)
				if ps["id"] != float64(1) || ps["title"] != "Plan" || pd["id"] != float64(1) || pd["text"] != "step one" {
					t.Errorf("phase events %v %v", ps, pd)
				}
				var answer strings.Builder
				for _, ev := range find(events, named("final_delta")) {
					answer.WriteString(ev.json(t)["text"].(string))
				}
				if answer.String() != "Hello world" {
					t.Errorf("answer %q", answer.String())
				}
				q := find(events, named("serp_queries"))[0].json(t)["queries"]
				if fmt.Sprint(q) != "[q1 q2]" {
					t.Errorf("queries %v", q)
				}
			},
		},
		{
			protocol: "skillpet",
			options:  "request_format skillpet\n\t\t\tmodel test-model",
			request:  `{"projectId":"p1","message":"hi","enableThinking":true,"conversationId":"conv-9"}`,
			label:    nameLabel,
			steps: []step{
				{stepRole, nil},
				{stepReasoning, []string{"thinking"}},
				{stepPhase, []string{"thinking"}},
				{stepPhaseText, []string{"thinking"}},
				{stepFinal, []string{"thinking_done", "token"}},
				{stepQueries, []string{"token", "resource"}},
				{finishChunks, []string{"done"}},
			},
			check: func(t *testing.T, events []sseEvent, resp *http.Response, up []byte) {
				checkHeaders(t, resp)
				checkShaped(t, up)
				var thinking, tokens strings.Builder
				for _, ev := range events {
					m := ev.json(t)
					if _, ok := m["message_id"]; ok {
						t.Errorf("skillpet event %s carries message_id", ev.Name)
					}
					switch ev.Name {
					case "thinking":
						thinking.WriteString(m["content"].(string))
					case "token":
						tokens.WriteString(m["content"].(string))
					}
				}
				if !strings.Contains(thinking.String(), "Let me think.") || !strings.Contains(thinking.String(), "**Plan**\n\nstep one") {
					t.Errorf("thinking %q", thinking.String())
				}
				if tokens.String() != "Hello world" {
					t.Errorf("tokens %q", tokens.String())
				}
				res := find(events, named("resource"))[0].json(t)
				if res["resourceType"] != "serp_queries" || fmt.Sprint(res["data"]) != "[q1 q2]" {
					t.Errorf("resource %v", res)
				}
				if done := find(events, named("done"))[0].json(t); done["conversationId"] != "conv-9" {
					t.Errorf("done %v", done)
				}
				if !strings.Contains(string(up), `"model":"test-model"`) {
					t.Errorf("skillpet request without the configured model: %s", up)
				}
			},
		},
		{
			protocol: "aisdk",
			request:  openaiRequest,
			label: func(t *testing.T, ev sseEvent) string {
				if ev.Data == "[DONE]" {
					return "[DONE]"
				}
				return ev.json(t)["type"].(string)
			},
			steps: []step{
				{stepRole, []string{"start"}},
				{stepReasoning, []string{"reasoning-start", "reasoning-delta"}},
				{stepPhase, []string{"reasoning-end", "data-phase"}},
				{stepPhaseText, []string{"reasoning-start", "reasoning-delta", "reasoning-end"}},
				{stepFinal, []string{"text-start", "text-delta"}},
				{stepQueries, []string{"text-delta", "text-end", "data-serp-queries"}},
				{finishChunks, []string{"finish", "[DONE]"}},
			},
			check: func(t *testing.T, events []sseEvent, resp *http.Response, up []byte) {
				checkHeaders(t, resp)
				checkShaped(t, up)
				if resp.Header.Get("x-vercel-ai-ui-message-stream") != "v1" {
					t.Error("no x-vercel-ai-ui-message-stream: v1 header")
				}
			},
		},
		{
			protocol: "openai",
			// A client that asks for usage gets the usage chunk (CONTRACT §7).
			request: strings.Replace(openaiRequest, `"stream":true`, `"stream":true,"stream_options":{"include_usage":true}`, 1),
			label: func(t *testing.T, ev sseEvent) string {
				if ev.Data == "[DONE]" {
					return "[DONE]"
				}
				m := ev.json(t)
				choices, _ := m["choices"].([]any)
				if len(choices) == 0 {
					return "usage"
				}
				c := choices[0].(map[string]any)
				d := c["delta"].(map[string]any)
				switch {
				case c["finish_reason"] != nil:
					return "finish"
				case d["role"] != nil:
					return "role"
				case d["reasoning_content"] != nil:
					return "reasoning"
				case d["content"] != nil:
					return "content"
				}
				return "other"
			},
			steps: []step{
				{stepRole, []string{"role"}},
				{stepReasoning, []string{"reasoning"}},
				{stepPhase, []string{"reasoning"}},
				{stepPhaseText, []string{"reasoning"}},
				{stepFinal, []string{"content"}},
				{stepQueries, []string{"content"}},
				{finishChunks, []string{"finish", "usage", "[DONE]"}},
			},
			check: func(t *testing.T, events []sseEvent, resp *http.Response, up []byte) {
				checkHeaders(t, resp)
				checkShaped(t, up)
				var id, content string
				for _, ev := range events {
					if ev.Data == "[DONE]" {
						continue
					}
					m := ev.json(t)
					if id == "" {
						id, _ = m["id"].(string)
					}
					if m["id"] != id || m["object"] != "chat.completion.chunk" {
						t.Errorf("chunk id %v object %v, want one stable id", m["id"], m["object"])
					}
					if choices, _ := m["choices"].([]any); len(choices) > 0 {
						d := choices[0].(map[string]any)["delta"].(map[string]any)
						if s, ok := d["content"].(string); ok {
							content += s
						}
					}
				}
				if content != "Hello world" {
					t.Errorf("content %q", content)
				}
				if !strings.Contains(string(up), `"temperature":0.2`) {
					t.Errorf("an untouched field was lost: %s", up)
				}
			},
		},
	}
}

// freePort is a helper for tests that need a port nothing listens on.
func freePort(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}
