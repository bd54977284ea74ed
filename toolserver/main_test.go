package toolserver

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmstream/llmstream/toolserver/demo"
)

// serveEnv makes the test binary an MCP server over stdio (testServer,
// or the demo server when it is "demo"): the supervision tests start it
// as a `command` server, so that they need no Node.
const serveEnv = "TOOLSERVER_TEST_SERVE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(serveEnv); mode != "" {
		srv := testServer()
		if mode == "demo" {
			srv = demo.New()
		}
		if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
			fmt.Fprintln(os.Stderr, "test server:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// testArgs are the arguments the test server's tools take.
type testArgs struct {
	Text     string `json:"text"`
	Bytes    int    `json:"bytes"`
	Steps    int    `json:"steps"`
	EveryMS  int    `json:"every_ms"`
	Marker   string `json:"marker"`
	MIMEType string `json:"mime"`
}

// testServer is the MCP server the test binary serves: tools that
// misbehave on demand.
func testServer() *mcp.Server {
	// Revision 2025-11-25: a server that asks the user while it holds the
	// call open (elicitation/create), as server-everything does.
	s := mcp.NewServer(&mcp.Implementation{Name: "toolserver-test", Version: "0"},
		&mcp.ServerOptions{SupportedProtocolVersions: []string{"2025-11-25"}})
	obj := json.RawMessage(`{"type":"object"}`)
	add := func(name string, h func(ctx context.Context, req *mcp.CallToolRequest, a testArgs) (*mcp.CallToolResult, error)) {
		s.AddTool(&mcp.Tool{Name: name, Description: "test tool " + name, InputSchema: obj}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a testArgs
			_ = json.Unmarshal(req.Params.Arguments, &a)
			return h(ctx, req, a)
		})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	add("echo", func(_ context.Context, _ *mcp.CallToolRequest, a testArgs) (*mcp.CallToolResult, error) {
		return text(a.Text), nil
	})
	add("pid", func(context.Context, *mcp.CallToolRequest, testArgs) (*mcp.CallToolResult, error) {
		return text(fmt.Sprint(os.Getpid())), nil
	})
	add("env", func(context.Context, *mcp.CallToolRequest, testArgs) (*mcp.CallToolResult, error) {
		env := os.Environ()
		sort.Strings(env)
		return text(strings.Join(env, "\n")), nil
	})
	add("crash", func(context.Context, *mcp.CallToolRequest, testArgs) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	// hang waits until the call is cancelled, and then writes "cancelled"
	// to the marker file: the proof that notifications/cancelled arrived.
	add("hang", func(ctx context.Context, _ *mcp.CallToolRequest, a testArgs) (*mcp.CallToolResult, error) {
		<-ctx.Done()
		if a.Marker != "" {
			_ = os.WriteFile(a.Marker, []byte("cancelled"), 0o600)
		}
		return nil, ctx.Err()
	})
	// progress sends Steps notifications, one every EveryMS (Steps 0:
	// forever), then answers.
	add("progress", func(ctx context.Context, req *mcp.CallToolRequest, a testArgs) (*mcp.CallToolResult, error) {
		for i := 1; a.Steps == 0 || i <= a.Steps; i++ {
			select {
			case <-ctx.Done():
				if a.Marker != "" {
					_ = os.WriteFile(a.Marker, []byte("cancelled"), 0o600)
				}
				return nil, ctx.Err()
			case <-time.After(time.Duration(a.EveryMS) * time.Millisecond):
			}
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
				ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Total: float64(a.Steps), Message: fmt.Sprintf("step %d", i),
			})
		}
		return text(fmt.Sprintf("done after %d steps", a.Steps)), nil
	})
	add("big", func(_ context.Context, _ *mcp.CallToolRequest, a testArgs) (*mcp.CallToolResult, error) {
		return text(strings.Repeat("x", a.Bytes)), nil
	})
	add("image", func(_ context.Context, _ *mcp.CallToolRequest, a testArgs) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{
			&mcp.ImageContent{Data: make([]byte, a.Bytes), MIMEType: a.MIMEType},
			&mcp.TextContent{Text: "after the image"},
		}}, nil
	})
	// noisy writes a line that is not JSON to stdout before it answers,
	// as a server that logs to stdout would.
	add("noisy", func(_ context.Context, _ *mcp.CallToolRequest, a testArgs) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stdout, "this is a log line, not JSON")
		fmt.Fprintln(os.Stderr, "and this goes to stderr")
		return text(a.Text), nil
	})
	// garbage breaks the protocol: a line that looks like JSON and is not.
	add("garbage", func(ctx context.Context, _ *mcp.CallToolRequest, _ testArgs) (*mcp.CallToolResult, error) {
		fmt.Fprintln(os.Stdout, `{"jsonrpc":"2.0","id":`)
		<-ctx.Done()
		return nil, ctx.Err()
	})
	// ask asks the user one choice while the call stays open (an
	// elicitation/create, as MCP 2025-11-25 servers ask), then answers
	// with what the user said. With Marker set, a cancelled call writes
	// "cancelled" there.
	add("ask", func(ctx context.Context, req *mcp.CallToolRequest, a testArgs) (*mcp.CallToolResult, error) {
		res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{
			Message:         "Pick a color",
			RequestedSchema: json.RawMessage(`{"type":"object","properties":{"color":{"type":"string","enum":["red","blue"]}},"required":["color"]}`),
		})
		if err != nil || res.Action == "cancel" {
			// Told that no answer comes: the question dismissed, or the
			// call cancelled.
			if a.Marker != "" && (ctx.Err() != nil || res != nil) {
				_ = os.WriteFile(a.Marker, []byte("cancelled"), 0o600)
			}
			if err != nil {
				return nil, err
			}
		}
		b, _ := json.Marshal(res.Content)
		return text(res.Action + " " + string(b)), nil
	})
	add("fail", func(context.Context, *mcp.CallToolRequest, testArgs) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "it failed"}}}, nil
	})
	return s
}
