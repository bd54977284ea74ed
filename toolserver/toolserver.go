// Package toolserver runs a route's MCP tool servers (CONTRACT.md §12,
// issue 18): it starts and supervises stdio servers, connects to
// streamable-HTTP ones, serves the built-in demo server in-process, lists
// their tools, and calls them for the agent loop. It is the I/O half of
// the loop; the decisions are in transform/agent, which this package hands
// results to as agent.Result.
//
// Everything a Set reaches comes from the route's config: nothing in a
// request selects a server, a command or a URL. A request only supplies
// the values of header placeholders (a user's credential) through a
// Resolver, and those values select which of the server's sessions a call
// uses, never which server.
//
// # Limits
//
// Every call has a timeout (the server's, started again by each progress
// notification, never beyond config.ToolTimeoutCap times it), a bound on
// what is read (MaxMessageBytes per MCP message: a larger reply is read
// through without being held and the call gets an error result; binary
// content over MaxBinaryBytes is replaced by a text part), and a
// cancellation (the caller's ctx: the SDK sends notifications/cancelled).
// A call's failure is an error result for the model, never a Go error.
//
// # Logs
//
// Server name, tool name, duration and outcome; never arguments, results,
// header values or environment values.
package toolserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform/agent"
)

// The bounds of what a Set holds.
const (
	// MaxMessageBytes bounds one MCP message read from a server (a stdio
	// line, an HTTP JSON body, an SSE event): a tool result larger than
	// this is never held whole; the call gets an error result saying so.
	MaxMessageBytes = 4 << 20
	// MaxBinaryBytes bounds one image, audio or blob of a result
	// (decoded); a larger one is replaced by a text part.
	MaxBinaryBytes = 1 << 20
	// MaxToolsPerServer bounds the tools read from one server's list.
	MaxToolsPerServer = 1000
	// MaxSessionsPerServer bounds the sessions of a server whose headers
	// take request values (one per distinct set of values).
	MaxSessionsPerServer = 64
	// SessionIdle closes such a session after this long unused.
	SessionIdle = 5 * time.Minute
)

// Tool is a tool one of the route's servers offers, as the model sees it.
type Tool struct {
	// Name is the name offered to the model: the server's prefix, then
	// the server's tool name.
	Name string
	// ServerTool is the tool's name on its server.
	ServerTool string
	// Server is the server's config name.
	Server string
	// Description is the server's description of the tool.
	Description string
	// InputSchema is the tool's JSON Schema for its arguments, compact
	// raw JSON (an object schema; {"type":"object"} when the server gave
	// none).
	InputSchema []byte
	// Label is the display label: the route's label, else the tool's
	// title, else its name.
	Label string
	// Approve is set when the route wants the user's approval before the
	// tool runs (CONTRACT.md §13).
	Approve bool
	// Event is the data event its results become (config's events), ""
	// for none; Image its image mode ("" when its results are not shown
	// as images); Search says it is offered only with search on.
	Event, Image string
	Search       bool
}

// Resolver expands request placeholders in a string: the request's Caddy
// replacer, wrapped (func(s string) string { return repl.ReplaceKnown(s, "") }).
type Resolver func(string) string

// CallOptions are what one call takes from its request.
type CallOptions struct {
	// Resolver expands request placeholders in header values; nil: none
	// (a server whose headers need request values is then not reachable).
	Resolver Resolver
	// Progress receives the server's progress notifications while the
	// call runs: at most one per 250ms (the latest wins), never after
	// Call returns. It is called from another goroutine and must not
	// block. nil: progress is not reported (it still extends the
	// timeout).
	Progress func(agent.Progress)
	// Ask says which questions the caller can show its user (CONTRACT.md
	// §13): a server's elicitation of such a question parks the call
	// (Result.Park) instead of being declined. 0: none, every
	// elicitation is declined.
	Ask AskMode
	// HoldTTL bounds how long a call its server holds open waits for the
	// user's answer (DefaultHoldTTL when 0).
	HoldTTL time.Duration
	// Done receives the call's record when it returns, on the calling
	// goroutine: for metrics and trace spans (CONTRACT.md §15), never
	// arguments or results. nil: not reported.
	Done func(CallRecord)
}

// CallRecord is what a finished call tells metrics and traces: where it
// ran, how it ended and how long it took.
type CallRecord struct {
	// Server is the configured name of the server that ran it, "" when no
	// server offers the tool (Outcome unknown_tool).
	Server string
	// Tool is the tool's name on its server; "" with no server, so that a
	// name the model made up never becomes a label.
	Tool string
	// Outcome is one of a fixed set: ok, tool_error, cancelled, timeout,
	// unknown_tool, server_down, bad_arguments, input_required,
	// too_large, protocol_error, connection_failed, server_stopped,
	// failed, closed, panic.
	Outcome  string
	Duration time.Duration
}

// Set is one route's tool servers. Its methods are safe for concurrent
// use.
type Set struct {
	logger  *zap.Logger
	servers []*server

	// Bounds and timings; tests shorten them.
	maxMessage int
	maxBinary  int
	backoffMin time.Duration
	backoffMax time.Duration
	stopGrace  time.Duration
	idle       time.Duration
	maxDyn     int

	ctx     context.Context
	cancel  context.CancelFunc
	wg      sync.WaitGroup
	started atomic.Bool
	closed  atomic.Bool

	tokens   atomic.Uint64 // progress tokens
	calls    sync.Map      // progressKey → *call
	active   sync.Map      // *mcp.ClientSession → *sessionCalls (elicit.go)
	watch    watchers      // the streams watching subscribed resources (subscribe.go)
	pending  atomic.Int64  // updates being read (subscribe.go)
	sessions sync.Map      // *mcp.ClientSession → *conn
	warned   sync.Map      // name collisions already logged

	httpTransport *http.Transport
}

// New checks cfg and prepares its servers; it starts nothing (Start does).
// logger gets the servers' connection events, their stderr (at debug) and
// one line per call.
func New(cfg *config.ToolServers, logger *zap.Logger) (*Set, error) {
	if cfg == nil {
		return nil, errors.New("toolserver: no tools block")
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	if logger == nil {
		logger = zap.NewNop()
	}
	ctx, cancel := context.WithCancel(context.Background())
	s := &Set{
		logger:     logger,
		maxMessage: MaxMessageBytes,
		maxBinary:  MaxBinaryBytes,
		backoffMin: time.Second,
		backoffMax: 30 * time.Second,
		stopGrace:  2 * time.Second,
		idle:       SessionIdle,
		maxDyn:     MaxSessionsPerServer,
		ctx:        ctx,
		cancel:     cancel,
	}
	s.httpTransport = newHTTPTransport()
	// {env.X} in commands, environments, URLs and headers: resolved once,
	// from Caddy's environment.
	repl := caddy.NewReplacer()
	expand := func(v string) string { return repl.ReplaceKnown(v, "") }
	for i := range cfg.MCP {
		srv, err := newServer(s, &cfg.MCP[i], expand)
		if err != nil {
			cancel()
			return nil, err
		}
		s.servers = append(s.servers, srv)
	}
	return s, nil
}

// Start connects every server in the background and keeps them connected
// (a stdio server that exits is started again, with a backoff from 1s to
// 30s; a server that is down at start is retried the same way, and its
// tools are offered once it answers). It never blocks. A server whose
// headers take request values connects on a request's first use instead.
func (s *Set) Start() {
	if s.closed.Load() || !s.started.CompareAndSwap(false, true) {
		return
	}
	for _, srv := range s.servers {
		if srv.dynamic {
			s.wg.Add(1)
			go srv.janitor()
			continue
		}
		s.wg.Add(1)
		go srv.supervise()
	}
}

// WaitReady waits until every server that Start connects has connected
// once (and listed its tools), or ctx ends; then it returns ctx's error.
// Servers whose headers take request values are not waited for.
func (s *Set) WaitReady(ctx context.Context) error {
	for _, srv := range s.servers {
		if srv.dynamic {
			continue
		}
		select {
		case <-srv.ready:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	return nil
}

// Close stops everything: supervision ends, sessions are closed, stdio
// servers are stopped (stdin closed, SIGTERM, SIGKILL) and reaped. Calls
// still running get an error result. It returns once every goroutine of
// the Set has ended (Caddy's Cleanup on a config reload).
func (s *Set) Close() error {
	if !s.closed.CompareAndSwap(false, true) {
		return nil
	}
	s.cancel()
	s.releaseHolds()
	for _, srv := range s.servers {
		srv.closeAll()
	}
	s.wg.Wait()
	s.httpTransport.CloseIdleConnections()
	return nil
}

// Tools returns the tools offered for a request: the allowed tools of
// every connected server, in config order, each server's in its listed
// order. When two servers offer the same name, the earlier server's tool
// is offered and the later one's is not (a warning names both, once).
// For a server whose headers take request values, r resolves them and
// the tools are that session's; its first use connects it, which Tools
// waits for (bounded by ctx, and by the server's timeout but at least 10s).
func (s *Set) Tools(ctx context.Context, r Resolver) []Tool {
	var out []Tool
	s.offered(ctx, r, false, func(t Tool, _ *server, _ *conn) bool {
		out = append(out, t)
		return true
	})
	return out
}

// Lookup returns the offered tool of that name, as Tools last offered it
// without request values: the tools of servers connected now and, for a
// server whose headers take request values, the tools its latest session
// listed.
func (s *Set) Lookup(name string) (Tool, bool) {
	var found Tool
	ok := false
	s.offered(context.Background(), nil, true, func(t Tool, _ *server, _ *conn) bool {
		if t.Name == name {
			found, ok = t, true
			return false
		}
		return true
	})
	return found, ok
}

// offered walks the tools offered to a request, in order, skipping names
// already taken, until yield returns false. With latest, it connects
// nothing and a dynamic server's latest list stands in.
func (s *Set) offered(ctx context.Context, r Resolver, latest bool, yield func(Tool, *server, *conn) bool) {
	taken := make(map[string]string, 16)
	for _, srv := range s.servers {
		c, tools := srv.toolsFor(ctx, r, latest)
		for _, t := range tools {
			if prev, dup := taken[t.Name]; dup {
				s.warnCollision(t.Name, prev, srv.name)
				continue
			}
			taken[t.Name] = srv.name
			if !yield(t, srv, c) {
				return
			}
		}
	}
}

// scanCollisions warns of every tool name two servers share, as soon as
// both lists are known (a server connected or its list changed), rather
// than at the first request.
func (s *Set) scanCollisions() {
	s.offered(context.Background(), nil, true, func(Tool, *server, *conn) bool { return true })
}

// warnCollision logs, once per name and pair of servers, that a tool is
// not offered because an earlier server offers that name.
func (s *Set) warnCollision(name, first, second string) {
	key := name + "\x00" + first + "\x00" + second
	if _, loaded := s.warned.LoadOrStore(key, true); loaded {
		return
	}
	s.logger.Warn("tool not offered: an earlier server offers the same name (set a prefix on one of them)",
		zap.String("tool", name), zap.String("offered_from", first), zap.String("not_offered_from", second))
}

// Call calls the offered tool name with args (the model's arguments, a
// JSON object). Whatever happens, it returns a result for the model: the
// tool's, or an error result saying what went wrong (unknown tool, server
// down, timeout, cancelled, crash mid-call, a reply over the bound, a
// protocol error).
func (s *Set) Call(ctx context.Context, name string, args []byte, opt CallOptions) agent.Result {
	return s.call(ctx, name, args, opt, nil)
}

// call is Call, with params set for a call made again (Resume).
func (s *Set) call(ctx context.Context, name string, args []byte, opt CallOptions, set func(*mcp.CallToolParams)) (res agent.Result) {
	start := time.Now()
	outcome, srvName, tool := "ok", "", name
	defer func() {
		if p := recover(); p != nil {
			res, outcome = agent.ErrorResult("The tool call failed inside llmstream; try again or answer without it."), "panic"
			s.logger.Error("tool call panicked", zap.String("server", srvName), zap.String("tool", tool), zap.Any("panic", p))
		}
		// Debug, as "stream ended" is; warn when the call itself failed
		// (not the tool: its own errors are results).
		log := s.logger.Debug
		switch outcome {
		case "ok", "tool_error", "cancelled", "unknown_tool", "bad_arguments", "parked":
		default:
			log = s.logger.Warn
		}
		dur := time.Since(start)
		log("tool call", zap.String("server", srvName), zap.String("tool", tool),
			zap.Duration("duration", dur), zap.String("outcome", outcome))
		if opt.Done != nil {
			rec := CallRecord{Server: srvName, Outcome: outcome, Duration: dur}
			if srvName != "" {
				rec.Tool = tool
			}
			opt.Done(rec)
		}
	}()
	if s.closed.Load() {
		outcome = "closed"
		return agent.ErrorResult(fmt.Sprintf("Tool %s is not available: the tool servers are shutting down.", name))
	}
	var (
		t   Tool
		srv *server
		c   *conn
	)
	s.offered(ctx, opt.Resolver, false, func(ot Tool, osrv *server, oc *conn) bool {
		if ot.Name == name {
			t, srv, c = ot, osrv, oc
			return false
		}
		return true
	})
	if srv == nil {
		outcome = "unknown_tool"
		if known := s.knownServer(name); known != "" {
			outcome, srvName = "server_down", known
			return agent.ErrorResult(fmt.Sprintf("Tool %s is not available right now: its server %s is not connected. Try again later, or answer without it.", name, known))
		}
		return agent.ErrorResult(fmt.Sprintf("Unknown tool %q: no tool of that name is offered. Use one of the tools you were given.", name))
	}
	srvName, tool = srv.name, t.ServerTool
	res, outcome = srv.call(ctx, c, t, args, opt, set)
	return res
}

// knownServer returns the server that listed a tool offered as name at
// some point, or "".
func (s *Set) knownServer(name string) string {
	for _, srv := range s.servers {
		if srv.everListed(name) {
			return srv.name
		}
	}
	return ""
}
