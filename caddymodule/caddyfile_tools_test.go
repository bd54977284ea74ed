package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

const toolsHead = "llm_stream {\n\tprotocol openai\n\t"

// TestToolsCaddyfileErrors covers every error branch of the tools block,
// each naming the option (CONTRACT.md §3: `caddy adapt` names a bad
// setting).
func TestToolsCaddyfileErrors(t *testing.T) {
	mcp := func(body string) string {
		return toolsHead + "tools {\n\t\tmcp d {\n\t\t\t" + body + "\n\t\t}\n\t}\n}"
	}
	cases := map[string]struct{ input, want string }{
		"unknown tools option": {toolsHead + "tools {\n\t\tmax_round 3\n\t}\n}", `unrecognized tools option "max_round"`},
		"unknown subdirective": {mcp("builtin demo\n\t\t\tcomand x"), `mcp d: unrecognized option "comand"`},
		"two transports":       {mcp("builtin demo\n\t\t\turl http://x/mcp"), "mcp d: url: a server has one of command, url or builtin (builtin already given)"},
		"no name":              {toolsHead + "tools {\n\t\tmcp {\n\t\t\tbuiltin demo\n\t\t}\n\t}\n}", "mcp: missing server name"},
		"name and more":        {toolsHead + "tools {\n\t\tmcp a b {\n\t\t\tbuiltin demo\n\t\t}\n\t}\n}", "mcp a: options go in a block"},
		"command missing":      {mcp("command"), "mcp d: command: missing program"},
		"command twice":        {mcp("command a\n\t\t\tcommand b"), "mcp d: command: specified more than once"},
		"env one value":        {mcp("command a\n\t\t\tenv KEY"), "mcp d: env: want a name and a value"},
		"env twice":            {mcp("command a\n\t\t\tenv K 1\n\t\t\tenv K 2"), "mcp d: env K: specified more than once"},
		"header three values":  {mcp("url http://x/mcp\n\t\t\theader A b c"), "mcp d: header: want a name and a value"},
		"allow nothing":        {mcp("builtin demo\n\t\t\tallow"), "mcp d: allow: missing tool name"},
		"bad duration":         {mcp("builtin demo\n\t\t\ttimeout soon"), `timeout: invalid duration "soon"`},
		"bad max_rounds":       {toolsHead + "tools {\n\t\tmax_rounds many\n\t}\n}", `max_rounds: invalid number "many"`},
		"bad max_result_bytes": {toolsHead + "tools {\n\t\tmax_result_bytes lots\n\t}\n}", `max_result_bytes: invalid size "lots"`},
		"max_rounds twice":     {toolsHead + "tools {\n\t\tmax_rounds 1\n\t\tmax_rounds 2\n\t}\n}", "tools: max_rounds: specified more than once"},
		"two blocks":           {toolsHead + "tools {\n\t\tmcp a {\n\t\t\tbuiltin demo\n\t\t}\n\t}\n\ttools {\n\t\tmcp b {\n\t\t\tbuiltin demo\n\t\t}\n\t}\n}", "tools: the server block is specified more than once"},
		"file and more":        {toolsHead + "tools a.json b.json\n}", "tools: one file per line"},
		// Checked when the Caddyfile is adapted (config.ToolServers.Check).
		"empty block":       {toolsHead + "tools {\n\t}\n}", "tools: no mcp server"},
		"bare tools":        {toolsHead + "tools\n}", "tools: missing value (a file, or a block of mcp servers)"},
		"bad scheme":        {mcp("url ftp://x/mcp"), `mcp d: url "ftp://x/mcp": want an absolute http:// or https:// URL`},
		"unknown builtin":   {mcp("builtin nope"), `mcp d: builtin: unknown server "nope"`},
		"label not allowed": {mcp("builtin demo\n\t\t\tallow get_weather\n\t\t\tlabel fail x"), `mcp d: label: tool "fail" is not allowed`},
		"zero timeout":      {mcp("builtin demo\n\t\t\ttimeout 0"), "mcp d: timeout must be positive"},
		"env on url":        {mcp("url http://x/mcp\n\t\t\tenv A b"), "mcp d: env is for a command server"},
		"request in url":    {mcp("url http://{http.request.host}/mcp"), "only {env.*} is allowed here"},
		"no transport":      {mcp("allow x"), "mcp d: want exactly one of command, url or builtin (got 0)"},
		"shared allow": {toolsHead + "tools {\n\t\tmcp a {\n\t\t\tbuiltin demo\n\t\t\tallow get_weather\n\t\t}\n\t\tmcp b {\n\t\t\tbuiltin demo\n\t\t\tallow get_weather\n\t\t}\n\t}\n}",
			`mcp b: allow: tool "get_weather" is also offered by mcp a`},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := new(Handler)
			err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestToolsCaddyfile: every option lands in its field, and the file form
// of tools still works beside the block.
func TestToolsCaddyfile(t *testing.T) {
	h := new(Handler)
	err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(toolsHead + `tools testdata/lookup_tool.json
	tools {
		mcp docs {
			url https://docs.example/mcp
			header Authorization "Bearer {http.request.header.X-User-Token}"
			header X-Team platform
			allow search fetch
			allow list
			label search "Search the docs"
			approve fetch
			prefix docs_
			timeout 10s
		}
		mcp files {
			command node server.js /srv/files
			env TOKEN {env.FILES_TOKEN}
		}
		mcp demo {
			builtin demo
		}
		max_rounds 4
		max_result_bytes 32KiB
	}
}`))
	if err != nil {
		t.Fatal(err)
	}
	r := h.Route
	if len(r.Tools) != 1 || r.Tools[0] != "testdata/lookup_tool.json" {
		t.Errorf("tools files = %v", r.Tools)
	}
	ts := r.ToolServers
	if ts == nil || len(ts.MCP) != 3 || ts.MaxRounds != 4 || ts.MaxResultBytes != 32<<10 {
		t.Fatalf("tool servers = %+v", ts)
	}
	d := ts.MCP[0]
	if d.Name != "docs" || d.URL != "https://docs.example/mcp" || d.Headers["Authorization"] != "Bearer {http.request.header.X-User-Token}" ||
		d.Headers["X-Team"] != "platform" || strings.Join(d.Allow, ",") != "search,fetch,list" || d.Labels["search"] != "Search the docs" ||
		strings.Join(d.Approve, ",") != "fetch" || d.Prefix != "docs_" || d.Timeout == nil || time.Duration(*d.Timeout) != 10*time.Second {
		t.Errorf("docs = %+v", d)
	}
	f := ts.MCP[1]
	if strings.Join(f.Command, " ") != "node server.js /srv/files" || f.Env["TOKEN"] != "{env.FILES_TOKEN}" {
		t.Errorf("files = %+v", f)
	}
	if ts.MCP[2].Builtin != "demo" {
		t.Errorf("demo = %+v", ts.MCP[2])
	}
}
