// Package democmd registers `caddy llmstream-demo-mcp`: the built-in demo
// MCP server (toolserver/demo) served over stdio, so that it can also be a
// route's `command` server, or be tried with any MCP client.
package democmd

import (
	"context"
	"fmt"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmstream/llmstream/toolserver/demo"
)

func init() {
	caddycmd.RegisterCommand(caddycmd.Command{
		Name:  "llmstream-demo-mcp",
		Short: "Serves llmstream's demo MCP server over stdio",
		Long: `Serves llmstream's built-in demo MCP server (search_knowledge,
get_weather, always_fail, sleep: deterministic tools for demos and tests) over
stdio, one JSON-RPC message a line, until its standard input closes.

In a Caddyfile: mcp demo { command caddy llmstream-demo-mcp }, or
builtin demo for the same server in-process.`,
		Func: func(caddycmd.Flags) (int, error) {
			if err := demo.New().Run(context.Background(), &mcp.StdioTransport{}); err != nil {
				return 1, fmt.Errorf("llmstream-demo-mcp: %w", err)
			}
			return 0, nil
		},
	})
}
