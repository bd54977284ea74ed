package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// The responses route's state (CONTRACT.md §14): stored responses and
// previous_response_id chains, GET and DELETE, compaction, WebSocket mode.

// respRoute is a responses route at /v1/responses (and below) in front of
// upstream, keeping its responses in dir.
func respRoute(upstream, dir string, options ...string) string {
	return `
	handle /v1/responses* {
		llm_stream {
			request_format responses
			protocol responses
			format text
			heartbeat 0
			conversation {
				store file ` + dir + `
				` + strings.Join(options, "\n\t\t\t\t") + `
			}
		}
		rewrite * /v1/chat/completions
		reverse_proxy ` + upstream + ` {
			flush_interval -1
		}
	}
`
}

// respClient posts to a responses route as one client (its Authorization).
type respClient struct {
	t    *testing.T
	s    site
	auth string
	hc   *http.Client
}

func (c *respClient) do(method, path, body string) (int, map[string]any) {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, _ := http.NewRequest(method, c.s.url(path), rd)
	req.Header.Set("Content-Type", "application/json")
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		c.t.Fatalf("%s %s: %d %s", method, path, resp.StatusCode, raw)
	}
	return resp.StatusCode, m
}

// upstreamTexts returns each upstream message as "role: text".
func upstreamTexts(b upstreamBody) []string {
	var out []string
	for _, m := range b.Messages {
		line := m.Role + ": " + m.text()
		for _, c := range m.ToolCalls {
			line += " call:" + c.ID
		}
		out = append(out, line)
	}
	return out
}

func TestResponsesStoredChain(t *testing.T) {
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		if n == 2 {
			writeFlush(w, roleChunk, chunk(`{"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}}]}`),
				strings.Replace(finishChunks, `"stop"`, `"tool_calls"`, 1))
			return
		}
		writeFlush(w, roleChunk, content(fmt.Sprintf("reply %d", n)), finishChunks)
	})
	dir := t.TempDir()
	s := startSite(t, "", respRoute(u.hostPort(), dir))
	alice := &respClient{t: t, s: s, auth: "Bearer alice", hc: newClient(t, "h1")}
	bob := &respClient{t: t, s: s, auth: "Bearer bob", hc: newClient(t, "h1")}

	st, r1 := alice.do("POST", "/v1/responses", `{"model":"m","instructions":"Be brief.","input":"first"}`)
	if st != 200 || r1["store"] != true || r1["status"] != "completed" {
		t.Fatalf("first: %d %v", st, r1)
	}
	id1 := r1["id"].(string)
	tools := `"tools":[{"type":"function","name":"get_weather","parameters":{"type":"object"}}]`
	st, r2 := alice.do("POST", "/v1/responses", `{"model":"m","previous_response_id":"`+id1+`","input":"weather?",`+tools+`}`)
	if st != 200 || r2["previous_response_id"] != id1 {
		t.Fatalf("second: %d %v", st, r2)
	}
	// The chain precedes the new input; the first request's instructions
	// are not carried over (OpenAI's rule).
	if got, want := strings.Join(upstreamTexts(u.last(t)), "|"), "user: first|assistant: reply 1|user: weather?"; got != want {
		t.Errorf("second upstream request\n %s\nwant\n %s", got, want)
	}
	// A tool round trip on the chain: only the output is sent.
	id2 := r2["id"].(string)
	st, _ = alice.do("POST", "/v1/responses", `{"model":"m","previous_response_id":"`+id2+`","input":[{"type":"function_call_output","call_id":"call_w","output":"sunny"}],`+tools+`}`)
	if st != 200 {
		t.Fatalf("third: %d", st)
	}
	if got, want := strings.Join(upstreamTexts(u.last(t)), "|"), "user: first|assistant: reply 1|user: weather?|assistant:  call:call_w|tool: sunny"; got != want {
		t.Errorf("third upstream request\n %s\nwant\n %s", got, want)
	}

	// GET returns the Response; another client finds nothing.
	if st, got := alice.do("GET", "/v1/responses/"+id1, ""); st != 200 || got["id"] != id1 || got["status"] != "completed" {
		t.Errorf("GET: %d %v", st, got)
	}
	if st, _ := bob.do("GET", "/v1/responses/"+id1, ""); st != 404 {
		t.Errorf("another client's GET: %d", st)
	}
	if st, got := bob.do("POST", "/v1/responses", `{"model":"m","previous_response_id":"`+id1+`","input":"x"}`); st != 400 ||
		got["error"].(map[string]any)["code"] != "previous_response_not_found" {
		t.Errorf("another client continued it: %d %v", st, got)
	}
	// DELETE, then it is gone.
	if st, got := alice.do("DELETE", "/v1/responses/"+id1, ""); st != 200 || got["deleted"] != true {
		t.Errorf("DELETE: %d %v", st, got)
	}
	if st, _ := alice.do("GET", "/v1/responses/"+id1, ""); st != 404 {
		t.Errorf("GET after DELETE: %d", st)
	}
	n := u.count()
	if st, _ := alice.do("POST", "/v1/responses", `{"model":"m","previous_response_id":"`+id1+`","input":"x"}`); st != 400 || u.count() != n {
		t.Errorf("continuing a deleted response: %d, upstream requests %d → %d", st, n, u.count())
	}
	// store: false keeps nothing.
	_, r := alice.do("POST", "/v1/responses", `{"model":"m","store":false,"input":"x"}`)
	if r["store"] != false {
		t.Errorf("store false echoed %v", r["store"])
	}
	if st, _ := alice.do("GET", "/v1/responses/"+r["id"].(string), ""); st != 404 {
		t.Errorf("a store:false response was stored: %d", st)
	}
}

func TestResponsesCompaction(t *testing.T) {
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		if n == 1 {
			writeFlush(w, roleChunk, content("SUMMARY: the user is Alice; the launch is Tuesday."), finishChunks)
			return
		}
		writeFlush(w, roleChunk, content("ok"), finishChunks)
	})
	s := startSite(t, "", respRoute(u.hostPort(), t.TempDir()))
	c := &respClient{t: t, s: s, auth: "Bearer a", hc: newClient(t, "h1")}
	st, res := c.do("POST", "/v1/responses/compact", `{"model":"m","input":[{"role":"user","content":"I am Alice; launch Tuesday."},{"role":"assistant","content":"Noted."}]}`)
	out, _ := res["output"].([]any)
	if st != 200 || res["object"] != "response.compaction" || len(out) != 1 {
		t.Fatalf("compact: %d %v", st, res)
	}
	item := out[0].(map[string]any)
	if item["type"] != "compaction" || strings.Contains(item["encrypted_content"].(string), "Alice") {
		t.Fatalf("compaction item %v", item)
	}
	if msgs := upstreamTexts(u.last(t)); len(msgs) != 3 || !strings.HasPrefix(msgs[2], "user: Write a summary") {
		t.Errorf("summarising request %q", msgs)
	}
	// The item sent back becomes the summary for the upstream.
	raw, _ := json.Marshal(item)
	if st, _ := c.do("POST", "/v1/responses", `{"model":"m","input":[`+string(raw)+`,{"role":"user","content":"when?"}]}`); st != 200 {
		t.Fatalf("continuing from the compaction: %d", st)
	}
	if msgs := upstreamTexts(u.last(t)); len(msgs) != 2 || !strings.Contains(msgs[0], "SUMMARY: the user is Alice") || msgs[1] != "user: when?" {
		t.Errorf("upstream after compaction %q", msgs)
	}
	// Tampered, foreign, or without model: 400, nothing upstream.
	n := u.count()
	tampered := strings.Replace(string(raw), "llmstream.c1.", "llmstream.c1.x", 1)
	for _, body := range []string{`{"model":"m","input":[` + tampered + `]}`,
		`{"model":"m","input":[{"type":"compaction","encrypted_content":"gAAAAABfoo"}]}`} {
		if st, got := c.do("POST", "/v1/responses", body); st != 400 || got["error"].(map[string]any)["code"] != "invalid_encrypted_content" {
			t.Errorf("%s: %d %v", body, st, got)
		}
	}
	if st, got := c.do("POST", "/v1/responses/compact", `{"input":"x"}`); st != 400 || got["error"].(map[string]any)["param"] != "model" {
		t.Errorf("compact without model: %d %v", st, got)
	}
	if u.count() != n {
		t.Errorf("refused requests reached the upstream")
	}
}

// wsRead reads frames until a terminal response.* event or an error frame.
func wsRead(t *testing.T, ctx context.Context, conn *websocket.Conn) (types []string, last map[string]any) {
	t.Helper()
	for {
		_, data, err := conn.Read(ctx)
		if err != nil {
			t.Fatalf("read: %v (after %v)", err, types)
		}
		var m map[string]any
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatalf("frame %q: %v", data, err)
		}
		typ, _ := m["type"].(string)
		types = append(types, typ)
		switch typ {
		case "response.completed", "response.incomplete", "response.failed", "error":
			return types, m
		}
	}
}

func TestResponsesWebSocket(t *testing.T) {
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		writeFlush(w, roleChunk, content(fmt.Sprintf("reply %d", n)), finishChunks)
	})
	s := startSite(t, "", respRoute(u.hostPort(), t.TempDir()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	dial := func() *websocket.Conn {
		conn, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/v1/responses", &websocket.DialOptions{
			HTTPHeader: http.Header{"Authorization": {"Bearer ws"}}})
		if err != nil {
			t.Fatal(err)
		}
		return conn
	}
	conn := dial()
	send := func(c *websocket.Conn, frame string) {
		if err := c.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
	}
	send(conn, `{"type":"response.create","model":"m","store":false,"input":"first"}`)
	types, last := wsRead(t, ctx, conn)
	if types[0] != "response.created" || last["type"] != "response.completed" {
		t.Fatalf("first turn %v", types)
	}
	id := last["response"].(map[string]any)["id"].(string)
	// Continued from the socket's last response, with store false.
	send(conn, `{"type":"response.create","model":"m","store":false,"previous_response_id":"`+id+`","input":"second"}`)
	if _, last = wsRead(t, ctx, conn); last["type"] != "response.completed" {
		t.Fatalf("continuation: %v", last)
	}
	if got, want := strings.Join(upstreamTexts(u.last(t)), "|"), "user: first|assistant: reply 1|user: second"; got != want {
		t.Errorf("continuation upstream\n %s\nwant\n %s", got, want)
	}
	// Unknown ids, bad frames: an error frame, the socket stays open.
	send(conn, `{"type":"response.create","model":"m","store":false,"previous_response_id":"resp_nope","input":"x"}`)
	if _, last = wsRead(t, ctx, conn); last["type"] != "error" || last["status"] != 400.0 ||
		last["error"].(map[string]any)["code"] != "previous_response_not_found" {
		t.Errorf("unknown id: %v", last)
	}
	send(conn, `{"type":"response.cancel"}`)
	if _, last = wsRead(t, ctx, conn); last["type"] != "error" {
		t.Errorf("unknown frame: %v", last)
	}
	// A failed continuation forgets the response it continued.
	id2 := ""
	send(conn, `{"type":"response.create","model":"m","store":false,"input":"third"}`)
	if _, last = wsRead(t, ctx, conn); last["type"] == "response.completed" {
		id2 = last["response"].(map[string]any)["id"].(string)
	}
	send(conn, `{"type":"response.create","model":"m","store":false,"previous_response_id":"`+id2+`","input":[{"type":"function_call_output","call_id":"nope","output":"x"}]}`)
	if _, last = wsRead(t, ctx, conn); last["type"] != "error" {
		t.Errorf("orphan tool output: %v", last)
	}
	send(conn, `{"type":"response.create","model":"m","store":false,"previous_response_id":"`+id2+`","input":"again"}`)
	if _, last = wsRead(t, ctx, conn); last["type"] != "error" || last["error"].(map[string]any)["code"] != "previous_response_not_found" {
		t.Errorf("after a failed continuation: %v", last)
	}
	_ = conn.Close(websocket.StatusNormalClosure, "")
	// A new socket does not know the old one's store:false responses.
	conn2 := dial()
	defer conn2.Close(websocket.StatusNormalClosure, "")
	send(conn2, `{"type":"response.create","model":"m","store":false,"previous_response_id":"`+id+`","input":"x"}`)
	if _, last = wsRead(t, ctx, conn2); last["type"] != "error" {
		t.Errorf("another socket continued a store:false response: %v", last)
	}
}

// TestResponsesWebSocketClientLeaves checks that a client closing its
// socket mid-response cancels the upstream request.
func TestResponsesWebSocketClientLeaves(t *testing.T) {
	started := make(chan struct{}, 1)
	u := newRecordingUpstream(t, func(_ int, _ upstreamBody, w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		writeFlush(w, roleChunk, content("partial"))
		started <- struct{}{}
		<-r.Context().Done()
	})
	s := startSite(t, "", respRoute(u.hostPort(), t.TempDir()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/v1/responses", nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"m","input":"hi"}`))
	<-started
	_ = conn.CloseNow()
	select {
	case <-u.cancelled:
	case <-ctx.Done():
		t.Fatal("the upstream request was not cancelled when the socket closed")
	}
}

// FuzzWSFrame feeds the WebSocket frame reader whatever a client could
// send: it never panics, and a frame it takes becomes a JSON object body
// that streams, without the frame's type.
func FuzzWSFrame(f *testing.F) {
	for _, s := range []string{`{"type":"response.create","model":"m","input":"hi"}`, `{"type":"response.create","stream":false,"background":true}`,
		`{"type":"response.cancel"}`, `[]`, `null`, `{"type":1}`, `{"type":"response.create","previous_response_id":"resp_1"}`, "\xff"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		body, prev, ferr := wsFrameBody(data)
		if ferr != nil {
			if body != nil || ferr.code == "" || ferr.msg == "" {
				t.Fatalf("refused with %+v and a body", ferr)
			}
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(body, &m); err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		if _, ok := m["type"]; ok || string(m["stream"]) != "true" {
			t.Fatalf("body %s", body)
		}
		if prev != "" && !strings.Contains(string(body), "previous_response_id") {
			t.Fatalf("prev %q from %s", prev, body)
		}
	})
}

// TestResponsesWebSocketWarmup: generate: false (Codex's first frame on a
// new socket) answers an empty completed response without the upstream,
// and the next response continues from its input.
func TestResponsesWebSocketWarmup(t *testing.T) {
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		writeFlush(w, roleChunk, content("answer"), finishChunks)
	})
	s := startSite(t, "", respRoute(u.hostPort(), t.TempDir()))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/v1/responses", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(websocket.StatusNormalClosure, "")
	_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"m","store":false,"generate":false,"instructions":"I","input":"warm"}`))
	_, last := wsRead(t, ctx, conn)
	r, _ := last["response"].(map[string]any)
	if last["type"] != "response.completed" || len(r["output"].([]any)) != 0 || u.count() != 0 {
		t.Fatalf("warm-up: %v, %d upstream requests", last, u.count())
	}
	_ = conn.Write(ctx, websocket.MessageText, []byte(`{"type":"response.create","model":"m","store":false,"previous_response_id":"`+r["id"].(string)+`","input":"next"}`))
	if _, last = wsRead(t, ctx, conn); last["type"] != "response.completed" {
		t.Fatalf("after the warm-up: %v", last)
	}
	if got := strings.Join(upstreamTexts(u.last(t)), "|"); got != "user: warm|user: next" {
		t.Errorf("upstream %q", got)
	}
}

// TestResponsesWebSocketFailures: CONTRACT §6 over a WebSocket. An
// upstream that is down, or that breaks off mid-reply, fails the turn in
// the protocol's way (an error frame before the response exists,
// response.failed after), and the socket goes on serving the next
// response.create.
func TestResponsesWebSocketFailures(t *testing.T) {
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		if n == 1 {
			writeFlush(w, roleChunk, content("partial"))
			hangUp(w)
			return
		}
		writeFlush(w, roleChunk, content("whole"), finishChunks)
	})
	down := freePort(t) // nothing listens there
	s := startSite(t, "", respRoute(u.hostPort(), t.TempDir())+
		strings.Replace(respRoute(down, t.TempDir()), "handle /v1/responses*", "handle /down/v1/responses*", 1))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	turn := func(conn *websocket.Conn, frame string) ([]string, map[string]any) {
		if err := conn.Write(ctx, websocket.MessageText, []byte(frame)); err != nil {
			t.Fatal(err)
		}
		return wsRead(t, ctx, conn)
	}
	conn, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/v1/responses", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(websocket.StatusNormalClosure, "")
	types, last := turn(conn, `{"type":"response.create","model":"m","input":"x"}`)
	if last["type"] != "response.failed" || !strings.Contains(strings.Join(types, " "), "response.output_text.delta") {
		t.Errorf("broken mid-reply: %v then %v", types, last)
	}
	if _, last = turn(conn, `{"type":"response.create","model":"m","input":"again"}`); last["type"] != "response.completed" {
		t.Errorf("the next turn on the socket: %v", last)
	}

	conn2, _, err := websocket.Dial(ctx, "ws://"+s.addr+"/down/v1/responses", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn2.Close(websocket.StatusNormalClosure, "")
	_, last = turn(conn2, `{"type":"response.create","model":"m","input":"x"}`)
	if st, _ := last["status"].(float64); last["type"] != "error" && last["type"] != "response.failed" || last["type"] == "error" && st < 500 {
		t.Errorf("upstream down: %v", last)
	}
	if _, last = turn(conn2, `{"type":"response.create","model":"m","input":"x"}`); last["type"] != "error" && last["type"] != "response.failed" {
		t.Errorf("the socket did not go on after a failure: %v", last)
	}
}
