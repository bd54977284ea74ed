// Package caddymodule is the llm_stream Caddy module: the handler that
// shapes chat requests and re-encodes the streamed replies, its Caddyfile
// directive, the response writer wrapper, logs and metrics. The llm_mock
// fake upstream is its own module, in caddymodule/llmmock. Everything that
// can be tested without a server lives in transform/ and config/.
package caddymodule

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/protocol"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler is the llm_stream middleware. It rewrites a chat-completions
// request (system prompt, tools, tool_choice, model, forced streaming),
// hands it to the next handler (reverse_proxy), and re-encodes the streamed
// reply into the route's protocol, parsing the model's text incrementally as
// it arrives. It never opens upstream connections itself.
//
// Its configuration is config.Route, whose fields are this module's JSON
// config.
type Handler struct {
	config.Route

	settings *config.Settings
	proto    *protocol.Protocol
	pool     *sync.Pool // *pipeline.Pipeline
	logger   *zap.Logger
	metrics  *metrics
	clock    clock              // the stream timers' clock; nil is the system's (tests set one)
	conv     *conversationRoute // the conversation block; nil without one (conversation_store.go)
	resp     *responsesRoute    // a responses route's stored responses, WebSocket mode and compaction (responses_*.go)
	servers  *toolserver.Set    // the tools block's servers; nil without one (tools.go)
	parks    *parkRoute         // where calls waiting for the user are kept; nil without tools (park.go)
	// serversStarted is when the servers were started (startupGrace).
	serversStarted time.Time
	// path is the config path that leads to the route, found on the
	// first request (routes.go): its name when it has none.
	path *routePath
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_stream",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision loads and checks the route's files and settings. File paths are
// relative to Caddy's working directory.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	settings, err := h.Route.Load("")
	if err != nil {
		return err
	}
	// Load resolved the protocol and request format rows.
	h.settings, h.proto = settings, settings.Proto
	h.path = new(routePath)
	cfg := pipeline.Config{Format: format.Name(settings.Format), Parser: settings.ParserOptions()}
	if _, err := pipeline.New(cfg); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	h.pool = &sync.Pool{New: func() any {
		p, _ := pipeline.New(cfg) // the config was checked above
		return p
	}}
	h.metrics, err = registerMetrics(ctx.GetMetricsRegistry())
	if err != nil {
		return err
	}
	if err := h.provisionConversation(ctx); err != nil { // conversation_store.go, responses_store.go
		return err
	}
	if err := h.provisionTools(); err != nil { // tools.go
		return err
	}
	return h.provisionPark() // park.go
}

// Validate checks the settings Provision resolved.
func (h *Handler) Validate() error {
	if h.settings == nil {
		return errors.New("llm_stream: not provisioned")
	}
	return nil
}

// Cleanup lets go of what Provision opened: the tool servers (stdio
// servers are stopped and reaped, tools.go) and the conversation store's
// Redis client, which routes share (conversation_store.go).
func (h *Handler) Cleanup() error {
	return errors.Join(h.cleanupTools(), h.conv.close(), h.resp.close(), h.parks.close())
}

// ServeHTTP shapes the request, proxies it through next, and re-encodes the
// reply. Requests other than POST pass through untouched (a GET /v1/models
// behind the same matcher).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	// A file a tool produced, kept for the client (files.go).
	if id := fileRequest(r); id != "" && h.parks != nil {
		h.serveFile(w, r, id)
		return nil
	}
	// A conversation route answers init, clear and the rest itself, and
	// streams only POST …/stream (conversation_endpoints.go).
	if h.conv != nil && h.conv.serveEndpoint(w, r) {
		return nil
	}
	if h.conv != nil && r.Method == http.MethodPost && parseEndpoint(r).name == endpointToolResponse {
		return h.serveToolResponse(w, r, next) // resume.go
	}
	// A responses route answers GET / DELETE …/{id} and the WebSocket
	// upgrade itself (responses_store.go, responses_ws.go).
	if h.resp != nil && h.resp.serveEndpoint(h, w, r, next) {
		return nil
	}
	if r.Method != http.MethodPost {
		return next.ServeHTTP(w, r)
	}
	c := h.shape(w, r) // shape.go
	if c == nil {
		return nil // answered without the upstream
	}
	defer c.turn.end()
	return h.stream(w, r, c, next) // stream.go
}

// writerRoute is what the route gives each stream's writer.
func (h *Handler) writerRoute() writerRoute {
	return writerRoute{proto: h.proto, idle: h.settings.IdleTimeout, heartbeat: h.settings.Heartbeat,
		clock: h.clock, logger: h.logger}
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
