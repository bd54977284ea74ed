package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/llmstream/llmstream/config"
)

const convHead = "llm_stream {\n\tprotocol skillpet\n\trequest_format skillpet\n\tmodel m\n\t"

const respHead = "llm_stream {\n\tprotocol responses\n\trequest_format responses\n\t"

// TestConversationCaddyfileErrors covers every error branch of the
// conversation block, each naming the option.
func TestConversationCaddyfileErrors(t *testing.T) {
	cases := map[string]struct{ input, want string }{
		"argument":          {convHead + "conversation on\n}", "conversation: options go in a block"},
		"unknown option":    {convHead + "conversation {\n\t\tstor file\n\t}\n}", `unrecognized conversation option "stor"`},
		"duplicate":         {convHead + "conversation {\n\t\tscope a\n\t\tscope b\n\t}\n}", "scope: specified more than once"},
		"store missing":     {convHead + "conversation {\n\t\tstore\n\t}\n}", "store: missing value"},
		"unknown store":     {convHead + "conversation {\n\t\tstore sqlite x\n\t}\n}", `unknown store "sqlite"`},
		"two dirs":          {convHead + "conversation {\n\t\tstore file a b\n\t}\n}", "store file: one directory at most"},
		"redis without url": {convHead + "conversation {\n\t\tstore redis\n\t}\n}", "store redis: want one URL"},
		"bad history bytes": {convHead + "conversation {\n\t\thistory_bytes lots\n\t}\n}", `history_bytes: invalid size "lots"`},
		"bad ttl":           {convHead + "conversation {\n\t\tttl soon\n\t}\n}", `ttl: invalid duration "soon"`},
		"bad queue":         {convHead + "conversation {\n\t\tqueued_send -1\n\t}\n}", `queued_send: invalid number "-1"`},
		// Checked when the Caddyfile is adapted (config.Route.Load).
		"not skillpet":  {"llm_stream {\n\tprotocol openai\n\tconversation\n}", "conversation: needs protocol skillpet and request_format skillpet"},
		"bad thinking":  {convHead + "conversation {\n\t\tthinking maybe\n\t}\n}", `unknown thinking "maybe"`},
		"bad clear url": {convHead + "conversation {\n\t\tclear_url /x\n\t}\n}", "clear_url must end in /conversation/{projectId}"},
		"short lease":   {convHead + "conversation {\n\t\tlease 10ms\n\t}\n}", "lease must be at least 1s"},
		// A responses route keeps its responses (CONTRACT.md §14).
		"skillpet option on responses": {respHead + "conversation {\n\t\tagent_name x\n\t}\n}", "agent_name is for a skillpet route"},
		"short compaction key":         {respHead + "conversation {\n\t\tcompaction_key short\n\t}\n}", "compaction_key must be at least 16 bytes"},
		"compaction key on skillpet":   {convHead + "conversation {\n\t\tcompaction_key 0123456789abcdef\n\t}\n}", "compaction_key is for a responses route"},
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

// TestConversationCaddyfile: every option lands in its field; a bare
// conversation takes the defaults.
func TestConversationCaddyfile(t *testing.T) {
	h := new(Handler)
	err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(convHead + `conversation {
		store redis {env.REDIS_URL}
		key_prefix chat:
		scope {http.request.cookie.session}
		agent_id writer
		agent_name "Story Writer"
		agent_avatar /a.png
		agent_description "Writes stories"
		user_avatar /u.png
		thinking default_off
		queued_send 3
		clear_url /api/chat/conversation/{projectId}
		history_messages 40
		history_bytes 64KiB
		ttl 30d
		lease 10s
	}
}`))
	if err != nil {
		t.Fatal(err)
	}
	c := h.Conversation
	if c == nil || c.Store != "redis" || c.RedisURL != "{env.REDIS_URL}" || c.KeyPrefix != "chat:" || c.Scope != "{http.request.cookie.session}" ||
		c.AgentID != "writer" || c.AgentName != "Story Writer" || c.AgentAvatar != "/a.png" || c.AgentDescription != "Writes stories" ||
		c.UserAvatar != "/u.png" || c.Thinking != "default_off" || c.QueuedSend != 3 || c.ClearURL != "/api/chat/conversation/{projectId}" ||
		c.HistoryMessages != 40 || c.HistoryBytes != 64<<10 || c.TTL == nil || time.Duration(*c.TTL) != 30*24*time.Hour ||
		c.Lease == nil || time.Duration(*c.Lease) != 10*time.Second {
		t.Errorf("parsed %+v", c)
	}

	h = new(Handler)
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(convHead + "conversation\n}")); err != nil {
		t.Fatal(err)
	}
	if h.Conversation == nil || *h.Conversation != (config.Conversation{}) {
		t.Errorf("a bare conversation: %+v", h.Conversation)
	}
	h = new(Handler)
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(convHead + "conversation {\n\t\tstore file /var/lib/chat\n\t}\n}")); err != nil {
		t.Fatal(err)
	}
	if h.Conversation.Store != "file" || h.Conversation.Dir != "/var/lib/chat" {
		t.Errorf("store file <dir>: %+v", h.Conversation)
	}
}

// TestResponsesStoreDefaults: a responses route keeps its responses
// without a conversation block: files, 30 days, the Authorization header
// as scope, a chain budget of 1000 items and 8MiB.
func TestResponsesStoreDefaults(t *testing.T) {
	h := new(Handler)
	if err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(respHead + "\n}")); err != nil {
		t.Fatal(err)
	}
	s, err := h.Route.Load("")
	if err != nil {
		t.Fatal(err)
	}
	cs := s.Conversation
	if cs == nil || !cs.Responses || cs.Store != config.StoreFile || cs.TTL != 30*24*time.Hour || cs.Scope != config.DefaultScope ||
		cs.Budget.Messages != 1000 || cs.Budget.Bytes != 8<<20 {
		t.Errorf("defaults %+v", cs)
	}
}
