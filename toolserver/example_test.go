package toolserver_test

import (
	"context"
	"fmt"
	"time"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform/agent"
)

// How the agent loop uses a Set: made at provision, started, asked for
// the tools of each request, called for each of the model's calls, closed
// at cleanup.
func Example() {
	set, err := toolserver.New(&config.ToolServers{MCP: []config.MCPServer{
		{Name: "demo", Builtin: "demo", Labels: map[string]string{"get_weather": "Weather"},
			Allow: []string{"always_fail", "get_weather", "search_knowledge", "sleep"}},
	}}, nil)
	if err != nil {
		panic(err)
	}
	set.Start() // in the background: Provision does not wait
	defer set.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_ = set.WaitReady(ctx) // only tests and demos wait

	// The request's Caddy replacer expands header placeholders; none here.
	resolve := toolserver.Resolver(func(s string) string { return s })
	for _, t := range set.Tools(ctx, resolve) {
		fmt.Printf("%s (%s)\n", t.Name, t.Label)
	}
	res := set.Call(ctx, "get_weather", []byte(`{"city":"Paris"}`), toolserver.CallOptions{
		Resolver: resolve,
		Progress: func(p agent.Progress) { /* show it to the client */ },
	})
	fmt.Println(res.IsError, res.Parts[0].Text)
	res = set.Call(ctx, "no_such_tool", nil, toolserver.CallOptions{})
	fmt.Println(res.IsError, res.Parts[0].Text)
	// Output:
	// always_fail (Always fails)
	// get_weather (Weather)
	// search_knowledge (Search the knowledge base)
	// sleep (Sleep)
	// false Paris: 21°C, cloudy, humidity 43% (demo data)
	// true Unknown tool "no_such_tool": no tool of that name is offered. Use one of the tools you were given.
}
