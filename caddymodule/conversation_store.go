package caddymodule

import (
	"context"
	"path/filepath"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/conversation/filestore"
	"github.com/llmstream/llmstream/conversation/redisstore"
)

// A conversation route's store (CONTRACT.md §9): opened when the route is
// provisioned, let go when it is cleaned up; its endpoints are in
// conversation_endpoints.go, its streamed turns in conversation_turn.go.

// storeTimeout bounds every store call of a request: a store that hangs
// is an error before the stream starts, not a stalled request.
const storeTimeout = 10 * time.Second

// conversationRoute is a route's conversation block, provisioned.
type conversationRoute struct {
	cs      *config.ConversationSettings
	store   conversation.Store
	poolKey string // the Redis client's key in redisStores; "" for files
	logger  *zap.Logger
	metrics *metrics
	// What init announces of the route's tools (park.go sets them): its
	// sub-agents, and whether it has search and image tools.
	agents         []agentInfo
	search, images bool
}

// redisStores shares one Redis client per server and settings across
// config reloads, as Caddy's own modules share listeners.
var redisStores = caddy.NewUsagePool()

// pooledRedis is a Redis store in redisStores.
type pooledRedis struct{ *redisstore.Store }

// Destruct closes the client when the last route using it is gone.
func (p pooledRedis) Destruct() error { return p.Close() }

// provisionConversation opens the route's store. A Redis store does not
// connect yet: a Redis that is down fails requests with a clear error,
// not the config load.
func (h *Handler) provisionConversation(ctx caddy.Context) error {
	cs := h.settings.Conversation
	if cs == nil {
		return nil
	}
	store, poolKey, err := openStore(cs)
	if err != nil {
		return err
	}
	if cs.Responses {
		return h.provisionResponses(ctx, cs, store, poolKey) // responses_store.go
	}
	h.conv = &conversationRoute{cs: cs, logger: h.logger, metrics: h.metrics, store: store, poolKey: poolKey}
	return nil
}

// openStore opens the store cs names, and returns the key of a pooled
// Redis client ("" for files).
func openStore(cs *config.ConversationSettings) (conversation.Store, string, error) {
	switch cs.Store {
	case config.StoreRedis:
		// {env.…} placeholders are expanded here, so that the password
		// stays out of the adapted config; the URL is never logged.
		u := caddy.NewReplacer().ReplaceKnown(cs.RedisURL, "")
		key := strings.Join([]string{u, cs.KeyPrefix, cs.TTL.String(), cs.Lease.String()}, "\x00")
		v, _, err := redisStores.LoadOrNew(key, func() (caddy.Destructor, error) {
			s, err := redisstore.Open(u, cs.KeyPrefix, cs.TTL, cs.Lease)
			return pooledRedis{s}, err
		})
		if err != nil {
			return nil, "", err
		}
		return v.(pooledRedis).Store, key, nil
	default:
		dir := cs.Dir
		if dir == "" {
			def := config.DefaultConversationDir
			if cs.Responses {
				def = config.DefaultResponsesDir
			}
			dir = filepath.Join(caddy.AppDataDir(), def)
		}
		s, err := filestore.New(dir, cs.TTL)
		if err != nil {
			return nil, "", err
		}
		return s, "", nil
	}
}

// close lets go of the route's Redis client (the last route using it
// closes it); a file store holds nothing open.
func (c *conversationRoute) close() error {
	if c == nil || c.poolKey == "" {
		return nil
	}
	_, err := redisStores.Delete(c.poolKey)
	return err
}

// release gives a lock back; a failure is logged (a Redis lock then
// expires after its lease).
func (c *conversationRoute) release(ctx context.Context, rid string, l conversation.Lock) {
	if err := l.Release(ctx); err != nil {
		c.logger.Warn("conversation lock not released", zap.String("request_id", rid), zap.Error(err))
	}
}

// nowMillis is the time stamp of stored records.
func nowMillis() int64 { return time.Now().UnixMilli() }
