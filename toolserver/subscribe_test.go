package toolserver

import (
	"strings"
	"sync"
	"testing"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/toolserver/demo"
)

// TestSubscriptions: a server block's subscribed resource, updated by a
// tool, reaches the Set's watchers as its key and its new snapshot; a
// watcher that stopped gets nothing more.
func TestSubscriptions(t *testing.T) {
	s, _ := newSet(t, config.MCPServer{Name: "demo", Builtin: "demo", Subscribe: []config.Subscription{{URI: demo.PlanURI, Key: "plan"}}})
	var mu sync.Mutex
	var got []Update
	stop := s.Watch(nil, func(u Update) {
		mu.Lock()
		got = append(got, u)
		mu.Unlock()
	})
	// The subscription is made when the session connects: wait for the
	// server to have it, by updating until an update arrives.
	waitFor(t, "an update", func() bool {
		callT(s, "update_plan", `{"title":"星辰诀","status":"writing"}`)
		mu.Lock()
		defer mu.Unlock()
		return len(got) > 0
	})
	mu.Lock()
	u := got[len(got)-1]
	mu.Unlock()
	if u.Key != "plan" || !strings.Contains(string(u.Snapshot), `"title":"星辰诀","status":"writing"`) {
		t.Fatalf("update = %s %s", u.Key, u.Snapshot)
	}
	stop()
	s.watch.mu.Lock()
	left := len(s.watch.m)
	s.watch.mu.Unlock()
	if left != 0 {
		t.Errorf("%d watchers after stop", left)
	}
	if s2, _ := newSet(t, config.MCPServer{Name: "demo", Builtin: "demo"}); s2.hasSubscriptions() {
		t.Error("a Set without subscriptions has some")
	}
}
