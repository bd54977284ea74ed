package toolserver

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/toolserver/demo"
	"github.com/llmstream/llmstream/transform/agent"
)

// builtins are the in-process servers `builtin` names (config.BuiltinServers).
var builtins = map[string]func() *mcp.Server{
	"demo": demo.New,
}

// clientVersion is what llmstream reports as its MCP client version.
const clientVersion = "1.0.0"

// server is one configured MCP server.
type server struct {
	set       *Set
	name      string
	transport string
	timeout   time.Duration
	prefix    string
	allow     map[string]bool // nil: every tool
	approve   map[string]bool
	search    map[string]bool
	labels    map[string]string
	events    map[string]string
	images    map[string]string
	subscribe []config.Subscription
	logger    *zap.Logger
	client    *mcp.Client

	// stdio
	argv []string
	env  []string
	// http
	url     string
	headers map[string]string // values with {env.X} resolved
	dynamic bool              // some header takes request values
	// builtin
	builtin func() *mcp.Server

	mu      sync.Mutex
	cur     *conn                // the live session (not dynamic), or nil
	dyn     map[string]*dynEntry // dynamic: sessions by credential key
	latest  []Tool               // the tools last listed by any session
	ever    map[string]bool      // every name ever offered (server-down errors)
	ready   chan struct{}        // closed at the first connection
	readyOK sync.Once
}

// conn is one MCP session with a server and the tools it listed.
type conn struct {
	srv     *server
	session *mcp.ClientSession
	proc    *proc              // stdio only
	builtin *mcp.ServerSession // builtin only: the server's side
	tools   atomic.Pointer[[]Tool]
	closeMu sync.Once
	gone    chan struct{} // closed when the session has ended
	goneErr error         // why, once gone is closed
	// dynamic sessions
	key      string // the digest of the header values it was opened with
	lastUsed atomic.Int64
	inflight atomic.Int32
}

// dynEntry is a dynamic session being connected, connected, or recently
// failed.
type dynEntry struct {
	done   chan struct{} // closed when connecting ended
	c      *conn         // nil when it failed
	err    error
	failed time.Time
}

// dynRetry is how long a failed dynamic connection is not retried.
const dynRetry = 5 * time.Second

func newServer(s *Set, m *config.MCPServer, expand func(string) string) (*server, error) {
	srv := &server{
		set:       s,
		name:      m.Name,
		transport: m.Transport(),
		timeout:   m.CallTimeout(),
		prefix:    m.Prefix,
		approve:   map[string]bool{},
		search:    map[string]bool{},
		labels:    map[string]string{},
		events:    m.Events,
		images:    m.Images,
		logger:    s.logger.With(zap.String("server", m.Name)),
		ready:     make(chan struct{}),
		ever:      map[string]bool{},
	}
	if len(m.Allow) > 0 {
		srv.allow = map[string]bool{}
		for _, a := range m.Allow {
			srv.allow[a] = true
		}
	}
	for _, a := range m.Approve {
		srv.approve[a] = true
	}
	for _, a := range m.Search {
		srv.search[a] = true
	}
	for _, sub := range m.Subscribe {
		srv.subscribe = append(srv.subscribe, config.Subscription{URI: expand(sub.URI), Key: sub.Key})
	}
	for k, v := range m.Labels {
		srv.labels[k] = v
	}
	switch srv.transport {
	case config.TransportStdio:
		for _, a := range m.Command {
			srv.argv = append(srv.argv, expand(a))
		}
		srv.env = environ(m.Env, expand)
	case config.TransportHTTP:
		srv.url = expand(m.URL)
		srv.headers = map[string]string{}
		for k, v := range m.Headers {
			v = expand(v)
			srv.headers[http.CanonicalHeaderKey(k)] = v
			srv.dynamic = srv.dynamic || config.RequestPlaceholders(v)
		}
		if srv.dynamic {
			srv.dyn = map[string]*dynEntry{}
		}
	case config.TransportBuiltin:
		srv.builtin = builtins[m.Builtin]
		if srv.builtin == nil {
			return nil, fmt.Errorf("toolserver: mcp %s: no builtin server %q", m.Name, m.Builtin)
		}
	}
	opts := &mcp.ClientOptions{
		// No roots: llmstream offers none, and a server that read an empty
		// list could narrow what it was configured with (filesystem).
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      s.onToolListChanged,
		ProgressNotificationHandler: s.onProgress,
		// Elicitations a server sends while a call runs (elicit.go);
		// setting it also announces the capability, without which a
		// server may not offer its interactive tools.
		ElicitationHandler: s.onElicit,
		// An input_required result is the loop's to handle (a park),
		// not the SDK's to answer at once.
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
		// Updates of the resources the server block subscribes to
		// (subscribe.go).
		ResourceUpdatedHandler: s.onResourceUpdated,
	}
	if srv.transport == config.TransportHTTP {
		// A remote server that went away is noticed between calls.
		opts.KeepAlive = 30 * time.Second
		opts.KeepAliveFailureThreshold = 2
	}
	srv.client = mcp.NewClient(&mcp.Implementation{Name: "llmstream", Version: clientVersion}, opts)
	return srv, nil
}

// supervise keeps a static server connected until the Set closes.
func (srv *server) supervise() {
	defer srv.set.wg.Done()
	ctx := srv.set.ctx
	backoff := srv.set.backoffMin
	failures := 0
	for ctx.Err() == nil {
		began := time.Now()
		c, err := srv.connect(ctx, nil, "")
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			failures++
			// The first failure is a warning (the operator should know);
			// the retries that follow are debug, until it comes back.
			log := srv.logger.Debug
			if failures == 1 {
				log = srv.logger.Warn
			}
			log("tool server unavailable, retrying", zap.Error(err), zap.Duration("retry_in", backoff), zap.Int("attempt", failures))
		} else {
			failures = 0
			srv.mu.Lock()
			srv.cur = c
			srv.mu.Unlock()
			srv.readyOK.Do(func() { close(srv.ready) })
			srv.logger.Info("tool server connected", zap.String("transport", srv.transport), zap.Int("tools", len(*c.tools.Load())))
			srv.set.scanCollisions()
			// Closing the Set ends the session, whenever it happens.
			stopClose := context.AfterFunc(ctx, c.close)
			<-c.gone
			waitErr := c.goneErr
			stopClose()
			srv.mu.Lock()
			srv.cur = nil
			srv.mu.Unlock()
			c.close()
			if ctx.Err() != nil {
				return
			}
			if time.Since(began) > 2*srv.set.backoffMax {
				backoff = srv.set.backoffMin
			}
			fields := []zap.Field{zap.Duration("restart_in", backoff)}
			if c.proc != nil {
				fields = append(fields, zap.String("exit", c.proc.exitStatus()))
			}
			if waitErr != nil {
				fields = append(fields, zap.Error(waitErr))
			}
			srv.logger.Warn("tool server stopped; its tools are not offered until it is back", fields...)
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, srv.set.backoffMax)
	}
}

// connect starts a session (and, for stdio, the process) and lists its
// tools. headers are the resolved headers of an HTTP session.
func (srv *server) connect(ctx context.Context, headers http.Header, key string) (*conn, error) {
	ctx, cancel := context.WithTimeout(ctx, max(srv.timeout, 10*time.Second))
	defer cancel()
	c := &conn{srv: srv, gone: make(chan struct{}), key: key}
	var t mcp.Transport
	switch srv.transport {
	case config.TransportStdio:
		p, err := startProc(srv.argv, srv.env, srv.logger)
		if err != nil {
			return nil, err
		}
		c.proc = p
		frames := newLineFrames(p.stdout, srv.set.maxMessage, srv.dropped)
		t = &mcp.IOTransport{Reader: frames, Writer: p.stdin, MaxLineLength: srv.set.maxMessage + 1024}
	case config.TransportHTTP:
		if headers == nil {
			headers = http.Header{}
			for k, v := range srv.headers {
				if v != "" {
					headers.Set(k, v)
				}
			}
		}
		t = &mcp.StreamableClientTransport{
			Endpoint: srv.url,
			HTTPClient: &http.Client{
				Transport: &headerTransport{base: srv.set.httpTransport, header: headers, max: srv.set.maxMessage, onDrop: srv.dropped},
				// A redirect could carry the configured credentials to
				// another host: refused.
				CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
			},
			MaxEventSize: srv.set.maxMessage + 64<<10,
		}
	case config.TransportBuiltin:
		st, ct := mcp.NewInMemoryTransports()
		ss, err := srv.builtin().Connect(srv.set.ctx, st, nil)
		if err != nil {
			return nil, err
		}
		c.builtin = ss
		t = ct
	}
	session, err := srv.client.Connect(ctx, t, nil)
	if err != nil {
		c.close()
		return nil, err
	}
	c.session = session
	srv.set.sessions.Store(session, c)
	srv.set.wg.Add(1)
	go func() {
		defer srv.set.wg.Done()
		c.goneErr = session.Wait()
		close(c.gone)
	}()
	if err := c.refresh(ctx); err != nil {
		c.close()
		return nil, fmt.Errorf("listing tools: %w", err)
	}
	c.subscribeAll()
	return c, nil
}

// dropped logs what a frame reader left out of a server's output.
func (srv *server) dropped(what string, n int) {
	srv.logger.Warn("tool server sent "+what+"; dropped", zap.Int("bytes", n), zap.Int("limit", srv.set.maxMessage))
}

// refresh lists the session's tools and keeps the allowed ones, named as
// the model sees them.
func (c *conn) refresh(ctx context.Context) error {
	srv := c.srv
	var tools []Tool
	n := 0
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return err
		}
		if n++; n > MaxToolsPerServer {
			srv.logger.Warn("tool server lists more tools than llmstream reads", zap.Int("limit", MaxToolsPerServer))
			break
		}
		if t == nil || (srv.allow != nil && !srv.allow[t.Name]) {
			continue
		}
		tools = append(tools, srv.offer(t))
	}
	if srv.allow != nil {
		for a := range srv.allow {
			if !containsTool(tools, a) {
				srv.logger.Warn("allowed tool not listed by the server", zap.String("tool", a))
			}
		}
	}
	c.tools.Store(&tools)
	srv.mu.Lock()
	srv.latest = tools
	for _, t := range tools {
		srv.ever[t.Name] = true
	}
	srv.mu.Unlock()
	return nil
}

func containsTool(tools []Tool, serverTool string) bool {
	for _, t := range tools {
		if t.ServerTool == serverTool {
			return true
		}
	}
	return false
}

// offer makes the Tool the model is offered of a listed tool.
func (srv *server) offer(t *mcp.Tool) Tool {
	schema := []byte(`{"type":"object"}`)
	if t.InputSchema != nil {
		if b, err := json.Marshal(t.InputSchema); err == nil && len(b) > 0 && b[0] == '{' {
			schema = b
		}
	}
	label := srv.labels[t.Name]
	switch {
	case label != "":
	case t.Title != "":
		label = t.Title
	case t.Annotations != nil && t.Annotations.Title != "":
		label = t.Annotations.Title
	default:
		label = t.Name
	}
	return Tool{
		Name:        srv.prefix + t.Name,
		ServerTool:  t.Name,
		Server:      srv.name,
		Description: t.Description,
		InputSchema: schema,
		Label:       label,
		Approve:     srv.approve[t.Name],
		Event:       srv.events[t.Name],
		Image:       srv.images[t.Name],
		Search:      srv.search[t.Name],
	}
}

// onToolListChanged lists a session's tools again
// (notifications/tools/list_changed), outside the notification handler.
func (s *Set) onToolListChanged(_ context.Context, req *mcp.ToolListChangedRequest) {
	v, ok := s.sessions.Load(req.Session)
	if !ok {
		return
	}
	c := v.(*conn)
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ctx, cancel := context.WithTimeout(s.ctx, c.srv.timeout)
		defer cancel()
		if err := c.refresh(ctx); err != nil {
			c.srv.logger.Warn("listing tools again after tools/list_changed failed", zap.Error(err))
			return
		}
		c.srv.logger.Info("tool list changed", zap.Int("tools", len(*c.tools.Load())))
		s.scanCollisions()
	}()
}

// close ends the session and stops the process. Safe to call twice.
func (c *conn) close() {
	c.closeMu.Do(func() {
		if c.session != nil {
			c.srv.set.sessions.Delete(c.session)
			// Close waits for the connection's reader; a stdio server
			// that ignores its closed stdin is stopped below meanwhile.
			done := make(chan struct{})
			go func() {
				_ = c.session.Close()
				close(done)
			}()
			if c.proc != nil {
				c.proc.stop(c.srv.set.stopGrace)
			}
			<-done
		} else if c.proc != nil {
			c.proc.stop(c.srv.set.stopGrace)
		}
		if c.builtin != nil {
			_ = c.builtin.Close()
		}
	})
}

// closeAll closes the server's sessions (the Set is closing).
func (srv *server) closeAll() {
	srv.mu.Lock()
	cur := srv.cur
	var dyn []*conn
	for _, e := range srv.dyn {
		select {
		case <-e.done:
			if e.c != nil {
				dyn = append(dyn, e.c)
			}
		default:
		}
	}
	srv.mu.Unlock()
	if cur != nil {
		cur.close()
	}
	for _, c := range dyn {
		c.close()
	}
}

// everListed reports whether the server ever offered a tool named name.
func (srv *server) everListed(name string) bool {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	return srv.ever[name]
}

// toolsFor returns the session a request uses and its tools. With
// latest, a dynamic server's latest list stands in, without a session.
func (srv *server) toolsFor(ctx context.Context, r Resolver, latest bool) (*conn, []Tool) {
	if !srv.dynamic {
		srv.mu.Lock()
		c := srv.cur
		srv.mu.Unlock()
		if c == nil {
			return nil, nil
		}
		return c, *c.tools.Load()
	}
	if latest {
		srv.mu.Lock()
		defer srv.mu.Unlock()
		return nil, srv.latest
	}
	if r == nil {
		return nil, nil
	}
	c, err := srv.dynSession(ctx, r)
	if err != nil {
		return nil, nil
	}
	return c, *c.tools.Load()
}

// dynSession returns the session for the request's header values,
// connecting it on first use. Sessions are keyed by a hash of the
// resolved values: one user's credential never serves another's call.
func (srv *server) dynSession(ctx context.Context, r Resolver) (*conn, error) {
	headers, key := srv.resolveHeaders(r)
	srv.mu.Lock()
	e := srv.dyn[key]
	if e != nil {
		select {
		case <-e.done:
			if e.c == nil && time.Since(e.failed) > dynRetry {
				e = nil // retry
			}
		default:
		}
	}
	if e == nil {
		if len(srv.dyn) >= srv.set.maxDyn && !srv.evictLocked() {
			srv.mu.Unlock()
			return nil, errors.New("too many sessions")
		}
		e = &dynEntry{done: make(chan struct{})}
		srv.dyn[key] = e
		srv.set.wg.Add(1)
		go srv.dynConnect(key, e, headers)
	}
	srv.mu.Unlock()
	select {
	case <-e.done:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.c == nil {
		return nil, e.err
	}
	e.c.lastUsed.Store(time.Now().UnixNano())
	return e.c, nil
}

// resolveHeaders returns the headers a request's values make for a
// dynamic server, and their key: a digest of the values (never stored
// or logged).
func (srv *server) resolveHeaders(r Resolver) (http.Header, string) {
	headers := http.Header{}
	names := make([]string, 0, len(srv.headers))
	for k := range srv.headers {
		names = append(names, k)
	}
	sort.Strings(names)
	h := sha256.New()
	for _, k := range names {
		v := r(srv.headers[k])
		if v != "" {
			headers.Set(k, v)
		}
		fmt.Fprintf(h, "%d:%s%d:%s", len(k), k, len(v), v)
	}
	return headers, string(h.Sum(nil))
}

// sessionKey is the key of the session a request's values select.
func (srv *server) sessionKey(r Resolver) string {
	_, key := srv.resolveHeaders(r)
	return key
}

// dynConnect connects a dynamic session, then watches it: when it ends it
// leaves the map.
func (srv *server) dynConnect(key string, e *dynEntry, headers http.Header) {
	defer srv.set.wg.Done()
	c, err := srv.connect(srv.set.ctx, headers, key)
	srv.mu.Lock()
	e.c, e.err = c, err
	if err != nil {
		e.failed = time.Now()
	}
	close(e.done)
	srv.mu.Unlock()
	if err != nil {
		srv.logger.Warn("tool server session failed to connect", zap.Error(err))
		return
	}
	c.lastUsed.Store(time.Now().UnixNano())
	srv.logger.Debug("tool server session connected", zap.Int("tools", len(*c.tools.Load())))
	if srv.set.closed.Load() {
		c.close()
	}
	<-c.gone
	c.close()
	srv.mu.Lock()
	if srv.dyn[key] == e {
		delete(srv.dyn, key)
	}
	srv.mu.Unlock()
}

// evictLocked closes the least recently used idle dynamic session; it
// reports whether one was.
func (srv *server) evictLocked() bool {
	var (
		oldKey string
		old    *conn
	)
	for k, e := range srv.dyn {
		select {
		case <-e.done:
		default:
			continue
		}
		if e.c == nil {
			delete(srv.dyn, k)
			return true
		}
		if e.c.inflight.Load() == 0 && (old == nil || e.c.lastUsed.Load() < old.lastUsed.Load()) {
			oldKey, old = k, e.c
		}
	}
	if old == nil {
		return false
	}
	delete(srv.dyn, oldKey)
	srv.set.wg.Add(1)
	go func() {
		defer srv.set.wg.Done()
		old.close()
	}()
	return true
}

// janitor closes a dynamic server's idle sessions until the Set closes.
func (srv *server) janitor() {
	defer srv.set.wg.Done()
	t := time.NewTicker(max(srv.set.idle/4, 10*time.Millisecond))
	defer t.Stop()
	for {
		select {
		case <-srv.set.ctx.Done():
			return
		case <-t.C:
		}
		cutoff := time.Now().Add(-srv.set.idle).UnixNano()
		var idle []*conn
		srv.mu.Lock()
		for k, e := range srv.dyn {
			select {
			case <-e.done:
			default:
				continue
			}
			if e.c != nil && e.c.inflight.Load() == 0 && e.c.lastUsed.Load() < cutoff {
				idle = append(idle, e.c)
				delete(srv.dyn, k)
			}
		}
		srv.mu.Unlock()
		for _, c := range idle {
			c.close()
		}
	}
}

// progressKey identifies a running call's progress token on a session.
type progressKey struct {
	session *mcp.ClientSession
	token   string
}

// call is a running call, for its progress notifications and the
// elicitations its server sends while it runs (elicit.go).
type call struct {
	relay    relay
	deadline *deadline
	// ask receives the elicitation the server sends while the call runs,
	// held open (MCP 2025-11-25 elicitation/create); ended is closed when
	// the call is over. ask is buffered: one question at a time.
	ask   chan *heldAsk
	ended chan struct{}
	// modes are the questions the caller can show (CallOptions.Ask).
	modes AskMode
}

// onProgress routes a progress notification to its call; a notification
// whose token names no running call of that session is dropped.
func (s *Set) onProgress(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p := req.Params
	if p == nil {
		return
	}
	token, ok := p.ProgressToken.(string)
	if !ok {
		return
	}
	v, ok := s.calls.Load(progressKey{req.Session, token})
	if !ok {
		return
	}
	cl := v.(*call)
	cl.deadline.extend()
	msg := p.Message
	if len(msg) > 1024 {
		msg = msg[:1024]
	}
	cl.relay.push(agent.Progress{Progress: p.Progress, Total: p.Total, Message: msg})
}

// call runs one tool call on c; outcome is for the log. A call that waits
// for the user comes back with a park (Result.Park), outcome "parked".
func (srv *server) call(ctx context.Context, c *conn, t Tool, args []byte, opt CallOptions, set func(*mcp.CallToolParams)) (agent.Result, string) {
	if c == nil {
		return agent.ErrorResult(fmt.Sprintf("Tool %s is not available right now: its server %s is not connected. Try again later, or answer without it.", t.Name, srv.name)), "server_down"
	}
	raw, err := argsObject(args)
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("Tool %s was not called: %v. Call it again with a JSON object of arguments.", t.Name, err)), "bad_arguments"
	}
	params := &mcp.CallToolParams{Name: t.ServerTool, Arguments: raw}
	if set != nil {
		set(params)
	}
	r := srv.start(ctx, c, t, params, opt)
	return r.wait(ctx, opt)
}

// ended reports whether the session ends within wait (a call that failed
// of a broken connection may return just before the end is seen).
func (c *conn) ended(wait time.Duration) bool {
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-c.gone:
		return true
	case <-t.C:
		return false
	}
}

// argsObject checks that args is a JSON object ("" or null is {}).
func argsObject(args []byte) (json.RawMessage, error) {
	i := 0
	for i < len(args) && (args[i] == ' ' || args[i] == '\t' || args[i] == '\r' || args[i] == '\n') {
		i++
	}
	if i == len(args) || string(args[i:]) == "null" {
		return json.RawMessage("{}"), nil
	}
	if args[i] != '{' || !json.Valid(args) {
		return nil, errors.New("its arguments are not a JSON object")
	}
	return json.RawMessage(args), nil
}
