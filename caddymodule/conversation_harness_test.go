package caddymodule

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/llmstream/llmstream/conversation"
)

// The conversation tests' helpers: a conversation route on a fresh port,
// and a client that speaks to it as @skillpet/chat does (specs/002 §2).

// convRoute is the site body of a conversation route at /skillpet/ in
// front of upstream (an address, or "self" for an llm_mock at /mock/ on
// the same site), with the conversation block's options.
func convRoute(upstream, mock string, options ...string) string {
	rewrite := "/v1/chat/completions"
	if mock != "" {
		rewrite = "/mock/v1/chat/completions"
	}
	body := `
	handle /skillpet/* {
		llm_stream {
			request_format skillpet
			protocol skillpet
			format text
			heartbeat 0
			model conv-model
			system_prompt_text "You are the conversation test agent."
			tool ask_user
			conversation {
				` + strings.Join(options, "\n\t\t\t\t") + `
			}
		}
		rewrite * ` + rewrite + `
		reverse_proxy ` + upstream + ` {
			flush_interval -1
		}
	}
`
	if mock != "" {
		body += "\thandle /mock/* {\n\t\tllm_mock {\n\t\t\t" + mock + "\n\t\t}\n\t}\n"
	}
	return body
}

// startConvSite loads a site whose body route() builds for the site's own
// address (a mock on the same site is proxied to it).
func startConvSite(t *testing.T, route func(addr string) string) site {
	t.Helper()
	_, port, _ := net.SplitHostPort(freePort(t))
	s := site{addr: "localhost:" + port}
	caddytest.NewTester(t).InitServer(caddyGlobal("")+"\nhttp://"+s.addr+" {\n"+route(s.addr)+"}\n", "caddyfile")
	return s
}

// chatClient is a @skillpet/chat component of one user: its requests
// carry auth as the Authorization header ("" for none).
type chatClient struct {
	t    *testing.T
	base string // http://host:port/skillpet
	auth string
	hc   *http.Client
}

func newChatClient(t *testing.T, base, auth string) *chatClient {
	return &chatClient{t: t, base: base, auth: auth, hc: newClient(t, "h1")}
}

func (c *chatClient) do(ctx context.Context, method, url, body string) *http.Response {
	c.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		c.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.auth != "" {
		req.Header.Set("Authorization", c.auth)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// chatInit is the part of ChatInitData the tests read (specs/002 §2.2).
type chatInit struct {
	Agent        struct{ ID, Name, AvatarURL, Description string }
	Capabilities struct {
		Thinking, Search struct{ Enabled, DefaultOn bool }
		Reset            struct {
			Enabled  bool
			ClearURL string
		}
		QueuedSend *struct {
			Enabled      bool
			MaxQueueSize int
		}
	}
	UserAvatarURL string
	Messages      []conversation.HistoryMessage
}

// init calls GET …/init/{projectId}; status 200 is required.
func (c *chatClient) init(project string) chatInit {
	c.t.Helper()
	status, body := c.call(http.MethodGet, c.base+"/init/"+project, "")
	if status != http.StatusOK {
		c.t.Fatalf("init %s: %d %s", project, status, body)
	}
	var d chatInit
	if err := json.Unmarshal([]byte(body), &d); err != nil {
		c.t.Fatalf("init: %v: %s", err, body)
	}
	if d.Messages == nil && !strings.Contains(body, `"messages":[]`) {
		c.t.Fatalf("init has no messages array: %s", body)
	}
	return d
}

// call makes a request and returns its status and body.
func (c *chatClient) call(method, url, body string) (int, string) {
	c.t.Helper()
	resp := c.do(context.Background(), method, url, body)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// stream posts one message and returns the events of a 200 stream; any
// other status fails the test unless wantStatus names it, when the body
// is returned as the one "event" with name ":body".
func (c *chatClient) stream(project, message string, wantStatus ...int) []sseEvent {
	c.t.Helper()
	b, _ := json.Marshal(map[string]any{"projectId": project, "message": message, "enableThinking": true})
	resp := c.do(context.Background(), http.MethodPost, c.base+"/stream", string(b))
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		if len(wantStatus) == 1 && wantStatus[0] == resp.StatusCode {
			return []sseEvent{{Name: ":body", Data: string(raw)}}
		}
		c.t.Fatalf("stream: %d %s", resp.StatusCode, raw)
	}
	evs, err := parseSSE(string(raw))
	if err != nil {
		c.t.Fatalf("stream: %v", err)
	}
	return evs
}

// tokens joins the token events' text.
func tokens(t *testing.T, evs []sseEvent) string {
	var b strings.Builder
	for _, e := range evs {
		if e.Name == "token" {
			b.WriteString(e.json(t)["content"].(string))
		}
	}
	return b.String()
}

// lastEvent is the name of the stream's last event.
func lastEvent(evs []sseEvent) string {
	if len(evs) == 0 {
		return ""
	}
	return evs[len(evs)-1].Name
}

// recorded returns the request bodies the site's llm_mock received.
func recorded(t *testing.T, s site) []upstreamBody {
	t.Helper()
	resp, err := http.Get(s.url("/mock/llm_mock/requests"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var bodies []upstreamBody
	if err := json.NewDecoder(resp.Body).Decode(&bodies); err != nil {
		t.Fatal(err)
	}
	return bodies
}

// upstreamBody is what the tests read of a request sent upstream.
type upstreamBody struct {
	Model    string
	Stream   bool
	Tools    []json.RawMessage
	Messages []upstreamMsg
}

type upstreamMsg struct {
	Role       string
	Content    json.RawMessage
	ToolCallID string `json:"tool_call_id"`
	ToolCalls  []struct {
		ID       string
		Type     string
		Function struct{ Name, Arguments string }
	} `json:"tool_calls"`
}

// text is a message's content as a string ("" when it is not one).
func (m upstreamMsg) text() string {
	var s string
	_ = json.Unmarshal(m.Content, &s)
	return s
}

// roles lists the messages' roles.
func roles(msgs []upstreamMsg) string {
	var r []string
	for _, m := range msgs {
		r = append(r, m.Role)
	}
	return strings.Join(r, ",")
}

// storedAssistant decodes a _pub_asst record (specs/002 §4.2).
type storedAssistant struct {
	T         string `json:"_t"`
	Text      string
	Status    string
	ToolCalls []struct {
		ID       string
		Function struct{ Name, Arguments string }
	} `json:"tool_calls"`
	Parts []json.RawMessage
}

func decodeAssistant(t *testing.T, m conversation.HistoryMessage) storedAssistant {
	t.Helper()
	var a storedAssistant
	if m.Role != "assistant" || json.Unmarshal([]byte(m.Content), &a) != nil || a.T != "_pub_asst" {
		t.Fatalf("not a _pub_asst record: %+v", m)
	}
	return a
}

// storedTool decodes a _pub_tool record (specs/002 §4.3).
type storedTool struct {
	T          string `json:"_t"`
	ToolCallID string
	Body       string
}

func decodeTool(t *testing.T, m conversation.HistoryMessage) storedTool {
	t.Helper()
	var tl storedTool
	if m.Role != "tool" || json.Unmarshal([]byte(m.Content), &tl) != nil || tl.T != "_pub_tool" {
		t.Fatalf("not a _pub_tool record: %+v", m)
	}
	return tl
}

// recordingUpstream is a fake upstream that keeps every request body and
// answers each with the test's script, which gets the request's number
// (from 1) and its decoded body.
type recordingUpstream struct {
	*httptest.Server
	mu        sync.Mutex
	bodies    []upstreamBody
	cancelled chan struct{}
}

func newRecordingUpstream(t testing.TB, script func(n int, b upstreamBody, w http.ResponseWriter, r *http.Request)) *recordingUpstream {
	u := &recordingUpstream{cancelled: make(chan struct{}, 16)}
	stop := make(chan struct{})
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, _ := io.ReadAll(r.Body)
		var b upstreamBody
		if err := json.Unmarshal(raw, &b); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		u.mu.Lock()
		u.bodies = append(u.bodies, b)
		n := len(u.bodies)
		u.mu.Unlock()
		script(n, b, w, r.WithContext(stopContext(r.Context(), stop)))
		if r.Context().Err() != nil {
			u.cancelled <- struct{}{}
		}
	}))
	t.Cleanup(func() {
		close(stop)
		u.Close()
	})
	return u
}

// stopContext ends with ctx or when stop closes (the test's end).
func stopContext(ctx context.Context, stop chan struct{}) context.Context {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx
}

func (u *recordingUpstream) hostPort() string { return strings.TrimPrefix(u.URL, "http://") }

// last returns the last request body.
func (u *recordingUpstream) last(t *testing.T) upstreamBody {
	t.Helper()
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.bodies) == 0 {
		t.Fatal("the upstream got no request")
	}
	return u.bodies[len(u.bodies)-1]
}

// count returns how many requests the upstream got.
func (u *recordingUpstream) count() int {
	u.mu.Lock()
	defer u.mu.Unlock()
	return len(u.bodies)
}
