package democmd

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/pflag"
)

// TestMain runs the registered command when asked, so that the test can
// start this binary as `caddy llmstream-demo-mcp` would run.
func TestMain(m *testing.M) {
	if os.Getenv("DEMOCMD_SERVE") != "" {
		cmd := caddycmd.Commands()["llmstream-demo-mcp"]
		fs := pflag.NewFlagSet(cmd.Name, pflag.ContinueOnError)
		fs.AddGoFlagSet(cmd.Flags)
		if f := os.Getenv("DEMOCMD_FAULT"); f != "" {
			_ = fs.Parse([]string{"--fault", f})
		}
		code, err := cmd.Func(caddycmd.Flags{FlagSet: fs})
		if err != nil {
			os.Stderr.WriteString(err.Error() + "\n")
		}
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestCommandServesDemo: the command is registered and serves the demo
// server over stdio to an MCP client.
func TestCommandServesDemo(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "DEMOCMD_SERVE=1")
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lyon"}`)})
	if err != nil {
		t.Fatal(err)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || !strings.HasPrefix(tc.Text, "Lyon:") {
		t.Errorf("get_weather = %+v", res.Content)
	}
}

// TestFaults: --fault die:2 ends the process at the second call, with the
// call unanswered; hang:2 never answers it, and the first call of each is
// answered as usual.
func TestFaults(t *testing.T) {
	for _, fault := range []string{"die:2", "hang:2"} {
		t.Run(fault, func(t *testing.T) {
			srv, err := server(fault)
			if err != nil {
				t.Fatal(err)
			}
			ct, st := mcp.NewInMemoryTransports()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() { _ = srv.Run(ctx, st) }()
			cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, ct, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer cs.Close()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lyon"}`)})
			if err != nil || res.IsError {
				t.Fatalf("first call = %+v, %v", res, err)
			}
			if fault != "hang:2" {
				return
			}
			callCtx, stop := context.WithTimeout(ctx, 100*time.Millisecond)
			defer stop()
			if _, err := cs.CallTool(callCtx, &mcp.CallToolParams{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lyon"}`)}); err == nil {
				t.Error("the hung call was answered")
			}
		})
	}
	if _, err := server("melt:1"); err == nil {
		t.Error("melt:1 accepted")
	}
}

// TestDieFault runs the command with --fault die:1 as a process: the first
// call ends it with exit status 3, and the client's call fails.
func TestDieFault(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), "DEMOCMD_SERVE=1", "DEMOCMD_FAULT=die:1")
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "get_weather", Arguments: json.RawMessage(`{"city":"Lyon"}`)}); err == nil {
		t.Error("the call was answered by a server that died")
	}
	// The transport waits for the process it started when the session
	// closes; a Wait of our own beside it could return before the exit
	// status is known ("Wait was already called").
	_ = cs.Close()
	if cmd.ProcessState == nil {
		_ = cmd.Wait()
	}
	if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 3 {
		t.Errorf("exit %v, want status 3", cmd.ProcessState)
	}
}
