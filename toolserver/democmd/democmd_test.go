package democmd

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestMain runs the registered command when asked, so that the test can
// start this binary as `caddy llmstream-demo-mcp` would run.
func TestMain(m *testing.M) {
	if os.Getenv("DEMOCMD_SERVE") != "" {
		code, err := caddycmd.Commands()["llmstream-demo-mcp"].Func(caddycmd.Flags{})
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
