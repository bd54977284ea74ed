package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestConversationSettings(t *testing.T) {
	skillpet := func(c *Conversation) Route {
		return Route{RequestFormat: "skillpet", Protocol: "skillpet", Model: "m", Conversation: c}
	}
	t.Run("defaults", func(t *testing.T) {
		r := skillpet(&Conversation{})
		s, err := r.Load("")
		if err != nil {
			t.Fatal(err)
		}
		c := s.Conversation
		if c.Store != StoreFile || c.Dir != "" || c.Scope != DefaultScope || c.AgentID != DefaultAgentID || c.AgentName != DefaultAgentName ||
			!c.ThinkingEnabled || !c.ThinkingDefaultOn || c.Budget.Messages != DefaultHistoryMessages || c.Budget.Bytes != DefaultHistoryBytes ||
			c.TTL != 0 || c.Lease != DefaultLease || c.KeyPrefix != DefaultKeyPrefix {
			t.Errorf("defaults: %+v", c)
		}
	})
	t.Run("set", func(t *testing.T) {
		ttl, lease := Duration(time.Hour), Duration(5*time.Second)
		r := skillpet(&Conversation{Store: "redis", RedisURL: "{env.REDIS_URL}", Scope: "{http.request.cookie.sid}", Thinking: "default_off",
			HistoryMessages: 7, HistoryBytes: 1000, TTL: &ttl, Lease: &lease, ClearURL: "/api/chat/conversation/{projectId}", QueuedSend: 3})
		s, err := r.Load("")
		if err != nil {
			t.Fatal(err)
		}
		c := s.Conversation
		if c.Store != StoreRedis || c.Scope != "{http.request.cookie.sid}" || !c.ThinkingEnabled || c.ThinkingDefaultOn ||
			c.Budget.Messages != 7 || c.Budget.Bytes != 1000 || c.TTL != time.Hour || c.Lease != 5*time.Second || c.QueuedSend != 3 {
			t.Errorf("settings: %+v", c)
		}
	})
	neg := Duration(-time.Second)
	short := Duration(time.Millisecond)
	for _, tc := range []struct {
		name    string
		route   Route
		setting string
		msg     string
	}{
		{"not skillpet", Route{Protocol: "openai", Conversation: &Conversation{}}, "conversation", "needs protocol skillpet and request_format skillpet"},
		{"skillpet protocol, openai body", Route{Protocol: "skillpet", Conversation: &Conversation{}}, "conversation", "request_format openai"},
		{"unknown store", skillpet(&Conversation{Store: "sqlite"}), "conversation.store", `unknown store "sqlite"`},
		{"redis without url", skillpet(&Conversation{Store: "redis"}), "conversation.redis_url", "needs a URL"},
		{"url for file", skillpet(&Conversation{RedisURL: "redis://x"}), "conversation.redis_url", "for store redis"},
		{"dir for redis", skillpet(&Conversation{Store: "redis", RedisURL: "redis://x", Dir: "/d"}), "conversation.dir", "for store file"},
		{"thinking", skillpet(&Conversation{Thinking: "maybe"}), "conversation.thinking", `unknown thinking "maybe"`},
		{"clear url", skillpet(&Conversation{ClearURL: "/clear"}), "conversation.clear_url", "must end in /conversation/{projectId}"},
		{"negative budget", skillpet(&Conversation{HistoryMessages: -1}), "conversation.history_messages", "must not be negative"},
		{"negative ttl", skillpet(&Conversation{TTL: &neg}), "conversation.ttl", "must not be negative"},
		{"short lease", skillpet(&Conversation{Lease: &short}), "conversation.lease", "at least 1s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.route.Load("")
			var ce *Error
			if !errors.As(err, &ce) || ce.Setting != tc.setting || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("err = %v, want %s: …%s…", err, tc.setting, tc.msg)
			}
		})
	}
}
