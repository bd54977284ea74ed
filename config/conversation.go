package config

import (
	"strings"
	"time"

	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/transform/request"
)

// Conversation makes a skillpet route the whole backend the
// @skillpet/chat component talks to (CONTRACT.md §9, specs/002 §2): the
// init, stream and clear endpoints, with the conversation stored between
// turns. Every field is optional.
type Conversation struct {
	// Store is where conversations are kept: "file" (the default), files
	// under Dir, or "redis", the Redis or Valkey server at RedisURL, for
	// several Caddy instances sharing conversations.
	Store string `json:"store,omitempty"`
	// Dir is the file store's directory. Default: llmstream/conversations
	// under Caddy's data directory.
	Dir string `json:"dir,omitempty"`
	// RedisURL is the Redis server (redis://[[user]:password@]host:port/db,
	// rediss:// with TLS). Caddy placeholders are expanded when the config
	// loads, so "{env.REDIS_URL}" keeps a password out of the adapted
	// config.
	RedisURL string `json:"redis_url,omitempty"`
	// KeyPrefix starts every Redis key. Default "llmstream:conversation:".
	KeyPrefix string `json:"key_prefix,omitempty"`
	// Scope says whose conversations a request reaches: a Caddy
	// placeholder expanded per request, whose value is hashed, never
	// stored or logged. A request whose scope is empty is refused (403).
	// Default "{http.request.header.Authorization}" (specs/002 §2.1).
	Scope string `json:"scope,omitempty"`
	// AgentID, AgentName, AgentAvatar and AgentDescription are init's
	// agent (specs/002 §2.2). AgentID also keys conversations: two routes
	// with different agents keep different conversations. Defaults
	// "llmstream" and "AI 助手" (specs/002's reference); no avatar or
	// description.
	AgentID          string `json:"agent_id,omitempty"`
	AgentName        string `json:"agent_name,omitempty"`
	AgentAvatar      string `json:"agent_avatar,omitempty"`
	AgentDescription string `json:"agent_description,omitempty"`
	// UserAvatar is init's userAvatarUrl. Default none.
	UserAvatar string `json:"user_avatar,omitempty"`
	// Thinking is init's thinking capability: "on" (the toggle shown and
	// on), "default_off" (shown and off) or "off" (hidden, and no
	// reasoning is sent whatever the client asks). Default "on".
	Thinking string `json:"thinking,omitempty"`
	// QueuedSend, when positive, is init's queuedSend.maxQueueSize: the
	// component queues that many messages while a reply streams and sends
	// them after it, instead of a second stream that would get 409.
	// Default 0 (not announced).
	QueuedSend int `json:"queued_send,omitempty"`
	// ClearURL is init's reset.clearUrl, for a gateway reached through a
	// proxy that changes paths: it must end in /conversation/{projectId}.
	// Default: the route's base path, as the client reached it, then
	// /conversation/{projectId}.
	ClearURL string `json:"clear_url,omitempty"`
	// HistoryMessages and HistoryBytes bound the history sent upstream
	// with each turn (the oldest exchanges are left out; the stored
	// conversation keeps them). Defaults 100 messages and 131072 bytes
	// (128KiB) of message JSON.
	HistoryMessages int   `json:"history_messages,omitempty"`
	HistoryBytes    int64 `json:"history_bytes,omitempty"`
	// TTL deletes a conversation this long after its last turn. Default:
	// kept until cleared.
	TTL *Duration `json:"ttl,omitempty"`
	// Lease is how long a Redis lock outlives a Caddy that stopped
	// mid-stream; it is renewed while the stream runs. Default 30s.
	Lease *Duration `json:"lease,omitempty"`
	// CompactionKey, on a responses route, is the secret compaction items
	// are sealed with (at least 16 bytes; placeholders such as
	// {env.LLMSTREAM_COMPACTION_KEY} are expanded when the config loads).
	// Default: a random secret made once and kept in the store, shared by
	// every Caddy that uses the same store.
	CompactionKey string `json:"compaction_key,omitempty"`
}

// The conversation defaults and accepted values.
const (
	StoreFile              = "file"
	StoreRedis             = "redis"
	DefaultConversationDir = "llmstream/conversations" // under Caddy's data directory
	DefaultKeyPrefix       = "llmstream:conversation:"
	DefaultScope           = "{http.request.header.Authorization}"
	DefaultAgentID         = "llmstream"
	DefaultAgentName       = "AI 助手"
	ThinkingOn             = "on"
	ThinkingDefaultOff     = "default_off"
	ThinkingOff            = "off"
	DefaultHistoryMessages = 100
	DefaultHistoryBytes    = 128 << 10
	DefaultLease           = 30 * time.Second
	// On a responses route (CONTRACT.md §14): stored responses under
	// llmstream/responses, kept 30 days as OpenAI keeps them, and a chain
	// sent upstream up to 1000 items and 8MiB of item JSON (agent
	// sessions are long).
	DefaultResponsesDir          = "llmstream/responses"
	DefaultResponsesTTL          = 30 * 24 * time.Hour
	DefaultResponsesHistoryItems = 1000
	DefaultResponsesHistoryBytes = 8 << 20
	ClearPathSuffix              = "/conversation/{projectId}"
	minLease                     = time.Second
)

// ConversationSettings is a Conversation resolved: defaults applied and
// values checked.
type ConversationSettings struct {
	// Store is StoreFile or StoreRedis; Dir ("" = the default under
	// Caddy's data directory, which the Caddy layer resolves), RedisURL
	// (placeholders not yet expanded) and KeyPrefix are its settings.
	Store, Dir, RedisURL, KeyPrefix string
	// Scope is the placeholder of whose conversations.
	Scope string
	// Agent and the other init fields.
	AgentID, AgentName, AgentAvatar, AgentDescription, UserAvatar string
	// ThinkingEnabled and ThinkingDefaultOn are init's thinking
	// capability; with ThinkingEnabled false no reasoning is sent.
	ThinkingEnabled, ThinkingDefaultOn bool
	// QueuedSend is the queue size announced (0: none).
	QueuedSend int
	// ClearURL is the configured clear URL ("" = derived per request).
	ClearURL string
	// Budget bounds the history sent upstream.
	Budget conversation.Budget
	// TTL and Lease are the store's durations (TTL 0: forever).
	TTL, Lease time.Duration
	// Responses: the settings are a responses route's, for its stored
	// responses (CONTRACT.md §14), not a skillpet conversation's.
	Responses bool
	// CompactionKey is the configured compaction secret, placeholders not
	// yet expanded; "" for the store's own.
	CompactionKey string
}

// loadConversation checks c for a route whose settings are s.
func loadConversation(c *Conversation, s *Settings) (*ConversationSettings, error) {
	responses := s.Protocol == "responses" && s.RequestFormat == "responses"
	if !responses && (s.Protocol != "skillpet" || s.RequestFormat != request.FormatSkillpet) {
		return nil, errorf("conversation", "conversation: needs protocol skillpet and request_format skillpet, or protocol and request_format responses (got protocol %s, request_format %s)", s.Protocol, s.RequestFormat)
	}
	if responses {
		return loadResponsesStore(c)
	}
	if c.CompactionKey != "" {
		return nil, errorf("conversation.compaction_key", "conversation: compaction_key is for a responses route")
	}
	cs := &ConversationSettings{
		Store:            orDefault(c.Store, StoreFile),
		Dir:              c.Dir,
		RedisURL:         c.RedisURL,
		KeyPrefix:        orDefault(c.KeyPrefix, DefaultKeyPrefix),
		Scope:            orDefault(strings.TrimSpace(c.Scope), DefaultScope),
		AgentID:          orDefault(c.AgentID, DefaultAgentID),
		AgentName:        orDefault(c.AgentName, DefaultAgentName),
		AgentAvatar:      c.AgentAvatar,
		AgentDescription: c.AgentDescription,
		UserAvatar:       c.UserAvatar,
		QueuedSend:       c.QueuedSend,
		ClearURL:         c.ClearURL,
		Budget: conversation.Budget{
			Messages: c.HistoryMessages,
			Bytes:    int(c.HistoryBytes),
		},
	}
	switch cs.Store {
	case StoreFile:
		if c.RedisURL != "" {
			return nil, errorf("conversation.redis_url", "conversation: redis_url is for store redis")
		}
	case StoreRedis:
		if c.RedisURL == "" {
			return nil, errorf("conversation.redis_url", "conversation: store redis needs a URL")
		}
		if c.Dir != "" {
			return nil, errorf("conversation.dir", "conversation: dir is for store file")
		}
	default:
		return nil, errorf("conversation.store", "conversation: unknown store %q (want file or redis)", cs.Store)
	}
	switch orDefault(c.Thinking, ThinkingOn) {
	case ThinkingOn:
		cs.ThinkingEnabled, cs.ThinkingDefaultOn = true, true
	case ThinkingDefaultOff:
		cs.ThinkingEnabled = true
	case ThinkingOff:
	default:
		return nil, errorf("conversation.thinking", "conversation: unknown thinking %q (want on, default_off or off)", c.Thinking)
	}
	if c.QueuedSend < 0 {
		return nil, errorf("conversation.queued_send", "conversation: queued_send must not be negative (got %d)", c.QueuedSend)
	}
	if c.ClearURL != "" && !strings.HasSuffix(c.ClearURL, ClearPathSuffix) {
		return nil, errorf("conversation.clear_url", "conversation: clear_url must end in %s (got %q)", ClearPathSuffix, c.ClearURL)
	}
	if c.HistoryMessages < 0 || c.HistoryBytes < 0 || c.HistoryBytes > 1<<40 {
		return nil, errorf("conversation.history_messages", "conversation: history_messages and history_bytes must not be negative")
	}
	if cs.Budget.Messages == 0 {
		cs.Budget.Messages = DefaultHistoryMessages
	}
	if cs.Budget.Bytes == 0 {
		cs.Budget.Bytes = DefaultHistoryBytes
	}
	var err error
	if cs.TTL, err = duration("conversation.ttl", c.TTL, 0); err != nil {
		return nil, err
	}
	if cs.Lease, err = duration("conversation.lease", c.Lease, DefaultLease); err != nil {
		return nil, err
	}
	if cs.Lease < minLease {
		return nil, errorf("conversation.lease", "conversation: lease must be at least 1s (got %s)", cs.Lease)
	}
	return cs, nil
}

// loadResponsesStore checks a responses route's conversation settings:
// where its responses are kept and for how long, whose they are, the
// history budget of a previous_response_id chain, the compaction key. The
// skillpet component's settings (agent, thinking, …) mean nothing there.
func loadResponsesStore(c *Conversation) (*ConversationSettings, error) {
	for name, set := range map[string]bool{"agent_id": c.AgentID != "", "agent_name": c.AgentName != "",
		"agent_avatar": c.AgentAvatar != "", "agent_description": c.AgentDescription != "", "user_avatar": c.UserAvatar != "",
		"thinking": c.Thinking != "", "queued_send": c.QueuedSend != 0, "clear_url": c.ClearURL != ""} {
		if set {
			return nil, errorf("conversation."+name, "conversation: %s is for a skillpet route, not a responses route", name)
		}
	}
	cs := &ConversationSettings{
		Responses:     true,
		Store:         orDefault(c.Store, StoreFile),
		Dir:           c.Dir,
		RedisURL:      c.RedisURL,
		KeyPrefix:     orDefault(c.KeyPrefix, DefaultKeyPrefix),
		Scope:         orDefault(strings.TrimSpace(c.Scope), DefaultScope),
		CompactionKey: c.CompactionKey,
		Budget:        conversation.Budget{Messages: c.HistoryMessages, Bytes: int(c.HistoryBytes)},
	}
	switch {
	case cs.Store != StoreFile && cs.Store != StoreRedis:
		return nil, errorf("conversation.store", "conversation: unknown store %q (want file or redis)", cs.Store)
	case cs.Store == StoreFile && c.RedisURL != "":
		return nil, errorf("conversation.redis_url", "conversation: redis_url is for store redis")
	case cs.Store == StoreRedis && c.RedisURL == "":
		return nil, errorf("conversation.redis_url", "conversation: store redis needs a URL")
	case cs.Store == StoreRedis && c.Dir != "":
		return nil, errorf("conversation.dir", "conversation: dir is for store file")
	case c.HistoryMessages < 0 || c.HistoryBytes < 0 || c.HistoryBytes > 1<<40:
		return nil, errorf("conversation.history_messages", "conversation: history_messages and history_bytes must not be negative")
	case c.CompactionKey != "" && !strings.Contains(c.CompactionKey, "{") && len(c.CompactionKey) < 16:
		return nil, errorf("conversation.compaction_key", "conversation: compaction_key must be at least 16 bytes")
	}
	if cs.Budget.Messages == 0 {
		cs.Budget.Messages = DefaultResponsesHistoryItems
	}
	if cs.Budget.Bytes == 0 {
		cs.Budget.Bytes = DefaultResponsesHistoryBytes
	}
	var err error
	if cs.TTL, err = duration("conversation.ttl", c.TTL, DefaultResponsesTTL); err != nil {
		return nil, err
	}
	if cs.Lease, err = duration("conversation.lease", c.Lease, DefaultLease); err != nil {
		return nil, err
	}
	return cs, nil
}
