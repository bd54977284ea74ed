package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/conversation"
)

// The conversation endpoints (CONTRACT.md §9, specs/002 §2) are the last
// segments of the path the client used, under the route's base path:
// GET <base>/init/{projectId}, POST <base>/stream, DELETE
// <base>/conversation/{projectId} (the clearUrl init announces), POST
// <base>/tool-response.
const (
	endpointInit         = "init"
	endpointStream       = "stream"
	endpointClear        = "conversation"
	endpointToolResponse = "tool-response"
	endpointImageSelect  = "image-select"
)

// maxProjectID bounds a projectId: it is hashed into a key, but a client
// should not make the gateway hash megabytes.
const maxProjectID = 256

// endpoint is a request's place among the conversation endpoints.
type endpoint struct {
	name      string // endpointInit, …; "" for none
	method    string // the method it takes
	base      string // the route's base path, as the client reached it
	projectID string // of init and clear
}

// parseEndpoint reads the endpoint from the path the client used (the
// route's own handlers may have rewritten r.URL, to the upstream's
// chat-completions path, before llm_stream runs) and the method: a path
// can be read two ways (…/init/stream is the init of project "stream", or
// the stream endpoint of a route based at …/init), and the method
// decides. A path that is an endpoint only under another method gives
// that endpoint, for a 405.
func parseEndpoint(r *http.Request) endpoint {
	u := r.URL
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.URL != nil {
		u = orig.URL
	}
	segs := strings.Split(u.EscapedPath(), "/")
	n := len(segs)
	var found []endpoint
	if n >= 2 && (segs[n-1] == endpointStream || segs[n-1] == endpointToolResponse) {
		found = append(found, endpoint{name: segs[n-1], method: http.MethodPost, base: strings.Join(segs[:n-1], "/")})
	}
	if n >= 3 && (segs[n-2] == endpointInit || segs[n-2] == endpointClear || segs[n-2] == endpointImageSelect) {
		id, err := url.PathUnescape(segs[n-1])
		if err != nil {
			id = ""
		}
		method := http.MethodGet
		switch segs[n-2] {
		case endpointClear:
			method = http.MethodDelete
		case endpointImageSelect:
			method = http.MethodPost
		}
		found = append(found, endpoint{name: segs[n-2], method: method, base: strings.Join(segs[:n-2], "/"), projectID: id})
	}
	for _, ep := range found {
		if ep.method == r.Method || ep.method == http.MethodGet && r.Method == http.MethodHead {
			return ep
		}
	}
	if len(found) > 0 {
		return found[0]
	}
	return endpoint{}
}

// serveEndpoint answers every request of a conversation route except POST
// …/stream, which the caller streams, and OPTIONS, which goes on to the
// next handler as on any llm_stream route: a browser's CORS preflight is
// answered by Caddy's own directives. For those two it returns false.
func (c *conversationRoute) serveEndpoint(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodOptions {
		return false
	}
	ep := parseEndpoint(r)
	rid := requestID(r)
	switch {
	case ep.name == "":
		c.answer(w, rid, http.StatusNotFound, "NOT_FOUND", "no such endpoint: the conversation endpoints are GET …/init/{projectId}, POST …/stream, POST …/tool-response, POST …/image-select/{projectId} and DELETE …/conversation/{projectId}")
	case r.Method != ep.method && !(ep.method == http.MethodGet && r.Method == http.MethodHead):
		w.Header().Set("Allow", ep.method)
		c.answer(w, rid, http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED", "use "+ep.method)
	case ep.name == endpointStream, ep.name == endpointToolResponse:
		// Streamed by the handler: a turn, or the continuation of a call
		// that waited for the user's choice (specs/002 §2.4, resume.go).
		return false
	case ep.projectID == "" || len(ep.projectID) > maxProjectID:
		c.answer(w, rid, http.StatusBadRequest, "MISSING_PARAMS", "the path must end with a projectId of 1 to 256 bytes")
	default:
		scope := c.scope(r)
		if scope == "" {
			c.noScope(w, rid)
			return true
		}
		key := conversation.NewKey(scope, c.cs.AgentID, ep.projectID)
		switch ep.name {
		case endpointInit:
			c.init(w, r, rid, ep, key)
		case endpointImageSelect:
			c.imageSelect(w, r, rid, key) // images.go
		default:
			c.clear(w, r, rid, key)
		}
	}
	return true
}

// scope returns the request's scope value: whose conversations it may
// reach. It is hashed into keys, never stored or logged.
func (c *conversationRoute) scope(r *http.Request) string {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		repl = caddy.NewReplacer()
	}
	return repl.ReplaceAll(c.cs.Scope, "")
}

// noScope answers a request whose scope is empty with 403: an empty scope
// would put every anonymous client in one conversation.
func (c *conversationRoute) noScope(w http.ResponseWriter, rid string) {
	c.answer(w, rid, http.StatusForbidden, "FORBIDDEN", "no conversation scope: the request has no value for "+c.cs.Scope)
}

// answer writes a JSON error {"error": code, "message": msg}, the shape
// of specs/002 §2.3's errors, and counts it among the rejected requests
// (the codes are a fixed set).
func (c *conversationRoute) answer(w http.ResponseWriter, rid string, status int, code, msg string) {
	if c.metrics != nil {
		c.metrics.rejected(strings.ToLower(code))
	}
	body, _ := json.Marshal(struct {
		Error   string `json:"error"`
		Message string `json:"message"`
	}{code, msg})
	_ = writeJSON(w, status, rid, body)
}

// storeFailed answers a request the store could not serve. The error goes
// to the log (it names no user and no text); the client gets 409 for a
// conversation that is busy, else 503.
func (c *conversationRoute) storeFailed(w http.ResponseWriter, rid, code string, err error) {
	if errors.Is(err, conversation.ErrBusy) {
		c.answer(w, rid, http.StatusConflict, codeBusy, msgBusy)
		return
	}
	c.logger.Warn("conversation store failed", zap.String("request_id", rid), zap.Error(err))
	c.answer(w, rid, http.StatusServiceUnavailable, code, msgStoreDown)
}

// What a busy conversation and a store that is down answer.
const (
	codeBusy     = "CONVERSATION_BUSY"
	msgBusy      = "another reply to this conversation is still streaming: send this message when it has ended"
	msgStoreDown = "the conversation store is unavailable"
)

// initData is specs/002 §2.2's ChatInitData.
type initData struct {
	Agent struct {
		ID          string `json:"id"`
		Name        string `json:"name"`
		AvatarURL   string `json:"avatarUrl,omitempty"`
		Description string `json:"description,omitempty"`
	} `json:"agent"`
	Capabilities struct {
		Thinking        capToggle `json:"thinking"`
		Search          capToggle `json:"search"`
		ImageGeneration *struct {
			Enabled bool `json:"enabled"`
		} `json:"imageGeneration,omitempty"`
		Reset      resetCap `json:"reset"`
		QueuedSend *struct {
			Enabled      bool `json:"enabled"`
			MaxQueueSize int  `json:"maxQueueSize"`
		} `json:"queuedSend,omitempty"`
	} `json:"capabilities"`
	SubAgents     []agentInfo                   `json:"subAgents,omitempty"`
	UserAvatarURL string                        `json:"userAvatarUrl,omitempty"`
	Messages      []conversation.HistoryMessage `json:"messages"`
}

// agentInfo is specs/002 §2.2's AgentInfo: a sub-agent the route declares.
type agentInfo struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	AvatarURL string `json:"avatarUrl,omitempty"`
}

type capToggle struct {
	Enabled   bool `json:"enabled"`
	DefaultOn bool `json:"defaultOn"`
}

type resetCap struct {
	Enabled  bool   `json:"enabled"`
	ClearURL string `json:"clearUrl"`
}

// init answers GET …/init/{projectId}: the agent and capabilities from the
// config and the stored history, oldest first (specs/002 §2.2): search
// when the route marks search tools (enableSearch offers them), image
// generation when it has image tools, its sub-agents (CONTRACT.md §13).
func (c *conversationRoute) init(w http.ResponseWriter, r *http.Request, rid string, ep endpoint, key conversation.Key) {
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	recs, err := c.store.Load(ctx, key)
	if err != nil {
		c.storeFailed(w, rid, "STORE_UNAVAILABLE", err)
		return
	}
	var d initData
	cs := c.cs
	d.Agent.ID, d.Agent.Name, d.Agent.AvatarURL, d.Agent.Description = cs.AgentID, cs.AgentName, cs.AgentAvatar, cs.AgentDescription
	d.Capabilities.Thinking = capToggle{cs.ThinkingEnabled, cs.ThinkingDefaultOn}
	d.Capabilities.Search = capToggle{Enabled: c.search}
	if c.images {
		d.Capabilities.ImageGeneration = &struct {
			Enabled bool `json:"enabled"`
		}{true}
	}
	d.SubAgents = c.agents
	d.Capabilities.Reset = resetCap{Enabled: true, ClearURL: cs.ClearURL}
	if d.Capabilities.Reset.ClearURL == "" {
		d.Capabilities.Reset.ClearURL = ep.base + config.ClearPathSuffix
	}
	if cs.QueuedSend > 0 {
		d.Capabilities.QueuedSend = &struct {
			Enabled      bool `json:"enabled"`
			MaxQueueSize int  `json:"maxQueueSize"`
		}{true, cs.QueuedSend}
	}
	d.UserAvatarURL = cs.UserAvatar
	d.Messages = conversation.History(recs)
	body, err := json.Marshal(d)
	if err != nil {
		c.storeFailed(w, rid, "STORE_UNAVAILABLE", err)
		return
	}
	_ = writeJSON(w, http.StatusOK, rid, body)
}

// clear answers DELETE …/conversation/{projectId}: the conversation is
// deleted under its lock, so a reply still streaming is not cut in two
// (409 while it streams).
func (c *conversationRoute) clear(w http.ResponseWriter, r *http.Request, rid string, key conversation.Key) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
	defer cancel()
	l, err := c.store.Lock(ctx, key)
	if err != nil {
		c.storeFailed(w, rid, "STORE_UNAVAILABLE", err)
		return
	}
	err = l.Clear(ctx)
	c.release(ctx, rid, l)
	if err != nil {
		c.storeFailed(w, rid, "STORE_UNAVAILABLE", err)
		return
	}
	_ = writeJSON(w, http.StatusOK, rid, []byte(`{"cleared":true}`))
}
