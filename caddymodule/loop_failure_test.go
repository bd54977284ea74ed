package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/tidwall/gjson"
)

// The agent loop's failure matrix (CONTRACT.md §12, issue 18 "How we will
// know"): tool servers that are down, hang, crash mid-call, send garbage or
// 10 MB, and a client that leaves mid-call, over stdio (a server Caddy
// starts and supervises) and streamable HTTP (a server process of its
// own). After each case the client's stream must have ended as the
// contract says, and nothing may be left behind: goroutines back to the
// baseline, no child process more (none a zombie), no pipe or file
// descriptor more. The servers are this test binary, serving MCP tools
// that misbehave on demand (misbehaveEnv).

// misbehaveEnv makes the test binary an MCP server whose tools misbehave
// on demand: "stdio", or "http:<host:port>" for streamable HTTP.
const misbehaveEnv = "LLMSTREAM_TEST_MCP"

// misbehaveArgs are the arguments its tools take.
type misbehaveArgs struct {
	Marker string `json:"marker"` // a file written "cancelled" when the call is cancelled
	Bytes  int    `json:"bytes"`
}

// serveMisbehaving runs the misbehaving MCP server (TestMain) and exits.
func serveMisbehaving(mode string) {
	s := mcp.NewServer(&mcp.Implementation{Name: "misbehaving", Version: "0"}, nil)
	add := func(name string, h func(context.Context, *mcp.CallToolRequest, misbehaveArgs) (*mcp.CallToolResult, error)) {
		s.AddTool(&mcp.Tool{Name: name, Description: "a tool that " + name + "s", InputSchema: json.RawMessage(`{"type":"object"}`)},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				var a misbehaveArgs
				_ = json.Unmarshal(req.Params.Arguments, &a)
				return h(ctx, req, a)
			})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	cancelled := func(ctx context.Context, a misbehaveArgs) (*mcp.CallToolResult, error) {
		if a.Marker != "" {
			_ = os.WriteFile(a.Marker, []byte("cancelled"), 0o600)
		}
		return nil, ctx.Err()
	}
	add("ok", func(context.Context, *mcp.CallToolRequest, misbehaveArgs) (*mcp.CallToolResult, error) {
		return text("ok"), nil
	})
	// hang never answers: only a cancellation ends it.
	add("hang", func(ctx context.Context, _ *mcp.CallToolRequest, a misbehaveArgs) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		return cancelled(ctx, a)
	})
	// progress reports progress every 20ms until cancelled.
	add("progress", func(ctx context.Context, req *mcp.CallToolRequest, a misbehaveArgs) (*mcp.CallToolResult, error) {
		for i := 1; ; i++ {
			select {
			case <-ctx.Done():
				return cancelled(ctx, a)
			case <-time.After(20 * time.Millisecond):
			}
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i)})
		}
	})
	add("crash", func(context.Context, *mcp.CallToolRequest, misbehaveArgs) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	add("big", func(_ context.Context, _ *mcp.CallToolRequest, a misbehaveArgs) (*mcp.CallToolResult, error) {
		return text(strings.Repeat("x", a.Bytes)), nil
	})
	// garbage, over stdio, writes a line that starts as a JSON-RPC message
	// and is not JSON (over HTTP, the handler below answers its call with
	// such a body).
	add("garbage", func(ctx context.Context, _ *mcp.CallToolRequest, a misbehaveArgs) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","id":`)
		<-ctx.Done()
		return cancelled(ctx, a)
	})
	if addr, ok := strings.CutPrefix(mode, "http:"); ok {
		h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
		err := http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			body, _ := io.ReadAll(r.Body)
			if gjson.GetBytes(body, "method").String() == "tools/call" && gjson.GetBytes(body, "params.name").String() == "garbage" {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":`))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
			h.ServeHTTP(w, r)
		}))
		fmt.Fprintln(os.Stderr, "misbehaving server:", err)
		os.Exit(1)
	}
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "misbehaving server:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// testBinary is this test binary's path (os.Args[0] may be changed by a
// test that runs Caddy's command line).
func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return exe
}

// httpMisbehaving is the misbehaving server over streamable HTTP, in a
// process of its own that the test starts again when a case crashes it.
type httpMisbehaving struct {
	addr string
	cmd  *exec.Cmd
	done chan struct{}
}

func startHTTPMisbehaving(t *testing.T, addr string) *httpMisbehaving {
	t.Helper()
	m := &httpMisbehaving{addr: addr}
	m.start(t)
	t.Cleanup(func() { m.stop() })
	return m
}

func (m *httpMisbehaving) start(t *testing.T) {
	t.Helper()
	m.cmd = exec.Command(testBinary(t))
	m.cmd.Env = append(os.Environ(), misbehaveEnv+"=http:"+m.addr)
	m.cmd.Stderr = os.Stderr
	if err := m.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	m.done = make(chan struct{})
	go func(cmd *exec.Cmd, done chan struct{}) { _ = cmd.Wait(); close(done) }(m.cmd, m.done)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", m.addr)
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the HTTP MCP server did not listen on %s", m.addr)
		}
		time.Sleep(20 * time.Millisecond) // polling interval
	}
}

func (m *httpMisbehaving) pid() int { return m.cmd.Process.Pid }

func (m *httpMisbehaving) exited() bool {
	select {
	case <-m.done:
		return true
	default:
		return false
	}
}

func (m *httpMisbehaving) stop() {
	_ = m.cmd.Process.Kill()
	<-m.done
}

// leftBehind is what a case may leave behind: goroutines of this process,
// its child processes (Caddy's stdio servers), its open descriptors and
// how many of them are pipes.
type leftBehind struct {
	goroutines, children, zombies, fds, pipes int
}

func (l leftBehind) String() string {
	return fmt.Sprintf("%d goroutines, %d children (%d zombies), %d fds (%d pipes)", l.goroutines, l.children, l.zombies, l.fds, l.pipes)
}

// measure counts what is there now; the HTTP server's process (the
// test's, not Caddy's) is not counted.
func measure(t *testing.T, except int) leftBehind {
	t.Helper()
	l := leftBehind{goroutines: runtime.NumGoroutine()}
	me := os.Getpid()
	procs, _ := os.ReadDir("/proc")
	for _, p := range procs {
		pid, err := strconv.Atoi(p.Name())
		if err != nil || pid == except {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", p.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, so read after
		// its closing parenthesis.
		f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
		if len(f) < 2 || f[1] != strconv.Itoa(me) {
			continue
		}
		l.children++
		if f[0] == "Z" {
			l.zombies++
		}
	}
	fds, _ := os.ReadDir("/proc/self/fd")
	for _, fd := range fds {
		l.fds++
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && strings.HasPrefix(target, "pipe:") {
			l.pipes++
		}
	}
	return l
}

// failureSite serves, in front of by_round mocks (one per case: round 1
// calls the case's tool, round 2 quotes the result the model was given):
// /stdio/<case>/stream and /http/<case>/stream, skillpet routes whose
// tools are the misbehaving server's over stdio (two processes: one with a
// 500ms timeout for hang, one with 30s: 10 MB take seconds under -race)
// and over HTTP (the same two timeouts), and /down/<case>/stream, whose
// servers are a command that does not exist and a port nobody listens on.
func failureSite(t *testing.T, calls map[string]string, httpAddr, closedAddr string) site {
	t.Helper()
	dir := t.TempDir()
	var mocks strings.Builder
	for name, call := range calls {
		file := filepath.Join(dir, name+".json")
		if err := os.WriteFile(file, []byte(call), 0o600); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&mocks, `	handle /mock/%s/* {
		llm_mock {
			by_round
			record
			interval 0
			reply_text "Round 1."
			tool_calls_file %s
			reply_text "Round 2 saw: {{tool_result}}"
			tool_calls_file testdata/loop/no_calls.json
		}
	}
`, name, file)
	}
	route := func(prefix, servers string) string {
		return `	handle /` + prefix + `/* {
		llm_stream {
			protocol skillpet
			request_format skillpet
			model m
			format text
			heartbeat 0
			tools {
` + servers + `
			}
		}
		rewrite * /mock/{http.request.uri.path.1}/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
			# No pooled upstream connections: how many the pool holds
			# depends on timing (3 goroutines each), and the counts
			# after each case are about the tool servers.
			transport http {
				keepalive off
			}
		}
	}
`
	}
	stdio := func(name, timeout, allow string) string {
		return `				mcp ` + name + ` {
					command ` + testBinary(t) + `
					env ` + misbehaveEnv + ` stdio
					allow ` + allow + `
					timeout ` + timeout + `
				}
`
	}
	httpServer := func(name, timeout, allow string) string {
		return `				mcp ` + name + ` {
					url http://` + httpAddr + `/mcp
					allow ` + allow + `
					timeout ` + timeout + `
				}
`
	}
	const rest = "ok progress crash big garbage"
	body := mocks.String() +
		route("stdio", stdio("quick", "500ms", "hang")+stdio("slow", "30s", rest)) +
		route("http", httpServer("quick", "500ms", "hang")+httpServer("slow", "30s", rest)) +
		route("down", `				mcp nocommand {
					command `+filepath.Join(dir, "no-such-server")+`
				}
				mcp noport {
					url http://`+closedAddr+`/mcp
				}`)
	return startSite(t, "", body)
}

// failureTurn runs one skillpet turn on path and returns its events.
func failureTurn(t *testing.T, client *http.Client, s site, path string) []sseEvent {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := post(ctx, client, s.url(path), `{"projectId":"p1","message":"Run it."}`, nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	evs, err := parseSSE(string(raw))
	if err != nil {
		t.Fatalf("%s: %v\n%s", path, err, raw)
	}
	return evs
}

// loopEventNames lists a turn's events, without tokens, heartbeats and
// progress.
func loopEventNames(evs []sseEvent) string {
	var names []string
	for _, ev := range evs {
		switch ev.Name {
		case ":comment", "token", "tool_args_heartbeat", "status":
		default:
			names = append(names, ev.Name)
		}
	}
	return strings.Join(names, " ")
}

// toolResult returns the turn's tool_result, and round 2's text.
func toolResult(evs []sseEvent) (status, message, round2 string) {
	round := 1
	for _, ev := range evs {
		switch ev.Name {
		case "tool_result":
			status, message = gjson.Get(ev.Data, "status").String(), gjson.Get(ev.Data, "message").String()
		case "round_start":
			round++
		case "token":
			if round == 2 {
				round2 += gjson.Get(ev.Data, "content").String()
			}
		}
	}
	return status, message, round2
}

// TestLoopFailureMatrix runs every case over both transports and checks,
// after each, what the client got and that nothing was left behind. The
// table the test logs (-v) is the one in docs/tools.md.
func TestLoopFailureMatrix(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy in process, with MCP servers in processes of their own")
	}
	if _, err := os.Stat("/proc/self/fd"); err != nil {
		t.Skip("counts processes and descriptors in /proc")
	}
	dir := t.TempDir()
	marker := func(name string) string { return filepath.Join(dir, name) }
	calls := map[string]string{"ok": `[{"name":"ok","arguments":{}}]`, "down_ok": `[{"name":"ok","arguments":{}}]`, "plain": `[]`}
	for _, tr := range []string{"stdio", "http"} {
		calls["hang_"+tr] = `[{"name":"hang","arguments":{"marker":` + strconv.Quote(marker("hang_"+tr)) + `}}]`
		calls["leave_"+tr] = `[{"name":"progress","arguments":{"marker":` + strconv.Quote(marker("leave_"+tr)) + `}}]`
		calls["garbage_"+tr] = `[{"name":"garbage","arguments":{}}]`
		calls["big_"+tr] = `[{"name":"big","arguments":{"bytes":10485760}}]`
		calls["crash_"+tr] = `[{"name":"crash","arguments":{}}]`
	}
	httpAddr := freePort(t)
	closedAddr := freePort(t) // free, and nobody listens
	srv := startHTTPMisbehaving(t, httpAddr)
	s := failureSite(t, calls, httpAddr, closedAddr)
	client := newClient(t, "h1")

	// Warm up: one good turn on each transport, so that the servers, the
	// pools and the connections are part of the baseline.
	for _, tr := range []string{"stdio", "http"} {
		deadline := time.Now().Add(15 * time.Second)
		for {
			evs := failureTurn(t, client, s, "/"+tr+"/ok/stream")
			if st, _, _ := toolResult(evs); st == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the %s server's ok tool never ran: %s", tr, loopEventNames(evs))
			}
			time.Sleep(100 * time.Millisecond) // the servers connect in the background
		}
	}
	settle := func() {
		client.CloseIdleConnections()
		http.DefaultClient.CloseIdleConnections()
	}
	settle()
	stableGoroutines(t)
	base := measure(t, srv.pid())
	t.Logf("baseline: %v", base)

	// nothingLeft waits (bounded) until what is there is back to the
	// baseline, and fails with what is not.
	nothingLeft := func(t *testing.T, what string) leftBehind {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			settle()
			now := measure(t, srv.pid())
			if now.goroutines <= base.goroutines+3 && now.children == base.children && now.zombies == 0 &&
				now.pipes == base.pipes && now.fds <= base.fds+2 {
				return now
			}
			if time.Now().After(deadline) {
				var b bytes.Buffer
				_ = pprof.Lookup("goroutine").WriteTo(&b, 1)
				t.Fatalf("%s left behind: %v, baseline %v\n%s", what, now, base, b.String())
			}
			time.Sleep(50 * time.Millisecond) // polling interval
		}
	}

	type outcome struct {
		status string // the tool_result's status the client got
		has    string // in the result the model was given
	}
	for _, tr := range []string{"stdio", "http"} {
		// serverBack waits until a turn runs the server's tools again.
		serverBack := func(t *testing.T) {
			t.Helper()
			waitTrue(t, "the "+tr+" server to be back", func() bool {
				st, _, _ := toolResult(failureTurn(t, client, s, "/"+tr+"/ok/stream"))
				return st == "completed"
			})
		}
		cases := []struct {
			name string
			want outcome
			// then checks the server's side after the case.
			then func(t *testing.T)
		}{
			{"hang", outcome{"error", "timed out after 500ms"}, func(t *testing.T) {
				waitFile(t, marker("hang_"+tr), "the server got notifications/cancelled")
			}},
			// Garbage ends the session: the server is restarted (stdio) or
			// reconnected (HTTP), its tools not offered meanwhile.
			{"garbage", outcome{"error", "stopped during the call"}, func(t *testing.T) { serverBack(t) }},
			{"big", outcome{"error", "larger than"}, nil},
			{"crash", outcome{"error", map[string]string{"stdio": "stopped during the call", "http": "broke during the call"}[tr]}, func(t *testing.T) {
				if tr == "http" {
					// The HTTP server's process is the test's: start it
					// again, as its own supervisor would.
					waitTrue(t, "the HTTP server to exit", srv.exited)
					srv.start(t)
				}
				// Caddy's supervision restarted the stdio server.
				serverBack(t)
			}},
		}
		for _, c := range cases {
			t.Run(tr+"/"+c.name, func(t *testing.T) {
				evs := failureTurn(t, client, s, "/"+tr+"/"+c.name+"_"+tr+"/stream")
				status, msg, round2 := toolResult(evs)
				if got := loopEventNames(evs); got != "tool_start tool_result round_start done" {
					t.Errorf("events %s, want the call's start and result, round 2, done", got)
				}
				if status != c.want.status || !strings.Contains(msg, c.want.has) || !strings.HasPrefix(msg, "Error: ") {
					t.Errorf("tool_result %s %q, want %s with %q", status, msg, c.want.status, c.want.has)
				}
				if round2 != "Round 2 saw: "+msg && !strings.HasPrefix(round2, "Round 2 saw: "+msg[:min(len(msg), 200)]) {
					t.Errorf("round 2 %q does not quote the error the model was given", round2)
				}
				if c.then != nil {
					c.then(t)
				}
				left := nothingLeft(t, tr+"/"+c.name)
				t.Logf("%s/%s: client got tool_result %s %.80q, round 2, done; after: %v", tr, c.name, status, msg, left)
			})
		}

		t.Run(tr+"/client_leaves", func(t *testing.T) {
			before := streamsEnded(t)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			resp, err := post(ctx, client, s.url("/"+tr+"/leave_"+tr+"/stream"), `{"projectId":"p1","message":"Run it."}`, nil)
			if err != nil {
				t.Fatal(err)
			}
			// Leave at the call's first progress report: it is running.
			sr := startReading(resp.Body)
			sr.until(t, 10*time.Second, "a progress report", func(ev sseEvent) bool { return ev.Name == "status" })
			cancel()
			resp.Body.Close()
			waitEnded(t, before, "client_gone", 1, 10*time.Second)
			waitFile(t, marker("leave_"+tr), "the server got notifications/cancelled")
			if n := len(recordedAt(t, s, "/mock/leave_"+tr)); n != 1 {
				t.Errorf("%d upstream requests, want 1: a round was asked after the client left", n)
			}
			left := nothingLeft(t, tr+"/client_leaves")
			t.Logf("%s/client_leaves: the handler ended client_gone, the call was cancelled; after: %v", tr, left)
		})
	}

	t.Run("down", func(t *testing.T) {
		// Neither server is up: no tool of theirs is offered, and the
		// model, offered none, answers; the turn is a plain turn.
		evs := failureTurn(t, client, s, "/down/plain/stream")
		if got := loopEventNames(evs); got != "done" {
			t.Errorf("events %s, want a plain turn: the answer, done", got)
		}
		bodies := recordedAt(t, s, "/mock/plain")
		if len(bodies) != 1 || len(bodies[0].Tools) != 0 {
			t.Errorf("%d upstream requests, the first offered %d tools: want one, with no tool of the servers that are down", len(bodies), len(bodies[0].Tools))
		}
		// A model that calls one anyway: the call is not run (nothing
		// offers it), no round 2 is asked; it ends the turn as a call to
		// a tool the request did not declare (skillpet shows its
		// tool_start, as for any call the client is to run).
		evs = failureTurn(t, client, s, "/down/down_ok/stream")
		got := loopEventNames(evs)
		if got != "tool_start done" {
			t.Errorf("events %s, want the call shown and the turn ended", got)
		}
		if n := len(recordedAt(t, s, "/mock/down_ok")); n != 1 {
			t.Errorf("%d upstream requests, want 1", n)
		}
		left := nothingLeft(t, "down")
		t.Logf("down: no tool offered upstream, a plain turn; a call made anyway is not run (%s); after: %v", got, left)
	})

	// A config reload stops the stdio servers and reaps them: after an
	// empty config, Caddy has no child process left.
	t.Run("reload", func(t *testing.T) {
		startSite(t, "", "\trespond ok\n")
		waitTrue(t, "the stdio servers to be stopped", func() bool { return measure(t, srv.pid()).children == 0 })
		if l := measure(t, srv.pid()); l.zombies != 0 {
			t.Errorf("after the reload: %v", l)
		}
	})
}

// waitFile waits until file says "cancelled".
func waitFile(t *testing.T, file, what string) {
	t.Helper()
	waitTrue(t, what, func() bool {
		b, _ := os.ReadFile(file)
		return string(b) == "cancelled"
	})
}

// waitTrue polls cond for at most 15s.
func waitTrue(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond) // polling interval
	}
}

// recordedAt returns the chat requests the mock at prefix recorded.
func recordedAt(t *testing.T, s site, prefix string) []upstreamBody {
	t.Helper()
	resp, err := http.Get(s.url(prefix + "/llm_mock/requests"))
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
