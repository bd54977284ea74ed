package caddymodule

import (
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
	handle /conv/* {
		llm_stream {
			format text
			model m
			protocol skillpet
			request_format skillpet
			conversation {
				store file `+dir+`
			}
			tools {
				mcp demo {
					builtin demo
					subscribe demo://story/plan bookPlan
				}
			}
		}
		rewrite * /mock/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
`)
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
