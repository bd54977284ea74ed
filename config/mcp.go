package config

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"time"
)

// ToolServers is a route's tools block: the MCP servers whose tools
// llmstream runs itself, and the bounds of the agent loop that calls them
// (CONTRACT.md §12). The toolserver package connects the servers; the loop
// (transform/agent and the handler) offers their tools to the model.
type ToolServers struct {
	// MCP lists the servers, in the order tools are offered: when two
	// servers without a prefix list a tool of the same name, the later
	// server's tool is not offered (a warning names both).
	MCP []MCPServer `json:"mcp,omitempty"`
	// MaxRounds is how many rounds with tool calls one client turn may
	// take; after them one last round is asked with tools disabled, so
	// that the model answers. Default 8, at most 100.
	MaxRounds int `json:"max_rounds,omitempty"`
	// MaxResultBytes is what the model gets of one tool result, in bytes:
	// a longer result is cut with a marker the model can read. Default
	// 65536 (64KiB), at most 16MiB.
	MaxResultBytes int64 `json:"max_result_bytes,omitempty"`
	// Agents are the route's sub-agents (CONTRACT.md §13), consulted
	// through the consult_agent tool.
	Agents []Agent `json:"agents,omitempty"`
	// Park says how calls that wait for the user (CONTRACT.md §13: an
	// approval, an elicitation) are kept until the answer comes. Default:
	// 15 minutes, in the conversation's store on a conversation route,
	// else in the file store under Caddy's data directory.
	Park *Park `json:"park,omitempty"`
}

// Park is the tools block's park block: where a round whose calls wait
// for the user is kept, whose it is, and for how long.
type Park struct {
	// TTL is how long a waiting call may be answered (then a clear 4xx),
	// and how long a call a server holds open waits. Default 15m.
	TTL *Duration `json:"ttl,omitempty"`
	// Store is "file" (Dir, default llmstream/parked under Caddy's data
	// directory) or "redis" (RedisURL, KeyPrefix), for a route without a
	// conversation block; a conversation route uses its conversation's.
	Store     string `json:"store,omitempty"`
	Dir       string `json:"dir,omitempty"`
	RedisURL  string `json:"redis_url,omitempty"`
	KeyPrefix string `json:"key_prefix,omitempty"`
	// Scope is whose waiting calls a request may answer, a placeholder as
	// conversation's scope, on a route without a conversation block.
	// Default {http.request.header.Authorization}; an empty value is a
	// scope too there (the waiting call's id, unguessable, is the key).
	Scope string `json:"scope,omitempty"`
}

// The park block's defaults.
const (
	DefaultParkTTL = 15 * time.Minute
	MaxParkTTL     = 7 * 24 * time.Hour
	DefaultParkDir = "llmstream/parked" // under Caddy's data directory
)

// ParkTTL returns how long a waiting call may be answered.
func (t *ToolServers) ParkTTL() time.Duration {
	if t.Park == nil || t.Park.TTL == nil || *t.Park.TTL <= 0 {
		return DefaultParkTTL
	}
	return time.Duration(*t.Park.TTL)
}

// checkPark checks the park block; conversation says the route keeps
// conversations, whose store and scope parked calls use.
func (t *ToolServers) checkPark(conversation bool) error {
	p := t.Park
	if p == nil {
		return nil
	}
	if p.TTL != nil && (*p.TTL <= 0 || time.Duration(*p.TTL) > MaxParkTTL) {
		return errorf("tool_servers.park.ttl", "tools: park: ttl must be between 1s and %s (got %s)", MaxParkTTL, time.Duration(*p.TTL))
	}
	if conversation && (p.Store != "" || p.Dir != "" || p.RedisURL != "" || p.KeyPrefix != "" || p.Scope != "") {
		return errorf("tool_servers.park.store", "tools: park: a conversation route keeps waiting calls in its conversation's store and scope; set only ttl")
	}
	switch p.Store {
	case "", StoreFile:
		if p.RedisURL != "" || p.KeyPrefix != "" {
			return errorf("tool_servers.park.redis_url", "tools: park: redis_url and key_prefix are for store redis")
		}
	case StoreRedis:
		if p.RedisURL == "" {
			return errorf("tool_servers.park.redis_url", "tools: park: store redis needs a URL")
		}
		if p.Dir != "" {
			return errorf("tool_servers.park.dir", "tools: park: dir is for store file")
		}
	default:
		return errorf("tool_servers.park.store", "tools: park: unknown store %q (want file or redis)", p.Store)
	}
	return nil
}

// MCPServer is one `mcp <name> { … }` block: a Model Context Protocol
// server reached over stdio (Command, started and supervised by Caddy),
// streamable HTTP (URL) or in-process (Builtin). Exactly one of the three.
// Nothing in a request ever selects a server or its command: the server,
// its command, its environment and its URL come from this config only.
type MCPServer struct {
	// Name names the server in logs, metrics and error messages. Letters,
	// digits, '_' and '-'; unique in the route.
	Name string `json:"name"`
	// Command is the program and its arguments of a stdio server. {env.X}
	// placeholders are expanded at provision; no other
	// placeholder is allowed.
	Command []string `json:"command,omitempty"`
	// Env is the stdio server's environment: these variables, plus PATH
	// and HOME from Caddy's, and nothing else of Caddy's environment, so
	// that secrets reach a tool server only as configured. Values may use
	// {env.X} placeholders, expanded at provision.
	Env map[string]string `json:"env,omitempty"`
	// URL is the endpoint of a streamable-HTTP server (http or https).
	// {env.X} placeholders are expanded at provision; no request
	// placeholder is allowed.
	URL string `json:"url,omitempty"`
	// Headers are sent with every HTTP request to the server. A value may
	// hold {env.X} placeholders (expanded at provision) and request
	// placeholders such as {http.request.header.X-User-Token}, expanded
	// per request: the toolserver package then keeps one MCP session per
	// distinct set of expanded values, so one user's credential never
	// serves another's call. The client's own Authorization header is
	// never forwarded unless a header configures it.
	Headers map[string]string `json:"headers,omitempty"`
	// Builtin names an in-process server compiled into llmstream:
	// "demo" (toolserver/demo: deterministic tools for demos and tests).
	Builtin string `json:"builtin,omitempty"`
	// Allow lists the tools offered to the model, by the server's names.
	// Default: every tool the server lists.
	Allow []string `json:"allow,omitempty"`
	// Labels are display labels by tool name (skillpet tool_start.label,
	// AI SDK title). Default: the tool's title, else its name.
	Labels map[string]string `json:"labels,omitempty"`
	// Approve lists the tools that need the user's approval before they
	// run (CONTRACT.md §13).
	Approve []string `json:"approve,omitempty"`
	// Events names, by tool, the data event a successful result of the
	// tool becomes on AI SDK routes (specs/004 §7.3.1 ARTIFACT_EVENT_TYPES):
	// "quiz-complete", "interactive-content" or "pptx-outline" (a result
	// that carries a file is "file-ready" by itself). Such events are the
	// artifacts validate counts.
	Events map[string]string `json:"events,omitempty"`
	// Images names, by tool, the tools whose results carry images, and how
	// the user sees them (specs/002 §3.7 image_generation mode):
	// "display", "single_select" or "multi_select".
	Images map[string]string `json:"images,omitempty"`
	// Search lists the tools offered only when the user turned search on
	// (skillpet enableSearch, specs/002 §2.3).
	Search []string `json:"search,omitempty"`
	// Subscribe lists the server's resources whose updates reach the
	// client while a turn streams (skillpet resource_updated, specs/002
	// §3.6), by URI, with the key the client sees (default the URI).
	Subscribe []Subscription `json:"subscribe,omitempty"`
	// Prefix is put before this server's tool names as the model sees them
	// (search_ with a tool "web" offers "search_web"), to keep apart two
	// servers that list the same names. Default none.
	Prefix string `json:"prefix,omitempty"`
	// Timeout bounds one call. Each progress notification the server sends
	// starts it again, up to 10 times Timeout in all. Default 30s.
	Timeout *Duration `json:"timeout,omitempty"`
}

// Subscription is a resource a server offers whose updates reach the
// client (MCP resources/subscribe).
type Subscription struct {
	URI string `json:"uri"`
	Key string `json:"key,omitempty"`
}

// The data events a tool's result may be configured to become (Events).
var ToolEvents = []string{"quiz-complete", "interactive-content", "pptx-outline"}

// The image modes (Images; specs/002 §3.7).
var ImageModes = []string{"display", "single_select", "multi_select"}

// The tools block's defaults and bounds.
const (
	DefaultMaxRounds      = 8
	MaxMaxRounds          = 100
	DefaultMaxResultBytes = 64 << 10
	MaxMaxResultBytes     = 16 << 20
	DefaultToolTimeout    = 30 * time.Second
	// ToolTimeoutCap is how many times its timeout one call may run in
	// all when progress keeps starting the timeout again.
	ToolTimeoutCap = 10
)

// The transports of an MCP server (MCPServer.Transport).
const (
	TransportStdio   = "stdio"
	TransportHTTP    = "http"
	TransportBuiltin = "builtin"
)

// BuiltinServers are the names `builtin` accepts. The toolserver package
// serves each (its tests check that the two lists agree).
var BuiltinServers = []string{"demo"}

// Transport returns TransportStdio, TransportHTTP or TransportBuiltin.
func (m *MCPServer) Transport() string {
	switch {
	case len(m.Command) > 0:
		return TransportStdio
	case m.URL != "":
		return TransportHTTP
	default:
		return TransportBuiltin
	}
}

// CallTimeout returns the timeout of one call, its default applied.
func (m *MCPServer) CallTimeout() time.Duration {
	if m.Timeout == nil || *m.Timeout <= 0 {
		return DefaultToolTimeout
	}
	return time.Duration(*m.Timeout)
}

// Rounds returns MaxRounds, its default applied.
func (t *ToolServers) Rounds() int {
	if t.MaxRounds == 0 {
		return DefaultMaxRounds
	}
	return t.MaxRounds
}

// ResultBytes returns MaxResultBytes, its default applied.
func (t *ToolServers) ResultBytes() int {
	if t.MaxResultBytes == 0 {
		return DefaultMaxResultBytes
	}
	return int(t.MaxResultBytes)
}

var (
	// nameRe is a server name or a prefix: what logs and tool names can
	// carry unquoted (OpenAI function names are ^[a-zA-Z0-9_-]{1,64}$).
	nameRe = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)
	// headerNameRe is an HTTP header name (RFC 9110 token).
	headerNameRe = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
	// placeholderRe finds Caddy placeholders.
	placeholderRe = regexp.MustCompile(`\{[^{}\s]+\}`)
)

// Check checks the tools block and returns the first problem, an *Error
// naming the setting ("tool_servers.mcp[docs].url"). What can only be
// known once the servers list their tools (a tool name two servers share
// without a prefix) is a warning at provision, not an error here, unless
// the allow lists already show it.
func (t *ToolServers) Check() error {
	const base = "tool_servers"
	if len(t.MCP) == 0 && len(t.Agents) == 0 {
		return errorf(base+".mcp", "tools: no mcp server (want at least one mcp <name> { … } block)")
	}
	if t.MaxRounds < 0 || t.MaxRounds > MaxMaxRounds {
		return errorf(base+".max_rounds", "tools: max_rounds: %d is out of range (1 to %d)", t.MaxRounds, MaxMaxRounds)
	}
	if t.MaxResultBytes < 0 || t.MaxResultBytes > MaxMaxResultBytes {
		return errorf(base+".max_result_bytes", "tools: max_result_bytes: %d is out of range (1 to %d)", t.MaxResultBytes, MaxMaxResultBytes)
	}
	names := map[string]bool{}
	for i := range t.MCP {
		m := &t.MCP[i]
		if err := m.check(); err != nil {
			return err
		}
		if names[m.Name] {
			return errorf(base+".mcp", "tools: mcp %s: two servers have this name", m.Name)
		}
		names[m.Name] = true
	}
	// Two servers whose allow lists name the same tool under the same
	// prefix would offer the model one name for two tools.
	owner := map[string]string{}
	for i := range t.MCP {
		m := &t.MCP[i]
		for _, a := range m.Allow {
			offered := m.Prefix + a
			if prev, ok := owner[offered]; ok {
				return errorf(m.setting("allow"), "tools: mcp %s: allow: tool %q is also offered by mcp %s (set a prefix on one of them)", m.Name, offered, prev)
			}
			owner[offered] = m.Name
		}
	}
	return nil
}

// setting names one of m's settings for an *Error.
func (m *MCPServer) setting(name string) string {
	return "tool_servers.mcp[" + m.Name + "]." + name
}

// check checks one server block.
func (m *MCPServer) check() error {
	if !nameRe.MatchString(m.Name) {
		return errorf("tool_servers.mcp", "tools: mcp %q: a name is 1 to 64 letters, digits, '_' or '-'", m.Name)
	}
	n := 0
	for _, set := range []bool{len(m.Command) > 0, m.URL != "", m.Builtin != ""} {
		if set {
			n++
		}
	}
	if n != 1 {
		return errorf(m.setting("command"), "tools: mcp %s: want exactly one of command, url or builtin (got %d)", m.Name, n)
	}
	if err := m.checkTransport(); err != nil {
		return err
	}
	if err := m.checkTools(); err != nil {
		return err
	}
	if m.Prefix != "" && !nameRe.MatchString(m.Prefix) {
		return errorf(m.setting("prefix"), "tools: mcp %s: prefix %q: want letters, digits, '_' or '-'", m.Name, m.Prefix)
	}
	if m.Timeout != nil && *m.Timeout <= 0 {
		return errorf(m.setting("timeout"), "tools: mcp %s: timeout must be positive (got %s): every call needs one", m.Name, time.Duration(*m.Timeout))
	}
	return nil
}

// checkTransport checks the settings of m's transport, and that the other
// transports' settings are absent.
func (m *MCPServer) checkTransport() error {
	switch m.Transport() {
	case TransportStdio:
		if strings.TrimSpace(m.Command[0]) == "" {
			return errorf(m.setting("command"), "tools: mcp %s: command: empty program", m.Name)
		}
		for _, a := range m.Command {
			if err := onlyEnvPlaceholders(a); err != nil {
				return errorf(m.setting("command"), "tools: mcp %s: command: %v", m.Name, err)
			}
		}
		for k, v := range m.Env {
			if k == "" || strings.ContainsAny(k, "=\x00") {
				return errorf(m.setting("env"), "tools: mcp %s: env: bad variable name %q", m.Name, k)
			}
			if err := onlyEnvPlaceholders(v); err != nil {
				return errorf(m.setting("env"), "tools: mcp %s: env %s: %v", m.Name, k, err)
			}
		}
	case TransportHTTP:
		if err := onlyEnvPlaceholders(m.URL); err != nil {
			return errorf(m.setting("url"), "tools: mcp %s: url: %v", m.Name, err)
		}
		u, err := url.Parse(m.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return errorf(m.setting("url"), "tools: mcp %s: url %q: want an absolute http:// or https:// URL", m.Name, m.URL)
		}
		for k := range m.Headers {
			if !headerNameRe.MatchString(k) {
				return errorf(m.setting("headers"), "tools: mcp %s: header: bad name %q", m.Name, k)
			}
			// The transport's own headers: setting one breaks the session.
			switch strings.ToLower(k) {
			case "content-type", "accept", "content-length", "host", "mcp-session-id", "mcp-protocol-version", "last-event-id":
				return errorf(m.setting("headers"), "tools: mcp %s: header %s: set by the MCP transport itself", m.Name, k)
			}
		}
	case TransportBuiltin:
		known := false
		for _, b := range BuiltinServers {
			known = known || b == m.Builtin
		}
		if !known {
			return errorf(m.setting("builtin"), "tools: mcp %s: builtin: unknown server %q (want %s)", m.Name, m.Builtin, list(BuiltinServers))
		}
	}
	if len(m.Env) > 0 && m.Transport() != TransportStdio {
		return errorf(m.setting("env"), "tools: mcp %s: env is for a command server", m.Name)
	}
	if len(m.Headers) > 0 && m.Transport() != TransportHTTP {
		return errorf(m.setting("headers"), "tools: mcp %s: header is for a url server", m.Name)
	}
	return nil
}

// checkTools checks allow, label and approve.
func (m *MCPServer) checkTools() error {
	allowed := map[string]bool{}
	for _, a := range m.Allow {
		if a == "" {
			return errorf(m.setting("allow"), "tools: mcp %s: allow: empty tool name", m.Name)
		}
		if allowed[a] {
			return errorf(m.setting("allow"), "tools: mcp %s: allow: %q listed twice", m.Name, a)
		}
		allowed[a] = true
	}
	// A label or an approval for a tool that is not allowed would never
	// apply: it is a typo or a forgotten allow.
	check := func(setting, tool string) error {
		if tool == "" {
			return errorf(m.setting(setting), "tools: mcp %s: %s: empty tool name", m.Name, setting)
		}
		if len(m.Allow) > 0 && !allowed[tool] {
			return errorf(m.setting(setting), "tools: mcp %s: %s: tool %q is not allowed (allow lists %s)", m.Name, setting, tool, strings.Join(m.Allow, ", "))
		}
		return nil
	}
	for tool, label := range m.Labels {
		if err := check("label", tool); err != nil {
			return err
		}
		if strings.TrimSpace(label) == "" {
			return errorf(m.setting("label"), "tools: mcp %s: label %s: empty label", m.Name, tool)
		}
	}
	for _, tool := range m.Approve {
		if err := check("approve", tool); err != nil {
			return err
		}
	}
	for tool, ev := range m.Events {
		if err := check("event", tool); err != nil {
			return err
		}
		if !slices.Contains(ToolEvents, ev) {
			return errorf(m.setting("event"), "tools: mcp %s: event %s: unknown event %q (want %s)", m.Name, tool, ev, strings.Join(ToolEvents, ", "))
		}
	}
	for tool, mode := range m.Images {
		if err := check("image", tool); err != nil {
			return err
		}
		if !slices.Contains(ImageModes, mode) {
			return errorf(m.setting("image"), "tools: mcp %s: image %s: unknown mode %q (want %s)", m.Name, tool, mode, strings.Join(ImageModes, ", "))
		}
	}
	for _, tool := range m.Search {
		if err := check("search", tool); err != nil {
			return err
		}
	}
	for _, sub := range m.Subscribe {
		if strings.TrimSpace(sub.URI) == "" {
			return errorf(m.setting("subscribe"), "tools: mcp %s: subscribe: empty URI", m.Name)
		}
		if err := onlyEnvPlaceholders(sub.URI); err != nil {
			return errorf(m.setting("subscribe"), "tools: mcp %s: subscribe: %v", m.Name, err)
		}
	}
	return nil
}

// onlyEnvPlaceholders refuses placeholders other than {env.X} in a
// setting that must not depend on the request: a command, its
// environment, a server's URL.
func onlyEnvPlaceholders(s string) error {
	for _, p := range placeholderRe.FindAllString(s, -1) {
		if !strings.HasPrefix(p, "{env.") {
			return errorf("", "placeholder %s: only {env.*} is allowed here (nothing from a request may choose a server or a command)", p)
		}
	}
	return nil
}

// RequestPlaceholders reports whether a header value holds placeholders
// other than {env.X}: they are expanded per request, from the request.
func RequestPlaceholders(v string) bool {
	for _, p := range placeholderRe.FindAllString(v, -1) {
		if !strings.HasPrefix(p, "{env.") {
			return true
		}
	}
	return false
}
