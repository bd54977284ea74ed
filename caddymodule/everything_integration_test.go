package caddymodule

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// everythingJS returns @modelcontextprotocol/server-everything's entry
// point from e2e/node_modules (npm ci in e2e/, which e2e/run.sh does; or
// MCP_NODE_MODULES), skipping without it or without node, failing instead
// when MCP_REQUIRE_REAL is set (as e2e/run.sh sets it).
func everythingJS(t *testing.T) string {
	t.Helper()
	skip := t.Skipf
	if os.Getenv("MCP_REQUIRE_REAL") != "" {
		skip = t.Fatalf
	}
	if testing.Short() {
		t.Skip("runs Caddy in process and a Node MCP server")
	}
	dir := os.Getenv("MCP_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join("..", "e2e", "node_modules")
	}
	js, _ := filepath.Abs(filepath.Join(dir, "@modelcontextprotocol", "server-everything", "dist", "index.js"))
	if _, err := exec.LookPath("node"); err != nil {
		skip("node is not installed: this test runs @modelcontextprotocol/server-everything")
	}
	if _, err := os.Stat(js); err != nil {
		skip("%s is missing: run `npm ci` in e2e/ (or set MCP_NODE_MODULES)", js)
	}
	return js
}

// TestEverythingThroughTheLoop: the real @modelcontextprotocol/server-
// everything (the 2025-11-25 revision, pinned in e2e/package.json) through
// a skillpet conversation's loop (CONTRACT.md §13, issue 19 "How we will
// know"). Its trigger-elicitation-request asks a form while it holds the
// call open: the turn ends with ask_user, the next /stream message answers
// it in this process, the server gets the answer and the model reads the
// tool's result. Its toggle-subscriber-updates makes it announce the
// subscribed resource changed: resource_updated {key, snapshot} reaches
// the client while the turn streams, with the resource as read.
func TestEverythingThroughTheLoop(t *testing.T) {
	js := everythingJS(t)
	dir := t.TempDir()
	mock := func(path, call, interval string) string {
		return `	handle ` + path + `/* {
		llm_mock {
			by_round
			interval ` + interval + `
			reply_text "Let me use the tool."
			tool_calls_file testdata/everything/` + call + `
			reply_text "Result: {{tool_result}} (the tool's result, quoted by round 2 of the loop while the stream stays open a little)"
			tool_calls_file testdata/loop/no_calls.json
		}
	}
`
	}
	route := func(path, mockPath, store string) string {
		return `	handle ` + path + `/* {
		llm_stream {
			format text
			model m
			protocol skillpet
			request_format skillpet
			conversation {
				store file ` + store + `
			}
			tools {
				mcp everything {
					command node ` + js + ` stdio
					allow trigger-elicitation-request toggle-subscriber-updates
					subscribe demo://resource/dynamic/text/1 doc
					timeout 20s
				}
			}
		}
		rewrite * ` + mockPath + `/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
`
	}
	s := startSite(t, "", mock("/mocke", "elicit_call.json", "0")+mock("/mocks", "toggle_call.json", "40ms")+
		route("/eli", "/mocke", filepath.Join(dir, "e"))+route("/sub", "/mocks", filepath.Join(dir, "s")))

	t.Run("elicitation", func(t *testing.T) {
		c := newChatClient(t, s.url("/eli"), "Bearer u1")
		evs := c.stream("p1", "fill in the form")
		if names := eventNames(evs); !strings.HasSuffix(names, "ask_user done") {
			t.Fatalf("events: %s", names)
		}
		ask := gjson.Parse(eventNamed(evs, "ask_user"))
		var prompts []string
		for _, q := range ask.Get("questions").Array() {
			prompts = append(prompts, q.Get("prompt").String())
		}
		if !strings.Contains(strings.Join(prompts, "|"), "String|") {
			t.Fatalf("the form's questions: %s", ask.Raw)
		}
		// The component sends the answers as the next message (specs/002
		// §3.4): "prompt：answer" lines.
		evs = c.stream("p1", "String：Alice Example")
		got := tokens(t, evs)
		if !strings.Contains(got, "Result: ") || !strings.Contains(got, "Alice Example") {
			t.Errorf("round 2 does not quote the server's answer: %q (events %s)", got, eventNames(evs))
		}
		if r := gjson.Parse(eventNamed(evs, "tool_result")); r.Get("name").String() != "trigger-elicitation-request" || r.Get("status").String() != "completed" {
			t.Errorf("the resumed call: %s", r.Raw)
		}
	})

	t.Run("resource_updated", func(t *testing.T) {
		c := newChatClient(t, s.url("/sub"), "Bearer u2")
		evs := c.stream("p1", "watch the document")
		up := eventNamed(evs, "resource_updated")
		if up == "" {
			t.Fatalf("no resource_updated: %s", eventNames(evs))
		}
		if u := gjson.Parse(up); u.Get("key").String() != "doc" || u.Get("snapshot.uri").String() != "demo://resource/dynamic/text/1" ||
			!strings.HasPrefix(u.Get("snapshot.text").String(), "Resource 1: This is a plaintext resource") {
			t.Errorf("resource_updated: %s", up)
		}
		if names := eventNames(evs); !strings.HasSuffix(names, "done") {
			t.Errorf("events: %s", names)
		}
	})
}
