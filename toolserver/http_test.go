package toolserver

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmstream/llmstream/config"
)

// httpServer serves testServer over streamable HTTP (SSE responses, or
// JSON ones with jsonResponse), with a whoami tool that answers the
// X-Token header its call came with, and counts the MCP sessions (the
// distinct Mcp-Session-Id values) by token.
func httpServer(t *testing.T, jsonResponse bool) (*httptest.Server, func() map[string]int) {
	t.Helper()
	var mu sync.Mutex
	seen := map[[2]string]bool{}
	sessions := map[string]int{}
	h := mcp.NewStreamableHTTPHandler(func(r *http.Request) *mcp.Server {
		s := testServer()
		s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Extra.Header.Get("X-Token") + "|" + req.Extra.Header.Get("Authorization")}}}, nil
		})
		return s
	}, &mcp.StreamableHTTPOptions{JSONResponse: jsonResponse})
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); id != "" {
			mu.Lock()
			k := [2]string{r.Header.Get("X-Token"), id}
			if !seen[k] {
				seen[k] = true
				sessions[k[0]]++
			}
			mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(ts.Close)
	return ts, func() map[string]int {
		mu.Lock()
		defer mu.Unlock()
		out := map[string]int{}
		for k, v := range sessions {
			out[k] = v
		}
		return out
	}
}

func TestHTTPStatic(t *testing.T) {
	for _, jsonResponse := range []bool{false, true} {
		name := "sse"
		if jsonResponse {
			name = "json"
		}
		t.Run(name, func(t *testing.T) {
			ts, _ := httpServer(t, jsonResponse)
			t.Setenv("TOOLSERVER_TEST_TOKEN", "from-env")
			s, _ := newSetWith(t, func(s *Set) { s.maxMessage = 256 << 10 }, config.MCPServer{
				Name: "remote", URL: ts.URL, Headers: map[string]string{"X-Token": "{env.TOOLSERVER_TEST_TOKEN}"},
			})
			if r := callT(s, "echo", `{"text":"over http"}`); r.IsError || text(r) != "over http" {
				t.Fatalf("echo = %+v", r)
			}
			// The configured header, and no Authorization of its own.
			if r := callT(s, "whoami", `{}`); text(r) != "from-env|" {
				t.Errorf("whoami = %q", text(r))
			}
			r := callT(s, "big", `{"bytes":1000000}`)
			if !r.IsError || !strings.Contains(text(r), "larger than 262144 bytes") {
				t.Errorf("big = %+v", r)
			}
			// The session survived the large result.
			if r := callT(s, "big", `{"bytes":1000}`); r.IsError || len(text(r)) != 1000 {
				t.Errorf("big after = %+v", r)
			}
			if r := callT(s, "fail", `{}`); !r.IsError || text(r) != "it failed" {
				t.Errorf("fail = %+v", r)
			}
			// A cancelled call reaches the server (notifications/cancelled).
			marker := filepath.Join(t.TempDir(), "cancelled")
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				time.Sleep(50 * time.Millisecond)
				cancel()
			}()
			if r := s.Call(ctx, "hang", []byte(fmt.Sprintf(`{"marker":%q}`, marker)), CallOptions{}); !r.IsError || !strings.Contains(text(r), "cancelled") {
				t.Errorf("hang = %+v", r)
			}
			waitFor(t, "the server to see the cancellation", func() bool { _, err := os.Stat(marker); return err == nil })
		})
	}
}

// TestHTTPPerUserSessions: a header that takes a request value gets a
// session per distinct value; each call carries its own request's value.
func TestHTTPPerUserSessions(t *testing.T) {
	ts, sessions := httpServer(t, false)
	goroutines := runtime.NumGoroutine()
	s, _ := newSet(t, config.MCPServer{
		Name: "remote", URL: ts.URL, Headers: map[string]string{"X-Token": "{http.request.header.X-User-Token}"},
	})
	user := func(token string) Resolver {
		return func(v string) string {
			return strings.ReplaceAll(v, "{http.request.header.X-User-Token}", token)
		}
	}
	if len(s.Tools(context.Background(), nil)) != 0 {
		t.Error("tools offered without request values")
	}
	for _, u := range []string{"alice", "bob", "alice", "bob"} {
		tools := s.Tools(context.Background(), user(u))
		if len(tools) == 0 {
			t.Fatalf("no tools for %s", u)
		}
		r := s.Call(context.Background(), "whoami", []byte(`{}`), CallOptions{Resolver: user(u)})
		if text(r) != u+"|" {
			t.Errorf("%s's call went as %q", u, text(r))
		}
	}
	if got := sessions(); got["alice"] != 1 || got["bob"] != 1 || len(got) != 2 {
		t.Errorf("sessions by token = %v, want one each", got)
	}
	// Lookup knows the tools a session listed.
	if _, ok := s.Lookup("whoami"); !ok {
		t.Error("Lookup(whoami) after a session listed it")
	}
	// Without a resolver the server cannot be reached.
	if r := callT(s, "whoami", `{}`); !r.IsError || !strings.Contains(text(r), "not connected") {
		t.Errorf("call without a resolver = %+v", r)
	}
	// Close ends every session and goroutine (the test server's
	// connection goroutines end as the client's connections close).
	_ = s.Close()
	waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= goroutines })
}

func TestHTTPIdleSessionsClosed(t *testing.T) {
	ts, sessions := httpServer(t, false)
	s, _ := newSetWith(t, func(s *Set) { s.idle = 50 * 1e6 }, config.MCPServer{
		Name: "remote", URL: ts.URL, Headers: map[string]string{"X-Token": "{http.request.header.X-User-Token}"},
	})
	alice := func(v string) string { return strings.ReplaceAll(v, "{http.request.header.X-User-Token}", "alice") }
	s.Tools(context.Background(), alice)
	srv := s.servers[0]
	waitFor(t, "the idle session to close", func() bool {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return len(srv.dyn) == 0
	})
	if r := s.Call(context.Background(), "whoami", []byte(`{}`), CallOptions{Resolver: alice}); text(r) != "alice|" {
		t.Errorf("whoami after idle close = %+v", r)
	}
	if got := sessions()["alice"]; got != 2 {
		t.Errorf("%d sessions for alice, want 2 (one closed when idle)", got)
	}
}

func TestHTTPDown(t *testing.T) {
	ts, _ := httpServer(t, false)
	url := ts.URL
	ts.Close()
	s, err := New(&config.ToolServers{MCP: []config.MCPServer{{Name: "remote", URL: url}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	defer s.Close()
	if r := callT(s, "echo", `{}`); !r.IsError {
		t.Errorf("call to a server that is down = %+v", r)
	}
}

// TestHTTPSessionBound: past the bound, the least recently used idle
// session is closed for the new one; every call still goes as its user.
func TestHTTPSessionBound(t *testing.T) {
	ts, sessions := httpServer(t, false)
	s, _ := newSetWith(t, func(s *Set) { s.maxDyn = 2 }, config.MCPServer{
		Name: "remote", URL: ts.URL, Headers: map[string]string{"X-Token": "{http.request.header.X-User-Token}"},
	})
	as := func(u string) CallOptions {
		return CallOptions{Resolver: func(v string) string { return strings.ReplaceAll(v, "{http.request.header.X-User-Token}", u) }}
	}
	for _, u := range []string{"a", "b", "c", "a"} {
		if r := s.Call(context.Background(), "whoami", []byte(`{}`), as(u)); text(r) != u+"|" {
			t.Errorf("%s's call = %+v", u, r)
		}
		srv := s.servers[0]
		srv.mu.Lock()
		n := len(srv.dyn)
		srv.mu.Unlock()
		if n > 2 {
			t.Errorf("%d sessions, bound 2", n)
		}
	}
	// a was evicted by c, then opened again.
	if got := sessions(); got["a"] != 2 || got["b"] != 1 || got["c"] != 1 {
		t.Errorf("sessions = %v", got)
	}
}
