package caddymodule

import (
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// TestResourceUpdated: a resource the route subscribes to, changed by a
// tool the model calls, reaches the client as resource_updated {key,
// snapshot} (specs/002 §3.6) while the stream is open: the server's
// notification is its own message, so it may come before or after the
// call's result and the next round's start; it is not stored in the
// conversation.
func TestResourceUpdated(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	dir := t.TempDir()
	s := startSite(t, "", `	handle /mock/* {
		llm_mock {
			by_round
			interval 0
			reply_text "Updating the plan."
			tool_calls_file testdata/park/plan_call.json
			reply_text "Done: {{tool_result}}"
			tool_calls_file testdata/loop/no_calls.json
		}
	}
`+demoConvRoute(dir, "subscribe demo://story/plan bookPlan"))
	c := newChatClient(t, s.url("/conv"), "Bearer u1")
	evs := c.stream("p1", "plan my story")
	names := eventNames(evs)
	i, j, k := strings.Index(names, "tool_start"), strings.Index(names, "resource_updated"), strings.Index(names, "done")
	if i < 0 || j < i || k < j {
		t.Fatalf("events: %s", names)
	}
	up := gjson.Parse(eventNamed(evs, "resource_updated"))
	if up.Get("key").String() != "bookPlan" || up.Get("snapshot.title").String() != "星辰诀" || up.Get("snapshot.status").String() != "writing" {
		t.Errorf("resource_updated: %s", up.Raw)
	}
	for _, m := range c.init("p1").Messages {
		if strings.Contains(m.Content, "bookPlan") {
			t.Errorf("the update was stored: %s", m.Content)
		}
	}
}

// TestSearchToolsAndCapabilities: a tool marked search is offered only
// when the user turned search on (enableSearch), and init announces
// search and image generation when the route has such tools (CONTRACT.md
// §13, specs/002 §2.2, §2.3).
func TestSearchToolsAndCapabilities(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	dir := t.TempDir()
	s := startSite(t, "", `	handle /mock/* {
		llm_mock {
			record
			interval 0
			reply_text "ok"
		}
	}
`+demoConvRoute(dir, "search search_knowledge", "image generate_image multi_select"))
	c := newChatClient(t, s.url("/conv"), "Bearer u1")
	offered := func(search bool) string {
		clearRecorded(t, s)
		c.call(http.MethodPost, c.base+"/stream", `{"projectId":"p1","message":"hi","enableSearch":`+map[bool]string{true: "true", false: "false"}[search]+`}`)
		var names []string
		for _, tl := range recorded(t, s)[0].Tools {
			names = append(names, gjson.GetBytes(tl, "function.name").String())
		}
		return strings.Join(names, " ")
	}
	if got := offered(false); strings.Contains(got, "search_knowledge") || !strings.Contains(got, "get_weather") {
		t.Errorf("search off: offered %s", got)
	}
	if got := offered(true); !strings.Contains(got, "search_knowledge") {
		t.Errorf("search on: offered %s", got)
	}
	_, body := c.call(http.MethodGet, c.base+"/init/p1", "")
	if !gjson.Get(body, "capabilities.search.enabled").Bool() || !gjson.Get(body, "capabilities.imageGeneration.enabled").Bool() {
		t.Errorf("capabilities: %s", gjson.Get(body, "capabilities").Raw)
	}
}

// demoConvRoute is a skillpet conversation route (its store in dir) in
// front of the site's /mock/ upstream, with the built-in demo server and
// the settings given for its server block, one a line.
func demoConvRoute(dir string, demo ...string) string {
	return `	handle /conv/* {
		llm_stream {
			format text
			model m
			protocol skillpet
			request_format skillpet
			conversation {
				store file ` + dir + `
			}
			tools {
				mcp demo {
					builtin demo
					` + strings.Join(demo, "\n\t\t\t\t\t") + `
				}
			}
		}
		rewrite * /mock/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
`
}
