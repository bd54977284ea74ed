// Package democmd registers `caddy llmstream-demo-mcp`: the built-in demo
// MCP server (toolserver/demo) served over stdio, so that it can also be a
// route's `command` server, or be tried with any MCP client.
package democmd

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmstream/llmstream/toolserver/demo"
)

func init() {
	fs := flag.NewFlagSet("llmstream-demo-mcp", flag.ExitOnError)
	fs.String("fault", "", "die:N or hang:N: the N-th call (and every N-th after it) ends the process, or never answers (the load harness's tool faults)")
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "llmstream-demo-mcp",
		Usage: "[--fault die:N|hang:N]",
		Short: "Serves llmstream's demo MCP server over stdio",
		Long: `Serves llmstream's built-in demo MCP server (search_knowledge,
get_weather, always_fail, sleep: deterministic tools for demos and tests) over
stdio, one JSON-RPC message a line, until its standard input closes.

In a Caddyfile: mcp demo { command caddy llmstream-demo-mcp }, or
builtin demo for the same server in-process.

--fault die:N makes every N-th tool call end the process in the middle of
the call (exit status 3), --fault hang:N makes it never answer, not even
to a cancellation: a tool server that dies or hangs, for the load
harness's fault runs (docs/operations.md).`,
		Flags: fs,
		Func: func(f caddycmd.Flags) (int, error) {
			var fault string
			if f.FlagSet != nil && f.Lookup("fault") != nil {
				fault = f.String("fault")
			}
			srv, err := server(fault)
			if err != nil {
				return 2, fmt.Errorf("llmstream-demo-mcp: %w", err)
			}
			if err := srv.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
				return 1, fmt.Errorf("llmstream-demo-mcp: %w", err)
			}
			return 0, nil
		},
	})
}

// server returns the demo server, its tools wrapped by fault ("" for
// none, "die:N" or "hang:N").
func server(fault string) (*mcp.Server, error) {
	if fault == "" {
		return demo.New(), nil
	}
	kind, n, _ := strings.Cut(fault, ":")
	every, err := strconv.Atoi(n)
	if err != nil || every < 1 || kind != "die" && kind != "hang" {
		return nil, fmt.Errorf("--fault %q: want die:N or hang:N with N ≥ 1", fault)
	}
	var calls atomic.Int64
	s := mcp.NewServer(&mcp.Implementation{Name: "llmstream-demo", Version: demo.Version}, nil)
	for _, t := range demo.Tools() {
		h := t.Handler
		s.AddTool(t.Tool, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if calls.Add(1)%int64(every) != 0 {
				return h(ctx, req)
			}
			if kind == "die" {
				os.Exit(3)
			}
			select {} // hung: deaf to the cancellation too
		})
	}
	return s, nil
}
