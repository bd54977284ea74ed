package config

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestToolServersCheck(t *testing.T) {
	demo := func(mod func(m *MCPServer)) *ToolServers {
		m := MCPServer{Name: "d", Builtin: "demo"}
		if mod != nil {
			mod(&m)
		}
		return &ToolServers{MCP: []MCPServer{m}}
	}
	neg := Duration(-time.Second)
	zero := Duration(0)
	tests := []struct {
		name    string
		ts      *ToolServers
		setting string // "" = valid
		msg     string
	}{
		{name: "builtin", ts: demo(nil)},
		{name: "stdio", ts: demo(func(m *MCPServer) {
			m.Builtin = ""
			m.Command = []string{"node", "{env.HOME}/server.js"}
			m.Env = map[string]string{"TOKEN": "{env.TOKEN}"}
		})},
		{name: "http_with_request_header", ts: demo(func(m *MCPServer) {
			m.Builtin = ""
			m.URL = "https://tools.example/mcp"
			m.Headers = map[string]string{"Authorization": "Bearer {http.request.header.X-User-Token}"}
		})},
		{name: "allow_label_approve", ts: demo(func(m *MCPServer) {
			m.Allow = []string{"get_weather", "search_knowledge"}
			m.Labels = map[string]string{"get_weather": "天气"}
			m.Approve = []string{"search_knowledge"}
		})},
		{name: "label_without_allow", ts: demo(func(m *MCPServer) { m.Labels = map[string]string{"anything": "x"} })},
		{name: "no_server", ts: &ToolServers{}, setting: "tool_servers.mcp", msg: "no mcp server"},
		{name: "bad_name", ts: demo(func(m *MCPServer) { m.Name = "a b" }), setting: "tool_servers.mcp", msg: "a name is"},
		{name: "two_transports", ts: demo(func(m *MCPServer) { m.URL = "http://x/mcp" }), setting: "tool_servers.mcp[d].command", msg: "exactly one of command, url or builtin (got 2)"},
		{name: "no_transport", ts: demo(func(m *MCPServer) { m.Builtin = "" }), setting: "tool_servers.mcp[d].command", msg: "(got 0)"},
		{name: "unknown_builtin", ts: demo(func(m *MCPServer) { m.Builtin = "nope" }), setting: "tool_servers.mcp[d].builtin", msg: `unknown server "nope" (want demo)`},
		{name: "bad_scheme", ts: demo(func(m *MCPServer) { m.Builtin, m.URL = "", "ftp://x/mcp" }), setting: "tool_servers.mcp[d].url", msg: "want an absolute http:// or https:// URL"},
		{name: "relative_url", ts: demo(func(m *MCPServer) { m.Builtin, m.URL = "", "/mcp" }), setting: "tool_servers.mcp[d].url"},
		{name: "request_placeholder_in_url", ts: demo(func(m *MCPServer) { m.Builtin, m.URL = "", "http://{http.request.host}/mcp" }), setting: "tool_servers.mcp[d].url", msg: "only {env.*}"},
		{name: "request_placeholder_in_command", ts: demo(func(m *MCPServer) { m.Builtin, m.Command = "", []string{"{http.request.uri.query.cmd}"} }), setting: "tool_servers.mcp[d].command", msg: "nothing from a request"},
		{name: "request_placeholder_in_env", ts: demo(func(m *MCPServer) {
			m.Builtin, m.Command, m.Env = "", []string{"srv"}, map[string]string{"T": "{http.request.header.X}"}
		}), setting: "tool_servers.mcp[d].env"},
		{name: "empty_program", ts: demo(func(m *MCPServer) { m.Builtin, m.Command = "", []string{" "} }), setting: "tool_servers.mcp[d].command", msg: "empty program"},
		{name: "env_without_command", ts: demo(func(m *MCPServer) { m.Env = map[string]string{"A": "b"} }), setting: "tool_servers.mcp[d].env", msg: "for a command server"},
		{name: "bad_env_name", ts: demo(func(m *MCPServer) { m.Builtin, m.Command, m.Env = "", []string{"s"}, map[string]string{"A=B": "c"} }), setting: "tool_servers.mcp[d].env"},
		{name: "header_without_url", ts: demo(func(m *MCPServer) { m.Headers = map[string]string{"A": "b"} }), setting: "tool_servers.mcp[d].headers", msg: "for a url server"},
		{name: "bad_header_name", ts: demo(func(m *MCPServer) { m.Builtin, m.URL, m.Headers = "", "http://x/", map[string]string{"A B": "c"} }), setting: "tool_servers.mcp[d].headers"},
		{name: "transport_header", ts: demo(func(m *MCPServer) {
			m.Builtin, m.URL, m.Headers = "", "http://x/", map[string]string{"Mcp-Session-Id": "c"}
		}), setting: "tool_servers.mcp[d].headers", msg: "set by the MCP transport itself"},
		{name: "label_not_allowed", ts: demo(func(m *MCPServer) {
			m.Allow = []string{"get_weather"}
			m.Labels = map[string]string{"search": "x"}
		}), setting: "tool_servers.mcp[d].label", msg: `tool "search" is not allowed (allow lists get_weather)`},
		{name: "approve_not_allowed", ts: demo(func(m *MCPServer) {
			m.Allow = []string{"get_weather"}
			m.Approve = []string{"fail"}
		}), setting: "tool_servers.mcp[d].approve"},
		{name: "allow_twice", ts: demo(func(m *MCPServer) { m.Allow = []string{"a", "a"} }), setting: "tool_servers.mcp[d].allow", msg: "listed twice"},
		{name: "empty_label", ts: demo(func(m *MCPServer) { m.Labels = map[string]string{"a": " "} }), setting: "tool_servers.mcp[d].label"},
		{name: "bad_prefix", ts: demo(func(m *MCPServer) { m.Prefix = "a.b" }), setting: "tool_servers.mcp[d].prefix"},
		{name: "negative_timeout", ts: demo(func(m *MCPServer) { m.Timeout = &neg }), setting: "tool_servers.mcp[d].timeout"},
		{name: "zero_timeout", ts: demo(func(m *MCPServer) { m.Timeout = &zero }), setting: "tool_servers.mcp[d].timeout", msg: "every call needs one"},
		{name: "max_rounds", ts: &ToolServers{MCP: demo(nil).MCP, MaxRounds: 101}, setting: "tool_servers.max_rounds"},
		{name: "max_result_bytes", ts: &ToolServers{MCP: demo(nil).MCP, MaxResultBytes: -1}, setting: "tool_servers.max_result_bytes"},
		{name: "same_name", ts: &ToolServers{MCP: []MCPServer{{Name: "a", Builtin: "demo"}, {Name: "a", Builtin: "demo"}}}, setting: "tool_servers.mcp", msg: "two servers have this name"},
		{name: "shared_allowed_tool", ts: &ToolServers{MCP: []MCPServer{
			{Name: "a", Builtin: "demo", Allow: []string{"get_weather"}},
			{Name: "b", Builtin: "demo", Allow: []string{"get_weather"}},
		}}, setting: "tool_servers.mcp[b].allow", msg: `tool "get_weather" is also offered by mcp a`},
		{name: "shared_tool_with_prefix", ts: &ToolServers{MCP: []MCPServer{
			{Name: "a", Builtin: "demo", Allow: []string{"get_weather"}},
			{Name: "b", Builtin: "demo", Allow: []string{"get_weather"}, Prefix: "b_"},
		}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.ts.Check()
			if tt.setting == "" {
				if err != nil {
					t.Fatalf("Check: %v", err)
				}
				return
			}
			var ce *Error
			if !errors.As(err, &ce) {
				t.Fatalf("Check = %v, want an *Error for %s", err, tt.setting)
			}
			if ce.Setting != tt.setting || !strings.Contains(ce.Error(), tt.msg) {
				t.Errorf("Check = %q (setting %s), want setting %s and %q", ce, ce.Setting, tt.setting, tt.msg)
			}
		})
	}
}

func TestToolServersDefaults(t *testing.T) {
	ts := &ToolServers{MCP: []MCPServer{{Name: "d", Builtin: "demo"}}}
	if ts.Rounds() != 8 || ts.ResultBytes() != 64<<10 || ts.MCP[0].CallTimeout() != 30*time.Second {
		t.Errorf("defaults: rounds %d, result bytes %d, timeout %s", ts.Rounds(), ts.ResultBytes(), ts.MCP[0].CallTimeout())
	}
	for _, tt := range []struct {
		m    MCPServer
		want string
	}{
		{MCPServer{Command: []string{"x"}}, TransportStdio},
		{MCPServer{URL: "http://x"}, TransportHTTP},
		{MCPServer{Builtin: "demo"}, TransportBuiltin},
	} {
		if got := tt.m.Transport(); got != tt.want {
			t.Errorf("Transport(%+v) = %s, want %s", tt.m, got, tt.want)
		}
	}
}

func TestRequestPlaceholders(t *testing.T) {
	for v, want := range map[string]bool{
		"Bearer {http.request.header.X-Token}": true,
		"Bearer {env.TOKEN}":                   false,
		"plain":                                false,
		"{env.A}{http.vars.user}":              true,
	} {
		if got := RequestPlaceholders(v); got != want {
			t.Errorf("RequestPlaceholders(%q) = %v, want %v", v, got, want)
		}
	}
}

// TestRouteToolServers: the tools block is checked by Route.Load and
// reads back from the JSON config `caddy adapt` writes.
func TestRouteToolServers(t *testing.T) {
	const cfg = `{"protocol":"openai","tool_servers":{"mcp":[
		{"name":"docs","url":"https://docs.example/mcp","headers":{"X-Token":"{http.request.header.X-Token}"},"timeout":"10s","prefix":"docs_"},
		{"name":"demo","builtin":"demo","allow":["get_weather"],"labels":{"get_weather":"Weather"},"approve":["get_weather"]}
	],"max_rounds":3,"max_result_bytes":1024}}`
	var r Route
	if err := json.Unmarshal([]byte(cfg), &r); err != nil {
		t.Fatal(err)
	}
	s, err := r.Load("")
	if err != nil {
		t.Fatal(err)
	}
	ts := s.ToolServers
	if ts == nil || len(ts.MCP) != 2 || ts.Rounds() != 3 || ts.ResultBytes() != 1024 || ts.MCP[0].CallTimeout() != 10*time.Second {
		t.Fatalf("ToolServers = %+v", ts)
	}
	r.ToolServers.MCP[1].Builtin = "other"
	if _, err := r.Load(""); err == nil || !strings.Contains(err.Error(), "mcp demo: builtin") {
		t.Errorf("Load with a bad server = %v", err)
	}
}
