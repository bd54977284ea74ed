package toolserver

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/toolserver/demo"
	"github.com/llmstream/llmstream/transform/agent"
)

func dur(d time.Duration) *config.Duration { c := config.Duration(d); return &c }

// newSet makes a Set of servers with short backoffs, started, and closed
// at the test's end; it waits until every static server is ready.
func newSet(t testing.TB, servers ...config.MCPServer) (*Set, *observer.ObservedLogs) {
	t.Helper()
	return newSetWith(t, nil, servers...)
}

// newSetWith is newSet with the Set's bounds changed by tune before Start.
func newSetWith(t testing.TB, tune func(*Set), servers ...config.MCPServer) (*Set, *observer.ObservedLogs) {
	t.Helper()
	core, logs := observer.New(zapcore.DebugLevel)
	s, err := New(&config.ToolServers{MCP: servers}, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	s.backoffMin, s.backoffMax, s.stopGrace = 20*time.Millisecond, 200*time.Millisecond, 500*time.Millisecond
	if tune != nil {
		tune(s)
	}
	s.Start()
	t.Cleanup(func() { _ = s.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatalf("servers not ready: %v", err)
	}
	return s, logs
}

// selfServer is the test binary as a stdio server.
func selfServer(name string) config.MCPServer {
	exe, err := os.Executable()
	if err != nil {
		panic(err)
	}
	return config.MCPServer{Name: name, Command: []string{exe}, Env: map[string]string{serveEnv: "1"}}
}

// text returns a result's text parts, joined.
func text(r agent.Result) string {
	var b strings.Builder
	for _, p := range r.Parts {
		if p.Kind == agent.PartText {
			b.WriteString(p.Text)
		}
	}
	return b.String()
}

func callT(s *Set, name, args string) agent.Result {
	return s.Call(context.Background(), name, []byte(args), CallOptions{})
}

// waitFor polls cond until it holds (a settle loop, not a sleep that
// guesses a duration).
func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestBuiltinDemo(t *testing.T) {
	old := demo.SearchStepDelay
	demo.SearchStepDelay = 300 * time.Millisecond
	defer func() { demo.SearchStepDelay = old }()
	s, _ := newSet(t, config.MCPServer{Name: "demo", Builtin: "demo", Labels: map[string]string{"get_weather": "天气"}, Approve: []string{"always_fail"}})
	tools := s.Tools(context.Background(), nil)
	var names []string
	for _, tl := range tools {
		names = append(names, tl.Name)
	}
	var want []string
	for _, dt := range demo.Tools() {
		want = append(want, dt.Tool.Name)
	}
	sort.Strings(want)
	if got := strings.Join(names, ","); got != strings.Join(want, ",") {
		t.Fatalf("tools = %s, want %s", got, strings.Join(want, ","))
	}
	w, _ := s.Lookup("get_weather")
	if w.Label != "天气" || w.Server != "demo" || !strings.Contains(string(w.InputSchema), `"city"`) || w.Approve {
		t.Errorf("get_weather = %+v", w)
	}
	if f, _ := s.Lookup("always_fail"); !f.Approve || f.Label != "Always fails" {
		t.Errorf("always_fail = %+v", f)
	}

	r := callT(s, "get_weather", `{"city":"Paris"}`)
	if r.IsError || !strings.Contains(text(r), "Paris:") || !strings.Contains(string(r.Structured), `"city":"Paris"`) {
		t.Errorf("get_weather = %+v", r)
	}
	if r2 := callT(s, "get_weather", `{"city":"Paris"}`); text(r2) != text(r) {
		t.Errorf("get_weather is not deterministic: %q then %q", text(r), text(r2))
	}
	if r := callT(s, "always_fail", `{"reason":"demo"}`); !r.IsError || !strings.Contains(text(r), "demo") {
		t.Errorf("always_fail = %+v", r)
	}

	var mu sync.Mutex
	var got []agent.Progress
	r = s.Call(context.Background(), "search_knowledge", []byte(`{"query":"what is MCP progress"}`), CallOptions{Progress: func(p agent.Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}})
	if r.IsError || !strings.Contains(text(r), "MCP") {
		t.Errorf("search_knowledge = %+v", r)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) == 0 || len(got) > 3 || got[0].Total != 3 || got[0].Message == "" {
		t.Errorf("progress = %+v, want 1 to 3 reports of 3 steps", got)
	}
}

// TestBuiltinDemoSleep: sleep reports progress each second, answers how
// long it slept, refuses a bad duration, and ends at once when cancelled.
func TestBuiltinDemoSleep(t *testing.T) {
	s, _ := newSet(t, config.MCPServer{Name: "demo", Builtin: "demo", Allow: []string{"sleep"}})
	var mu sync.Mutex
	var got []agent.Progress
	r := s.Call(context.Background(), "sleep", []byte(`{"seconds":1.2}`), CallOptions{Progress: func(p agent.Progress) {
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}})
	if r.IsError || text(r) != "Slept 1.2 seconds." {
		t.Errorf("sleep = %+v", r)
	}
	mu.Lock()
	if len(got) == 0 || got[0].Total != 2 || got[0].Message != "slept 0 of 1.2s" {
		t.Errorf("progress = %+v, want reports of 2 steps", got)
	}
	mu.Unlock()
	for _, bad := range []string{`{}`, `{"seconds":-1}`, `{"seconds":61}`, `{"seconds":"x"}`} {
		if r := callT(s, "sleep", bad); !r.IsError {
			t.Errorf("sleep %s = %+v, want an error", bad, r)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	done := make(chan agent.Result, 1)
	go func() { done <- s.Call(ctx, "sleep", []byte(`{"seconds":60}`), CallOptions{}) }()
	select {
	case r := <-done:
		if !r.IsError {
			t.Errorf("a cancelled sleep = %+v", r)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a cancelled sleep did not end")
	}
}

func TestCallErrors(t *testing.T) {
	s, logs := newSet(t, config.MCPServer{Name: "demo", Builtin: "demo", Allow: []string{"get_weather"}})
	tests := []struct {
		name, tool, args, want string
	}{
		{"unknown", "nope", `{}`, `Unknown tool "nope"`},
		{"not_allowed", "always_fail", `{}`, `Unknown tool "always_fail"`},
		{"args_not_object", "get_weather", `[1]`, "not a JSON object"},
		{"args_invalid", "get_weather", `{"city":`, "not a JSON object"},
		{"args_empty_is_object", "get_weather", ``, "needs a city"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := callT(s, tt.tool, tt.args)
			if !r.IsError || !strings.Contains(text(r), tt.want) {
				t.Errorf("result = %+v, want an error with %q", r, tt.want)
			}
		})
	}
	// Logs name server, tool, duration and outcome, never arguments.
	callT(s, "get_weather", `{"city":"SecretCity"}`)
	for _, e := range logs.All() {
		if strings.Contains(fmt.Sprint(e.ContextMap()), "SecretCity") || strings.Contains(e.Message, "SecretCity") {
			t.Errorf("a log line carries the arguments: %v %v", e.Message, e.ContextMap())
		}
	}
	calls := logs.FilterMessage("tool call").All()
	last := calls[len(calls)-1].ContextMap()
	if last["server"] != "demo" || last["tool"] != "get_weather" || last["outcome"] != "ok" || last["duration"] == nil {
		t.Errorf("call log = %v", last)
	}
}

func TestNameCollision(t *testing.T) {
	s, logs := newSet(t,
		config.MCPServer{Name: "first", Builtin: "demo"},
		config.MCPServer{Name: "second", Builtin: "demo"},
		config.MCPServer{Name: "third", Builtin: "demo", Prefix: "t_"},
	)
	// Warned as soon as both servers listed their tools, before any
	// request.
	// The demo's tools, in the order the SDK lists them (by name).
	var demoNames []string
	for _, dt := range demo.Tools() {
		demoNames = append(demoNames, dt.Tool.Name)
	}
	sort.Strings(demoNames)
	n := len(demoNames)
	waitFor(t, "the collision warnings", func() bool {
		return logs.FilterMessageSnippet("an earlier server offers the same name").Len() == n
	})
	var names, want []string
	for _, tl := range s.Tools(context.Background(), nil) {
		names = append(names, tl.Server+":"+tl.Name)
	}
	for _, d := range demoNames {
		want = append(want, "first:"+d)
	}
	for _, d := range demoNames {
		want = append(want, "third:t_"+d)
	}
	if got := strings.Join(names, ","); got != strings.Join(want, ",") {
		t.Errorf("tools = %s\nwant    %s", got, strings.Join(want, ","))
	}
	w := logs.FilterMessageSnippet("an earlier server offers the same name").All()
	if len(w) != n || w[0].ContextMap()["offered_from"] != "first" || w[0].ContextMap()["not_offered_from"] != "second" {
		t.Errorf("warnings = %v", w)
	}
	s.Tools(context.Background(), nil) // warned once only
	if got := logs.FilterMessageSnippet("an earlier server offers the same name").Len(); got != n {
		t.Errorf("%d warnings after a second listing, want %d", got, n)
	}
	if r := callT(s, "t_get_weather", `{"city":"Oslo"}`); r.IsError {
		t.Errorf("prefixed call = %+v", r)
	}
}

func TestStdio(t *testing.T) {
	t.Setenv("TOOLSERVER_SECRET", "caddy-secret")
	srv := selfServer("self")
	srv.Env["GIVEN"] = "{env.TOOLSERVER_SECRET}-given"
	s, logs := newSet(t, srv)
	if r := callT(s, "echo", `{"text":"hello"}`); r.IsError || text(r) != "hello" {
		t.Fatalf("echo = %+v", r)
	}
	// Only the configured environment, PATH and HOME reach the server.
	env := text(callT(s, "env", `{}`))
	var keys []string
	for _, kv := range strings.Split(env, "\n") {
		k, _, _ := strings.Cut(kv, "=")
		keys = append(keys, k)
	}
	if strings.Contains(env, "TOOLSERVER_SECRET") || !strings.Contains(env, "GIVEN=caddy-secret-given") {
		t.Errorf("server environment:\n%s", env)
	}
	for _, k := range keys {
		if k != "PATH" && k != "HOME" && k != "GIVEN" && k != serveEnv {
			t.Errorf("server environment has %s", k)
		}
	}
	// A line that is not JSON on stdout is dropped, not fatal; stderr is
	// logged at debug.
	if r := callT(s, "noisy", `{"text":"still here"}`); r.IsError || text(r) != "still here" {
		t.Errorf("noisy = %+v", r)
	}
	waitFor(t, "the stderr line in the log", func() bool {
		for _, e := range logs.FilterMessage("tool server stderr").All() {
			if e.ContextMap()["line"] == "and this goes to stderr" && e.Level == zapcore.DebugLevel {
				return true
			}
		}
		return false
	})
	if r := callT(s, "fail", `{}`); !r.IsError || text(r) != "it failed" {
		t.Errorf("fail = %+v", r)
	}
}

func pidOf(t testing.TB, s *Set) int {
	t.Helper()
	r := callT(s, "pid", `{}`)
	pid, err := strconv.Atoi(text(r))
	if err != nil {
		t.Fatalf("pid = %+v", r)
	}
	return pid
}

// restartedFrom reports whether the server answers again, from a
// process other than pid (a call may fail while the crash is noticed).
func restartedFrom(s *Set, pid int) bool {
	r := callT(s, "pid", `{}`)
	got, err := strconv.Atoi(text(r))
	return !r.IsError && err == nil && got != pid
}

// gone reports whether pid was reaped: no /proc entry (a zombie keeps
// one, with state Z).
func gone(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return errors.Is(err, os.ErrNotExist)
}

func TestStdioRestart(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	s, logs := newSet(t, selfServer("self"))
	pid := pidOf(t, s)
	// A crash mid-call: the call gets an error result it can read.
	r := callT(s, "crash", `{}`)
	if !r.IsError || !strings.Contains(text(r), "stopped during the call") {
		t.Errorf("crash = %+v", r)
	}
	waitFor(t, "the crashed server to be reaped", func() bool { return gone(pid) })
	// While it is down its tools are not offered; then it is back.
	waitFor(t, "the restart", func() bool { return restartedFrom(s, pid) })
	if n := logs.FilterMessageSnippet("tool server stopped").Len(); n != 1 {
		t.Errorf("%d stop warnings, want 1", n)
	}
	if e := logs.FilterMessageSnippet("tool server stopped").All()[0].ContextMap(); !strings.Contains(fmt.Sprint(e["exit"]), "exit status 3") {
		t.Errorf("stop log = %v", e)
	}
}

// TestProtocolGarbage: a server that breaks the protocol mid-call is
// restarted; the call gets an error result.
func TestProtocolGarbage(t *testing.T) {
	s, _ := newSet(t, selfServer("self"))
	pid := pidOf(t, s)
	if r := callT(s, "garbage", `{}`); !r.IsError || !strings.Contains(text(r), "stopped during the call") {
		t.Errorf("garbage = %+v", r)
	}
	waitFor(t, "the restart", func() bool { return restartedFrom(s, pid) })
}

func TestStdioDownAtStart(t *testing.T) {
	core, logs := observer.New(zapcore.DebugLevel)
	s, err := New(&config.ToolServers{MCP: []config.MCPServer{{Name: "missing", Command: []string{"/nonexistent/mcp-server"}}}}, zap.New(core))
	if err != nil {
		t.Fatal(err)
	}
	s.backoffMin, s.backoffMax = 10*time.Millisecond, 20*time.Millisecond
	s.Start()
	defer s.Close()
	waitFor(t, "retries", func() bool { return logs.FilterMessageSnippet("unavailable, retrying").Len() >= 3 })
	if w := logs.FilterMessageSnippet("unavailable, retrying").FilterLevelExact(zapcore.WarnLevel).Len(); w != 1 {
		t.Errorf("%d warnings, want 1 (then debug)", w)
	}
	if len(s.Tools(context.Background(), nil)) != 0 {
		t.Error("a server that is down offers tools")
	}
	if r := callT(s, "anything", `{}`); !r.IsError {
		t.Errorf("call = %+v", r)
	}
}

func TestTimeoutAndCancellation(t *testing.T) {
	srv := selfServer("self")
	srv.Timeout = dur(300 * time.Millisecond)
	s, _ := newSet(t, srv)
	dir := t.TempDir()

	t.Run("timeout", func(t *testing.T) {
		marker := filepath.Join(dir, "timeout")
		r := callT(s, "hang", fmt.Sprintf(`{"marker":%q}`, marker))
		if !r.IsError || !strings.Contains(text(r), "timed out after 300ms") {
			t.Errorf("hang = %+v", r)
		}
		waitFor(t, "the server to see the cancellation", func() bool { _, err := os.Stat(marker); return err == nil })
	})
	t.Run("caller_cancels", func(t *testing.T) {
		marker := filepath.Join(dir, "cancel")
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			time.Sleep(50 * time.Millisecond)
			cancel()
		}()
		r := s.Call(ctx, "hang", []byte(fmt.Sprintf(`{"marker":%q}`, marker)), CallOptions{})
		if !r.IsError || !strings.Contains(text(r), "cancelled") {
			t.Errorf("hang = %+v", r)
		}
		waitFor(t, "the server to see the cancellation", func() bool { _, err := os.Stat(marker); return err == nil })
	})
	t.Run("progress_resets_timeout", func(t *testing.T) {
		// 8 steps of 100ms: 800ms in all, over the 300ms timeout, but
		// each step starts it again.
		var n int
		var mu sync.Mutex
		r := s.Call(context.Background(), "progress", []byte(`{"steps":8,"every_ms":100}`), CallOptions{Progress: func(agent.Progress) {
			mu.Lock()
			n++
			mu.Unlock()
		}})
		if r.IsError || text(r) != "done after 8 steps" {
			t.Errorf("progress = %+v", r)
		}
		mu.Lock()
		defer mu.Unlock()
		if n == 0 || n > 8 {
			t.Errorf("%d progress reports, want 1 to 8 (rate-limited)", n)
		}
	})
	t.Run("cap", func(t *testing.T) {
		// Progress forever: the call ends at 10 times the timeout.
		marker := filepath.Join(dir, "cap")
		r := callT(s, "progress", fmt.Sprintf(`{"steps":0,"every_ms":50,"marker":%q}`, marker))
		if !r.IsError || !strings.Contains(text(r), "the most a call may take") || !strings.Contains(text(r), "3s") {
			t.Errorf("progress forever = %+v", r)
		}
		waitFor(t, "the server to see the cancellation", func() bool { _, err := os.Stat(marker); return err == nil })
	})
}

func TestLargeResults(t *testing.T) {
	s2, logs := newSetWith(t, func(s *Set) { s.maxMessage, s.maxBinary = 256<<10, 64<<10 }, selfServer("self"))
	pid := pidOf(t, s2)

	r := callT(s2, "big", `{"bytes":1000000}`)
	if !r.IsError || !strings.Contains(text(r), "larger than 262144 bytes") {
		t.Errorf("big = %+v", r)
	}
	if d := logs.FilterMessageSnippet("larger than the limit").All(); len(d) != 1 || d[0].ContextMap()["bytes"].(int64) < 1000000 {
		t.Errorf("drop log = %v", d)
	}
	// The session survived it.
	if pidOf(t, s2) != pid {
		t.Error("the server was restarted after a large result")
	}
	if r := callT(s2, "big", `{"bytes":100000}`); r.IsError || len(text(r)) != 100000 {
		t.Errorf("big under the bound: error %v, %d bytes", r.IsError, len(text(r)))
	}
	r = callT(s2, "image", `{"bytes":100000,"mime":"image/png"}`)
	if r.IsError || len(r.Parts) != 2 || r.Parts[0].Kind != agent.PartText || !strings.Contains(r.Parts[0].Text, "image (image/png, 100000 bytes) left out") || r.Parts[1].Text != "after the image" {
		t.Errorf("big image = %+v", r)
	}
	r = callT(s2, "image", `{"bytes":1000,"mime":"image/png"}`)
	if r.IsError || r.Parts[0].Kind != agent.PartImage || len(r.Parts[0].Data) != 1000 || r.Parts[0].MIMEType != "image/png" {
		t.Errorf("small image = %+v", r.Parts[0].Kind)
	}
}

// TestCloseLeavesNothing: Close stops and reaps the stdio server and ends
// every goroutine the Set started, also with a call still running.
func TestCloseLeavesNothing(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("reads /proc")
	}
	before := runtime.NumGoroutine()
	s, _ := newSet(t, selfServer("self"), config.MCPServer{Name: "demo", Builtin: "demo"})
	pid := pidOf(t, s)
	done := make(chan agent.Result)
	go func() { done <- callT(s, "hang", `{}`) }()
	time.Sleep(50 * time.Millisecond)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if r := <-done; !r.IsError {
		t.Errorf("running call after Close = %+v", r)
	}
	if !gone(pid) {
		t.Errorf("server process %d is still there after Close", pid)
	}
	waitFor(t, "goroutines to end", func() bool { return runtime.NumGoroutine() <= before })
	if r := callT(s, "echo", `{}`); !r.IsError {
		t.Errorf("call after Close = %+v", r)
	}
}

// TestBuiltinsAgree: config accepts exactly the builtin servers this
// package serves.
func TestBuiltinsAgree(t *testing.T) {
	if len(config.BuiltinServers) != len(builtins) {
		t.Errorf("config lists %v, toolserver serves %d", config.BuiltinServers, len(builtins))
	}
	for _, name := range config.BuiltinServers {
		if builtins[name] == nil {
			t.Errorf("config accepts builtin %q, which toolserver does not serve", name)
		}
	}
}
