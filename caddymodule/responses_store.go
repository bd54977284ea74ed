package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/conversation/filestore"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/responses"
)

// responsesRoute is what a responses route (request_format and protocol
// responses) adds to the stream (CONTRACT.md §14): responses kept in the
// conversation store for previous_response_id and GET / DELETE
// /v1/responses/{id}, compaction (POST …/compact and compaction_trigger
// items) sealed with the route's key, and WebSocket mode
// (responses_ws.go).
type responsesRoute struct {
	cs      *config.ConversationSettings
	store   conversation.Store
	poolKey string // the Redis client's key in redisStores; "" for files
	logger  *zap.Logger
	metrics *metrics

	// sealer seals and opens compaction items. It is made on first use:
	// the store's secret may live in a Redis that is down at provision.
	mu     sync.Mutex
	sealer *responses.Sealer
}

// compactionSecret names the store's secret compaction items are sealed
// with.
const compactionSecret = "compaction"

// provisionResponses sets up a responses route's store and key.
func (h *Handler) provisionResponses(ctx caddy.Context, cs *config.ConversationSettings, store conversation.Store, poolKey string) error {
	c := &responsesRoute{cs: cs, store: store, poolKey: poolKey, logger: h.logger, metrics: h.metrics}
	if cs.CompactionKey != "" {
		key := caddy.NewReplacer().ReplaceKnown(cs.CompactionKey, "")
		s, err := responses.NewSealer([]byte(key))
		if err != nil {
			return errors.New("llm_stream: conversation.compaction_key: " + err.Error())
		}
		c.sealer = s
	}
	if fs, ok := store.(*filestore.Store); ok {
		// Responses nobody reads again are removed here; the others when
		// they are read past their ttl.
		go func() {
			if n, err := fs.SweepResponses(ctx); n > 0 || err != nil && ctx.Err() == nil {
				h.logger.Debug("expired responses removed", zap.Int("count", n), zap.Error(err))
			}
		}()
	}
	h.resp = c
	return nil
}

// close lets go of the route's Redis client (the last route using it
// closes it).
func (c *responsesRoute) close() error {
	if c == nil || c.poolKey == "" {
		return nil
	}
	_, err := redisStores.Delete(c.poolKey)
	return err
}

// getSealer returns the route's compaction sealer, reading (or making)
// the store's secret the first time.
func (c *responsesRoute) getSealer(ctx context.Context) (*responses.Sealer, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.sealer != nil {
		return c.sealer, nil
	}
	secret, err := c.store.Secret(ctx, compactionSecret)
	if err != nil {
		return nil, err
	}
	s, err := responses.NewSealer(secret)
	if err != nil {
		return nil, err
	}
	c.sealer = s
	return s, nil
}

// scope returns whose responses the request reaches, "" for none: such a
// request keeps nothing and continues nothing stored.
func (c *responsesRoute) scope(r *http.Request) string {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		repl = caddy.NewReplacer()
	}
	return repl.ReplaceAll(c.cs.Scope, "")
}

// endpointOf reads a responses route's endpoint from the path the client
// used: …/compact (POST), …/{response id} (GET, DELETE), or the route
// itself ("").
func endpointOf(r *http.Request) (compact bool, id string) {
	p := strings.TrimSuffix(clientPath(r), "/")
	last := p[strings.LastIndexByte(p, '/')+1:]
	switch {
	case last == "compact":
		return true, ""
	case strings.HasPrefix(last, "resp_"):
		return false, last
	}
	return false, ""
}

// serveEndpoint answers what a responses route serves besides creating a
// response: GET and DELETE /v1/responses/{id}, and the WebSocket upgrade
// of GET /v1/responses. It returns false for the rest.
func (c *responsesRoute) serveEndpoint(h *Handler, w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) bool {
	compact, id := endpointOf(r)
	switch {
	case r.Method == http.MethodGet && id == "" && !compact && isWebSocketUpgrade(r):
		h.serveWebSocket(w, r, next)
		return true
	case id != "" && (r.Method == http.MethodGet || r.Method == http.MethodDelete):
		c.retrieve(h, w, r, id)
		return true
	case id != "" || compact && r.Method != http.MethodPost:
		w.Header().Set("Allow", map[bool]string{true: "POST", false: "GET, DELETE"}[compact])
		h.reject(w, requestID(r), &request.Error{Status: http.StatusMethodNotAllowed, Code: "method_not_allowed",
			Message: r.Method + " is not served here: POST /v1/responses/compact, GET or DELETE /v1/responses/{id}"})
		return true
	}
	return false
}

// retrieve answers GET (the stored Response) and DELETE (the deletion
// object OpenAI answers) of /v1/responses/{id}; 404 in OpenAI's error
// shape for a response this client has not stored.
func (c *responsesRoute) retrieve(h *Handler, w http.ResponseWriter, r *http.Request, id string) {
	rid := requestID(r)
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	notFound := &request.Error{Status: http.StatusNotFound, Code: "not_found",
		Message: "no response with id '" + printableID(id) + "' is stored for this client"}
	scope := c.scope(r)
	if scope == "" {
		h.reject(w, rid, notFound)
		return
	}
	key := conversation.NewResponseKey(scope, id)
	if r.Method == http.MethodDelete {
		ok, err := c.store.DeleteResponse(ctx, key)
		switch {
		case err != nil:
			c.storeDown(h, w, rid, err)
		case !ok:
			h.reject(w, rid, notFound)
		default:
			out := append([]byte(`{"id":`), jsonout.AppendStringS(nil, id)...)
			_ = writeJSON(w, http.StatusOK, rid, append(out, `,"object":"response","deleted":true}`...))
		}
		return
	}
	data, err := c.store.GetResponse(ctx, key)
	if errors.Is(err, conversation.ErrNotFound) {
		h.reject(w, rid, notFound)
		return
	}
	if err != nil {
		c.storeDown(h, w, rid, err)
		return
	}
	s, err := responses.DecodeStored(data)
	if err != nil || s.ID != id {
		h.reject(w, rid, notFound)
		return
	}
	_ = writeJSON(w, http.StatusOK, rid, s.Response)
}

// storeDown answers 503 when the store failed; the error goes to the log,
// never to the client (it may name a host).
func (c *responsesRoute) storeDown(h *Handler, w http.ResponseWriter, rid string, err error) {
	c.logger.Warn("response store unavailable", zap.String("request_id", rid), zap.Error(err))
	h.reject(w, rid, &request.Error{Status: http.StatusServiceUnavailable, Code: "store_unavailable",
		Message: "the response store is unavailable; try again"})
}

// printableID returns an id cut to printable ASCII, for a message.
func printableID(id string) string {
	b := make([]byte, 0, min(len(id), 64))
	for i := 0; i < len(id) && len(b) < 64; i++ {
		if c := id[i]; c > 0x20 && c < 0x7f && c != '\'' && c != '"' && c != '\\' {
			b = append(b, c)
		}
	}
	return string(b)
}

// respTurn is one response of a responses route: what prepare decided,
// and what end stores.
type respTurn struct {
	c     *responsesRoute
	rid   string
	scope string
	// prev is the resolved previous_response_id, "" for none.
	prev string
	// prior are the chain's items (oldest first), own the request's own
	// input items.
	prior, own []json.RawMessage
	// compaction is the kind of compaction the response is.
	compaction responses.Compaction
	sealer     *responses.Sealer
	// store is whether the client asked to store it and can (a scope).
	store bool
	// noGenerate: the request says generate: false (Codex's WebSocket
	// warm-up): the response is answered, empty, without the upstream.
	noGenerate bool
	// ws is the WebSocket session the turn belongs to, nil over HTTP.
	ws *wsSession
	// enc is the stream's encoder, for the Response at the end.
	enc *responses.Encoder
}

// prepare reads what a responses request needs before it is shaped: the
// previous_response_id chain (from the WebSocket's last response, else
// the store), the compaction key when the input holds compaction items or
// asks for a compaction, and the kind of request (POST …/compact). It
// returns the body Convert is to read. A request it refuses never reaches
// the upstream: an unknown previous_response_id or a foreign compaction
// item are 400s, a store that is down a 503.
func (c *responsesRoute) prepare(r *http.Request, rid string, body []byte) ([]byte, *respTurn, *request.Error) {
	compact, _ := endpointOf(r)
	t := &respTurn{c: c, rid: rid, scope: c.scope(r), ws: wsSessionOf(r.Context())}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
	defer cancel()
	var p responses.Prep
	p.Compact = compact
	if prev := gjson.GetBytes(body, "previous_response_id"); prev.Type == gjson.String && prev.Str != "" {
		prior, e := c.chain(ctx, t, prev.Str)
		if e != nil {
			return nil, nil, e
		}
		p.Prior, p.Resolved, t.prev, t.prior = prior, true, prev.Str, prior
	}
	if compact || bytes.Contains(body, []byte("compaction")) {
		s, err := c.getSealer(ctx)
		if err != nil {
			c.logger.Warn("compaction key unavailable", zap.String("request_id", rid), zap.Error(err))
			return nil, nil, &request.Error{Status: http.StatusServiceUnavailable, Code: "store_unavailable",
				Message: "the compaction key is unavailable (the response store did not answer); try again"}
		}
		p.Sealer, t.sealer = s, s
	}
	prepared, e := responses.Prepare(body, p)
	if e != nil {
		return nil, nil, e
	}
	t.own = prepared.Own
	switch {
	case compact:
		t.compaction = responses.CompactionEndpoint
	case prepared.Trigger:
		t.compaction = responses.CompactionTrigger
	}
	t.store = !compact && t.scope != "" && gjson.GetBytes(body, "store").Type != gjson.False
	t.noGenerate = !compact && !prepared.Trigger && gjson.GetBytes(body, "generate").Type == gjson.False
	return prepared.Body, t, nil
}

// maxChain bounds the responses a chain walk reads, whatever the budget:
// a cycle or a chain of tiny responses cannot make one request read the
// store forever.
const maxChain = 10_000

// chain returns the items of the chain that ends at id, oldest first,
// within the route's history budget: the WebSocket's last response when it
// is id (no store read), else the stored responses, newest first, until
// the budget is full or the chain ends.
func (c *responsesRoute) chain(ctx context.Context, t *respTurn, id string) ([]json.RawMessage, *request.Error) {
	notFound := &request.Error{Status: http.StatusBadRequest, Code: responses.CodePreviousResponseNotFound,
		Param: "previous_response_id", Message: "previous response with id '" + printableID(id) + "' not found"}
	if items, ok := t.ws.lookup(id); ok {
		return items, nil
	}
	if t.scope == "" {
		return nil, notFound
	}
	ch := responses.Chain{MaxItems: c.cs.Budget.Messages, MaxBytes: c.cs.Budget.Bytes}
	seen := map[string]bool{}
	for next, n := id, 0; next != "" && !seen[next] && n < maxChain; n++ {
		seen[next] = true
		data, err := c.store.GetResponse(ctx, conversation.NewResponseKey(t.scope, next))
		if errors.Is(err, conversation.ErrNotFound) {
			if next == id {
				return nil, notFound
			}
			break // an older response expired: the chain starts after it
		}
		if err != nil {
			c.logger.Warn("response store unavailable", zap.String("request_id", t.rid), zap.Error(err))
			return nil, &request.Error{Status: http.StatusServiceUnavailable, Code: "store_unavailable",
				Message: "the response store is unavailable; try again"}
		}
		s, err := responses.DecodeStored(data)
		if err != nil || s.ID != next {
			if next == id {
				return nil, notFound
			}
			break
		}
		if !ch.Add(s) {
			break
		}
		next = s.Prev
	}
	return ch.Items(), nil
}

// facts puts the turn's decisions into the request's facts, for the
// encoder.
func (t *respTurn) facts(info *request.Info) {
	req, _ := info.Facts.(responses.Request)
	req.Store = t.store && req.Store
	req.PreviousResponseID = t.prev
	req.Compaction = t.compaction
	req.Sealer = t.sealer
	req.WebSocket = t.ws != nil
	info.Facts = req
	if t.compaction == responses.CompactionEndpoint {
		info.Stream = false
	}
}

// encoder wraps the stream's encoder so that the response is stored (and
// a WebSocket's last response kept) when it ends, before the terminal
// event reaches the client: a client that sends its next request with
// previous_response_id as soon as it sees response.completed finds it.
func (t *respTurn) encoder(inner transform.Encoder) transform.Encoder {
	enc, ok := inner.(*responses.Encoder)
	if !ok {
		return inner
	}
	t.enc = enc
	return &storingEncoder{Encoder: enc, t: t}
}

// storingEncoder is a responses Encoder that ends its turn at the terminal
// event.
type storingEncoder struct {
	*responses.Encoder
	t     *respTurn
	ended bool
}

// AppendEvent encodes ev, then ends the turn after a terminal event.
func (s *storingEncoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	dst = s.Encoder.AppendEvent(dst, ev)
	if !s.ended && (ev.Kind == transform.KindFinish || ev.Kind == transform.KindError) {
		s.ended = true
		s.t.end()
	}
	return dst
}

// end stores the response that ended (when the client asked and it is not
// a compact request), and makes it the WebSocket's last response.
func (t *respTurn) end() {
	status := t.enc.Ended()
	if status == "" || t.compaction == responses.CompactionEndpoint {
		return
	}
	resp := t.enc.AppendResponse(nil)
	if t.ws != nil && status != "failed" {
		out, _ := (&responses.Stored{Response: resp}).Output()
		items := make([]json.RawMessage, 0, len(t.prior)+len(t.own)+len(out))
		items = append(append(append(items, t.prior...), t.own...), out...)
		t.ws.remember(t.enc.ID(), responses.TrimItems(items, t.c.cs.Budget.Messages, t.c.cs.Budget.Bytes))
	}
	if !t.store {
		return
	}
	data, err := responses.EncodeStored(responses.Stored{ID: t.enc.ID(), Prev: t.prev, Input: t.own, Response: resp})
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		err = t.c.store.PutResponse(ctx, conversation.NewResponseKey(t.scope, t.enc.ID()), data, t.c.cs.TTL)
	}
	if err != nil {
		// The response reached the client; continuing from it will be a
		// 400 previous_response_not_found, which the log explains.
		t.c.logger.Warn("response not stored", zap.String("request_id", t.rid), zap.Error(err))
	}
}

// answerEmpty answers a generate: false request (OpenAI's WebSocket
// warm-up, which Codex sends first on a new socket) without the upstream:
// a completed response with no output, kept like any other (the socket's
// last response, and the store when asked), so that the next request
// continues from its input with previous_response_id.
func (h *Handler) answerEmpty(w http.ResponseWriter, rt *respTurn, meta transform.Meta) {
	enc := rt.encoder(h.proto.NewEncoder(meta))
	out := enc.Begin(nil)
	out = enc.AppendEvent(out, transform.Event{Kind: transform.KindRouted, Name: meta.Model})
	out = enc.AppendEvent(out, transform.Event{Kind: transform.KindFinish, Code: "stop"})
	hdr := w.Header()
	hdr.Set("X-Request-Id", meta.RequestID)
	if meta.Stream {
		hdr.Set("Content-Type", h.proto.ContentType)
		hdr.Set("Cache-Control", "no-cache")
	} else {
		hdr.Set("Content-Type", "application/json")
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	_ = http.NewResponseController(w).Flush()
}
