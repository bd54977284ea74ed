package toolserver

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// Resource subscriptions (CONTRACT.md §13, specs/002 §3.6): a server block
// names resources (subscribe <uri> [<key>]); every session with that
// server subscribes to them when it connects, and an update
// (notifications/resources/updated) is read and handed, as a snapshot, to
// the streams that watch the Set (Watch): the client sees
// resource_updated {key, snapshot}. An update of a static server's
// resource (one session for every user of the route) reaches every
// stream of the route; one of a per-user session (header placeholders)
// reaches only the streams of that user.

// Update is a subscribed resource's new state.
type Update struct {
	// Key is the subscription's key (its URI when the config gives none).
	Key string
	// Snapshot is the resource as JSON: its text when that is a JSON
	// value, else {"uri", "mimeType", "text"} (or "size" for a blob).
	Snapshot json.RawMessage
}

// watcher is a stream that watches the Set's subscriptions.
type watcher struct {
	resolve Resolver
	fn      func(Update)
}

// watchers are the Set's watchers.
type watchers struct {
	mu   sync.Mutex
	next int
	m    map[int]*watcher
}

// Watch hands fn every update of a subscribed resource that the request
// whose header placeholders r resolves may see, until stop is called. fn
// is called from another goroutine and must not block.
func (s *Set) Watch(r Resolver, fn func(Update)) (stop func()) {
	if !s.hasSubscriptions() {
		return func() {}
	}
	w := &s.watch
	w.mu.Lock()
	if w.m == nil {
		w.m = map[int]*watcher{}
	}
	id := w.next
	w.next++
	w.m[id] = &watcher{resolve: r, fn: fn}
	w.mu.Unlock()
	return func() {
		w.mu.Lock()
		delete(w.m, id)
		w.mu.Unlock()
	}
}

// hasSubscriptions reports whether a server of the Set subscribes to any
// resource.
func (s *Set) hasSubscriptions() bool {
	for _, srv := range s.servers {
		if len(srv.subscribe) > 0 {
			return true
		}
	}
	return false
}

// subscribeAll subscribes a new session to its server's resources, each
// in a goroutine of its own (under the current revision a subscription is
// a stream that lasts as long as the session).
func (c *conn) subscribeAll() {
	srv := c.srv
	for _, sub := range srv.subscribe {
		srv.set.wg.Add(1)
		go func() {
			defer srv.set.wg.Done()
			// The subscription lasts as long as the session, or the Set.
			ctx, cancel := context.WithCancel(srv.set.ctx)
			defer cancel()
			srv.set.wg.Add(1)
			go func() {
				defer srv.set.wg.Done()
				select {
				case <-c.gone:
					cancel()
				case <-ctx.Done():
				}
			}()
			if err := c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: sub.URI}); err != nil && ctx.Err() == nil {
				srv.logger.Warn("subscribing to a resource failed", zap.String("uri", sub.URI), zap.Error(err))
			}
		}()
	}
}

// onResourceUpdated reads an updated resource and hands it to the
// watchers, outside the notification handler.
func (s *Set) onResourceUpdated(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
	if req.Params == nil {
		return
	}
	v, ok := s.sessions.Load(req.Session)
	if !ok {
		return
	}
	c := v.(*conn)
	key, ok := c.srv.subscriptionKey(req.Params.URI)
	if !ok {
		return
	}
	uri := req.Params.URI
	s.wg.Add(1)
	s.pending.Add(1)
	go func() {
		defer s.wg.Done()
		defer s.pending.Add(-1)
		ctx, cancel := context.WithTimeout(s.ctx, c.srv.timeout)
		defer cancel()
		snap, err := c.snapshot(ctx, uri)
		if err != nil {
			c.srv.logger.Debug("reading an updated resource failed", zap.String("uri", uri), zap.Error(err))
			return
		}
		s.broadcast(c, Update{Key: key, Snapshot: snap})
	}()
}

// SettleUpdates waits, at most until ctx ends, for the updates whose
// notification came to be read and handed to the watchers: an update a
// tool call caused reaches the stream before the call's next round (its
// notification comes before the call's result).
func (s *Set) SettleUpdates(ctx context.Context) {
	for s.pending.Load() > 0 {
		select {
		case <-ctx.Done():
			return
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// subscriptionKey returns the key of a subscribed URI.
func (srv *server) subscriptionKey(uri string) (string, bool) {
	for _, sub := range srv.subscribe {
		if sub.URI == uri {
			if sub.Key != "" {
				return sub.Key, true
			}
			return uri, true
		}
	}
	return "", false
}

// snapshot reads a resource as the JSON of an update.
func (c *conn) snapshot(ctx context.Context, uri string) (json.RawMessage, error) {
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return nil, err
	}
	if res == nil || len(res.Contents) == 0 || res.Contents[0] == nil {
		return json.RawMessage(`{"uri":` + quoteJSON(uri) + `}`), nil
	}
	rc := res.Contents[0]
	if rc.Blob == nil && len(rc.Text) <= c.srv.set.maxBinary && json.Valid([]byte(rc.Text)) && rc.Text != "" {
		return json.RawMessage(rc.Text), nil
	}
	snap := map[string]any{"uri": uri, "mimeType": rc.MIMEType}
	if rc.Blob != nil {
		snap["size"] = len(rc.Blob)
	} else {
		text := rc.Text
		if len(text) > c.srv.set.maxBinary {
			text = text[:c.srv.set.maxBinary]
		}
		snap["text"] = text
	}
	b, err := json.Marshal(snap)
	return b, err
}

func quoteJSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// broadcast hands an update of c's resource to the watchers that may see
// it: every watcher for a static server's session, the watchers whose
// headers resolve to c for a per-user session.
func (s *Set) broadcast(c *conn, u Update) {
	s.watch.mu.Lock()
	ws := make([]*watcher, 0, len(s.watch.m))
	for _, w := range s.watch.m {
		ws = append(ws, w)
	}
	s.watch.mu.Unlock()
	for _, w := range ws {
		if c.srv.dynamic {
			if w.resolve == nil || c.srv.sessionKey(w.resolve) != c.key {
				continue
			}
		}
		w.fn(u)
	}
}
