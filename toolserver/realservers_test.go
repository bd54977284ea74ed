package toolserver

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform/agent"
)

// The real MCP servers from npm (issue 18 "How we will know"):
// @modelcontextprotocol/server-everything over stdio and streamable HTTP,
// and @modelcontextprotocol/server-filesystem over stdio, installed by
// `npm ci` in e2e/ (e2e/run.sh runs these tests). MCP_NODE_MODULES names
// another node_modules folder; MCP_REQUIRE_REAL=1 (set by e2e/run.sh)
// makes their absence a failure instead of a skip.

// nodeModules returns the node_modules holding the servers, or skips.
func nodeModules(t *testing.T) string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("MCP_REQUIRE_REAL") != "" {
		skip = t.Fatalf
	}
	dir := os.Getenv("MCP_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join("..", "e2e", "node_modules")
	}
	dir, _ = filepath.Abs(dir)
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed: the real MCP server tests need Node.js 20+ (bash e2e/run.sh installs the servers)")
	}
	for _, p := range []string{everythingJS(dir), filesystemJS(dir)} {
		if _, err := os.Stat(p); err != nil {
			skip("%s is missing: run `npm ci` in e2e/ (or set MCP_NODE_MODULES) for the real MCP server tests", p)
		}
	}
	return dir
}

func everythingJS(dir string) string {
	return filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js")
}

func filesystemJS(dir string) string {
	return filepath.Join(dir, "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
}

func TestRealServers(t *testing.T) {
	dir := nodeModules(t)
	t.Run("everything_stdio", func(t *testing.T) {
		t.Setenv("CADDY_SECRET", "not-for-tool-servers")
		s, _ := newSet(t, config.MCPServer{
			Name: "everything", Command: []string{"node", everythingJS(dir), "stdio"},
			Env: map[string]string{"GIVEN": "yes"}, Timeout: dur(20 * time.Second),
		})
		testEverything(t, s, 5<<20)

		env := text(callT(s, "get-env", `{}`))
		if strings.Contains(env, "CADDY_SECRET") || !strings.Contains(env, `"GIVEN": "yes"`) {
			t.Errorf("get-env: %.500s", env)
		}
		r := callT(s, "get-tiny-image", `{}`)
		hasImage := false
		for _, p := range r.Parts {
			hasImage = hasImage || p.Kind == agent.PartImage && p.MIMEType == "image/png" && len(p.Data) > 0
		}
		if r.IsError || !hasImage {
			t.Errorf("get-tiny-image = %+v", r.Parts)
		}

		// Killed mid-call: the call gets an error result, the server is
		// restarted and its tools come back.
		pid := serverPID(t, s)
		done := make(chan agent.Result)
		go func() {
			done <- callT(s, "trigger-long-running-operation", `{"duration":20,"steps":20}`)
		}()
		time.Sleep(300 * time.Millisecond)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		if r := <-done; !r.IsError || !strings.Contains(text(r), "stopped during the call") {
			t.Errorf("call of a killed server = %+v", r)
		}
		waitFor(t, "the restart", func() bool {
			p := serverPID(t, s)
			return p != 0 && p != pid && !callT(s, "echo", `{"message":"x"}`).IsError
		})
		if r := callT(s, "echo", `{"message":"back"}`); r.IsError {
			t.Errorf("echo after the restart = %+v", r)
		}
	})

	t.Run("everything_http", func(t *testing.T) {
		port := freePort(t)
		cmd := exec.Command("node", everythingJS(dir), "streamableHttp")
		cmd.Env = append(os.Environ(), "PORT="+port)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan struct{})
		go func() { _ = cmd.Wait(); close(exited) }()
		t.Cleanup(func() { _ = cmd.Process.Kill(); <-exited })
		waitFor(t, "server-everything to listen", func() bool {
			c, err := net.Dial("tcp", "127.0.0.1:"+port)
			if err == nil {
				c.Close()
			}
			return err == nil
		})
		// Its HTTP body limit (express: 100kb) bounds what echo can send
		// back; a 64KiB message bound makes a large result of it.
		s, _ := newSetWith(t, func(s *Set) { s.maxMessage = 64 << 10 }, config.MCPServer{
			Name: "everything", URL: "http://127.0.0.1:" + port + "/mcp", Timeout: dur(5 * time.Second),
		})
		testEverything(t, s, 90<<10)

		// Killed mid-call.
		done := make(chan agent.Result)
		go func() {
			done <- callT(s, "trigger-long-running-operation", `{"duration":20,"steps":20}`)
		}()
		time.Sleep(300 * time.Millisecond)
		_ = cmd.Process.Kill()
		select {
		case r := <-done:
			if !r.IsError {
				t.Errorf("call of a killed server = %+v", r)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("the call of a killed HTTP server did not end")
		}
	})

	t.Run("filesystem", func(t *testing.T) {
		root := t.TempDir()
		if err := os.WriteFile(filepath.Join(root, "notes.txt"), []byte("the secret word is swordfish\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s, _ := newSet(t, config.MCPServer{
			Name: "fs", Command: []string{"node", filesystemJS(dir), root},
			Allow: []string{"read_text_file", "list_directory"}, Prefix: "fs_",
		})
		var names []string
		for _, tl := range s.Tools(context.Background(), nil) {
			names = append(names, tl.Name)
		}
		if strings.Join(names, ",") != "fs_list_directory,fs_read_text_file" && strings.Join(names, ",") != "fs_read_text_file,fs_list_directory" {
			t.Errorf("tools = %v, want the two allowed, prefixed", names)
		}
		r := callT(s, "fs_read_text_file", fmt.Sprintf(`{"path":%q}`, filepath.Join(root, "notes.txt")))
		if r.IsError || !strings.Contains(text(r), "swordfish") {
			t.Errorf("read_text_file = %+v", r)
		}
		r = callT(s, "fs_read_text_file", `{"path":"/etc/hostname"}`)
		if !r.IsError || !strings.Contains(strings.ToLower(text(r)), "access denied") {
			t.Errorf("read outside the allowed directory = %+v", r)
		}
		if r := callT(s, "fs_write_file", `{"path":"x","content":"y"}`); !r.IsError || !strings.Contains(text(r), "Unknown tool") {
			t.Errorf("a tool not allowed = %+v", r)
		}
	})
}

// testEverything: what both transports of server-everything must do.
func testEverything(t *testing.T, s *Set, large int) {
	t.Helper()
	tools := s.Tools(context.Background(), nil)
	seen := map[string]bool{}
	for _, tl := range tools {
		seen[tl.Name] = true
	}
	for _, want := range []string{"echo", "get-sum", "trigger-long-running-operation", "get-resource-reference"} {
		if !seen[want] {
			t.Errorf("tool %s not offered (have %d tools)", want, len(tools))
		}
	}
	if e, _ := s.Lookup("echo"); e.Label != "Echo Tool" || !strings.Contains(string(e.InputSchema), `"message"`) {
		t.Errorf("echo = %+v", e)
	}
	if r := callT(s, "echo", `{"message":"hello"}`); r.IsError || text(r) != "Echo: hello" {
		t.Errorf("echo = %+v", r)
	}
	// A long-running operation with progress.
	var mu sync.Mutex
	var progress []agent.Progress
	r := s.Call(context.Background(), "trigger-long-running-operation", []byte(`{"duration":1.2,"steps":4}`), CallOptions{Progress: func(p agent.Progress) {
		mu.Lock()
		progress = append(progress, p)
		mu.Unlock()
	}})
	mu.Lock()
	if r.IsError || !strings.Contains(text(r), "completed") || len(progress) == 0 || progress[0].Total != 4 {
		t.Errorf("long-running = %+v, progress %+v", r, progress)
	}
	mu.Unlock()
	// A tool that errors.
	if r := callT(s, "get-resource-reference", `{"resourceType":"nonsense","resourceId":1}`); !r.IsError || !strings.Contains(text(r), "resourceType") {
		t.Errorf("get-resource-reference with a bad type = %+v", r)
	}
	// Arguments its schema refuses: the server's error, for the model.
	if r := callT(s, "get-sum", `{"a":"x"}`); !r.IsError {
		t.Errorf("get-sum with bad arguments = %+v", r)
	}
	// A large result: dropped, the session goes on.
	r = callT(s, "echo", fmt.Sprintf(`{"message":%q}`, strings.Repeat("z", large)))
	if !r.IsError || !strings.Contains(text(r), "larger than") {
		t.Errorf("large echo = error %v %.200s", r.IsError, text(r))
	}
	if r := callT(s, "get-sum", `{"a":2,"b":3}`); r.IsError || !strings.Contains(text(r), "5") {
		t.Errorf("get-sum after the large result = %+v", r)
	}
}

// serverPID returns the pid of the Set's first (stdio) server.
func serverPID(t *testing.T, s *Set) int {
	t.Helper()
	srv := s.servers[0]
	srv.mu.Lock()
	defer srv.mu.Unlock()
	if srv.cur == nil || srv.cur.proc == nil {
		return 0
	}
	return srv.cur.proc.cmd.Process.Pid
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return fmt.Sprint(l.Addr().(*net.TCPAddr).Port)
}
