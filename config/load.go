package config

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/texttools"
	"github.com/llmstream/llmstream/transform/validate"
)

// The defaults Route.Load applies.
const (
	DefaultRequestFormat  = request.FormatOpenAI
	DefaultPromptMode     = request.ModePrepend
	DefaultMaxRequestBody = 8_000_000
	DefaultFormat         = "auto"
	DefaultHeartbeat      = 15 * time.Second
	DefaultIdleTimeout    = 120 * time.Second
	DefaultProvider       = "openai"
	DefaultThinkTags      = "auto"
	DefaultTextTools      = "off"
)

// The accepted values of the enumerated settings, in the order error
// messages list them: the request formats, formats and protocols are the
// rows of their tables (transform/protocol, transform/format).
var (
	requestFormats = func() []string {
		var names []string
		for _, f := range protocol.RequestFormats() {
			names = append(names, f.Name)
		}
		return names
	}()
	promptModes = []string{request.ModePrepend, request.ModeAppend, request.ModeReplace}
	formats     = func() []string {
		var names []string
		for _, f := range format.Formats() {
			names = append(names, string(f.Name))
		}
		return names
	}()
	thinkTags = transform.ThinkTagsNames()
	textTools = func() []string {
		names := []string{DefaultTextTools}
		for _, c := range texttools.Conventions() {
			names = append(names, c.Name)
		}
		return names
	}()
	protocols = func() []string {
		var names []string
		for _, p := range protocol.Protocols() {
			names = append(names, p.Name)
		}
		return names
	}()
)

// Settings is a Route resolved: files read and checked, defaults applied.
// It is immutable once loaded and shared by every request of the route.
type Settings struct {
	// RequestFormat, PromptMode and Format are the validated names.
	RequestFormat, PromptMode, Format string
	// ThinkTags is the validated think_tags setting; TextTools the
	// text_tools convention, "" when off.
	ThinkTags transform.ThinkTags
	TextTools string
	// ThinkPrefilled are the think_prefilled patterns, compiled
	// case-insensitive.
	ThinkPrefilled []*regexp.Regexp
	// Protocol is the validated protocol name.
	Protocol string
	// Request and Proto are the rows of the request format and the
	// protocol.
	Request *request.Format
	Proto   *protocol.Protocol
	// Prompt is the system prompt: the SystemPrompt files, then
	// SystemPromptText, joined by blank lines. Its placeholders are not
	// expanded; the Caddy layer expands them per request. "" means none.
	Prompt string
	// Tools are the tool definitions in OpenAI form, compacted: the Tools
	// files' tools in order, then the built-in ones.
	Tools [][]byte
	// ToolNames are the function names of Tools, in the same order.
	ToolNames []string
	// ToolChoice and Model are as configured ("" = the client's).
	ToolChoice, Model string
	// MaxRequestBody is the body limit in bytes.
	MaxRequestBody int64
	// Heartbeat and IdleTimeout are the intervals; 0 disables each.
	Heartbeat, IdleTimeout time.Duration
	// Provider and EndpointID are reported in status, completed and error.
	Provider   string
	EndpointID int
	// ReasoningTitle and FallbackText are the parsers' texts.
	ReasoningTitle, FallbackText string
	// Limits are the stream limits, defaults applied.
	Limits transform.Limits
	// Shaper rewrites this route's request bodies.
	Shaper request.Shaper
	// ToolSchemas are the configured tools' schemas, compiled.
	ToolSchemas *validate.Schemas
	// Validate is the validate block resolved, nil when it is off.
	Validate *ValidateSettings
	// Conversation is the route's conversation settings; nil without one.
	Conversation *ConversationSettings
	// AgentPrompts are the tools block's agents' system prompts, loaded,
	// by agent id.
	AgentPrompts map[string]string
	// ToolServers is the tools block, checked (its defaults through its
	// methods); nil without one.
	ToolServers *ToolServers
}

// ParserOptions returns the options for this route's format parser.
func (s *Settings) ParserOptions() transform.ParserOptions {
	return transform.ParserOptions{
		Limits:         s.Limits,
		ReasoningTitle: s.ReasoningTitle,
		FallbackText:   s.FallbackText,
		ThinkTags:      s.ThinkTags,
		ThinkPrefilled: s.ThinkPrefilled,
		TextTools:      s.TextTools,
	}
}

// Load checks r, reads its files and returns its Settings. Relative file
// paths are resolved against root ("" means the working directory). r is
// not modified. The error, an *Error, is the first problem found and names
// its setting.
func (r *Route) Load(root string) (*Settings, error) {
	s := &Settings{
		RequestFormat:  orDefault(r.RequestFormat, DefaultRequestFormat),
		PromptMode:     orDefault(r.SystemPromptMode, DefaultPromptMode),
		Format:         orDefault(r.Format, DefaultFormat),
		Protocol:       r.Protocol,
		ToolChoice:     r.ToolChoice,
		Model:          r.Model,
		MaxRequestBody: r.MaxRequestBody,
		Provider:       orDefault(r.Provider, DefaultProvider),
		EndpointID:     r.EndpointID,
		ReasoningTitle: orDefault(r.ReasoningTitle, transform.DefaultReasoningTitle),
		FallbackText:   orDefault(r.FallbackText, transform.DefaultFallbackText),
		Limits:         r.Limits.WithDefaults(),
	}
	if err := s.checkNames(); err != nil {
		return nil, err
	}
	if err := s.checkRawServed(r); err != nil {
		return nil, err
	}
	if err := r.checkNumbers(s); err != nil {
		return nil, err
	}
	prompt, err := loadPrompt(r.SystemPrompt, r.SystemPromptText, root)
	if err != nil {
		return nil, err
	}
	s.Prompt = prompt
	if err := s.loadTools(r.Tools, r.Tool, root); err != nil {
		return nil, err
	}
	if err := s.checkToolChoice(); err != nil {
		return nil, err
	}
	if err := s.loadValidate(r.Validate); err != nil {
		return nil, err
	}
	if r.Conversation != nil {
		if s.Conversation, err = loadConversation(r.Conversation, s); err != nil {
			return nil, err
		}
	} else if s.Protocol == "responses" && s.RequestFormat == "responses" {
		// A Responses route keeps its responses by default, as OpenAI does
		// (store defaults to true): files under Caddy's data directory.
		if s.Conversation, err = loadResponsesStore(&Conversation{}); err != nil {
			return nil, err
		}
	}
	if r.ToolServers != nil {
		if err := r.ToolServers.Check(); err != nil {
			return nil, err
		}
		if err := r.ToolServers.checkPark(s.Conversation != nil && !s.Conversation.Responses); err != nil {
			return nil, err
		}
		s.AgentPrompts = map[string]string{}
		if err := r.ToolServers.checkAgents(root, s.AgentPrompts); err != nil {
			return nil, err
		}
		s.ToolServers = r.ToolServers
	}
	s.Shaper = request.Shaper{
		Format:     s.Request,
		Mode:       s.PromptMode,
		Tools:      s.Tools,
		ToolChoice: s.ToolChoice,
		Model:      s.Model,
	}
	return s, nil
}

// checkNames checks the enumerated settings.
func (s *Settings) checkNames() error {
	if err := oneOf("request_format", "request format", s.RequestFormat, requestFormats); err != nil {
		return err
	}
	if err := oneOf("system_prompt_mode", "mode", s.PromptMode, promptModes); err != nil {
		return err
	}
	if err := oneOf("format", "format", s.Format, formats); err != nil {
		return err
	}
	if s.Protocol == "" {
		return errorf("protocol", "protocol is required (want %s)", list(protocols))
	}
	if err := oneOf("protocol", "protocol", s.Protocol, protocols); err != nil {
		return err
	}
	s.Request, _ = protocol.LookupRequestFormat(s.RequestFormat)
	s.Proto, _ = protocol.Lookup(s.Protocol)
	// A body that names no model (skillpet, aisdk) needs the route's: an
	// OpenAI upstream refuses a request without one (CONTRACT.md §3 model).
	if s.Model == "" && s.Request.NoModel {
		return errorf("model", "request_format %s requires model", s.RequestFormat)
	}
	return nil
}

// checkRawServed checks think_tags and text_tools (CONTRACT.md §8).
func (s *Settings) checkRawServed(r *Route) error {
	tt := orDefault(r.ThinkTags, DefaultThinkTags)
	if err := oneOf("think_tags", "setting", tt, thinkTags); err != nil {
		return err
	}
	s.ThinkTags, _ = transform.ParseThinkTags(tt)
	if len(r.ThinkPrefilled) > 0 && s.ThinkTags != transform.ThinkTagsAuto {
		return errorf("think_prefilled", "think_prefilled applies to think_tags auto, not %s", tt)
	}
	for _, pat := range r.ThinkPrefilled {
		if pat == "" {
			return errorf("think_prefilled", "think_prefilled: an empty pattern would match every model")
		}
		re, err := regexp.Compile("(?i)" + pat)
		if err != nil {
			return errorf("think_prefilled", "think_prefilled: bad pattern %q: %v", pat, err)
		}
		s.ThinkPrefilled = append(s.ThinkPrefilled, re)
	}
	tools := orDefault(r.TextTools, DefaultTextTools)
	if err := oneOf("text_tools", "convention", tools, textTools); err != nil {
		return err
	}
	if tools != DefaultTextTools {
		s.TextTools = tools
	}
	return nil
}

// checkNumbers checks the sizes and durations and applies their defaults.
func (r *Route) checkNumbers(s *Settings) error {
	if r.MaxRequestBody < 0 {
		return errorf("max_request_body", "max_request_body must not be negative (got %d)", r.MaxRequestBody)
	}
	if s.MaxRequestBody == 0 {
		s.MaxRequestBody = DefaultMaxRequestBody
	}
	var err error
	if s.Heartbeat, err = duration("heartbeat", r.Heartbeat, DefaultHeartbeat); err != nil {
		return err
	}
	if s.IdleTimeout, err = duration("idle_timeout", r.IdleTimeout, DefaultIdleTimeout); err != nil {
		return err
	}
	for _, l := range []struct {
		name string
		v    int64
	}{
		{"max_sse_line", int64(r.Limits.MaxSSELineBytes)},
		{"max_reply", r.Limits.MaxReplyBytes},
		{"max_tag", int64(r.Limits.MaxTagBytes)},
		{"max_block", int64(r.Limits.MaxBlockBytes)},
		{"max_key", int64(r.Limits.MaxKeyBytes)},
		{"max_depth", int64(r.Limits.MaxDepth)},
		{"max_tool_calls", int64(r.Limits.MaxToolCalls)},
	} {
		if l.v < 0 {
			return errorf("limits."+l.name, "limits.%s must not be negative (got %d)", l.name, l.v)
		}
	}
	return nil
}

// duration returns d, or def when d is unset. A set 0 stays 0: it
// disables the timer.
func duration(setting string, d *Duration, def time.Duration) (time.Duration, error) {
	if d == nil {
		return def, nil
	}
	if *d < 0 {
		return 0, errorf(setting, "%s must not be negative (got %s)", setting, time.Duration(*d))
	}
	return time.Duration(*d), nil
}

// loadTools reads the tools files and the built-in tools, in that order,
// and checks that no two tools share a function name: the upstream would
// refuse the request.
func (s *Settings) loadTools(files, builtins []string, root string) error {
	var all []tool
	seen := map[string]string{} // name → where it was defined
	add := func(setting string, t tool) error {
		if prev, ok := seen[t.name]; ok {
			return errorf(setting, "%s: duplicate tool name %q (%s and %s)", setting, t.name, prev, t.from)
		}
		seen[t.name] = t.from
		all = append(all, t)
		return nil
	}
	for _, f := range files {
		data, err := os.ReadFile(resolve(root, f))
		if err != nil {
			return errorf("tools", "tools: reading %s: %w", f, err)
		}
		ts, err := parseToolsFile(f, data)
		if err != nil {
			return errorf("tools", "tools: %s: %w", f, err)
		}
		for _, t := range ts {
			t.from = f
			if err := add("tools", t); err != nil {
				return err
			}
		}
	}
	for _, name := range builtins {
		t, err := builtinTool(name)
		if err != nil {
			return errorf("tool", "tool: %w", err)
		}
		if err := add("tool", t); err != nil {
			return err
		}
	}
	for _, t := range all {
		s.Tools = append(s.Tools, t.def)
		s.ToolNames = append(s.ToolNames, t.name)
	}
	return s.compileTools(all)
}

// checkToolChoice checks that a tool_choice naming a function names a
// configured tool: forcing a function the upstream was not given fails
// every request.
func (s *Settings) checkToolChoice() error {
	switch s.ToolChoice {
	case "", request.ToolChoiceAuto, request.ToolChoiceNone, request.ToolChoiceRequired:
		return nil
	}
	for _, n := range s.ToolNames {
		if n == s.ToolChoice {
			return nil
		}
	}
	have := "none"
	if len(s.ToolNames) > 0 {
		have = strings.Join(s.ToolNames, ", ")
	}
	return errorf("tool_choice", "tool_choice: %q names no configured tool (have %s)", s.ToolChoice, have)
}

// oneOf checks that v is one of want.
func oneOf(setting, what, v string, want []string) error {
	for _, w := range want {
		if v == w {
			return nil
		}
	}
	return errorf(setting, "%s: unknown %s %q (want %s)", setting, what, v, list(want))
}

// list returns "a, b or c".
func list(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}

// resolve returns path resolved against root.
func resolve(root, path string) string {
	if root == "" || filepath.IsAbs(path) {
		return path
	}
	return filepath.Join(root, path)
}

// orDefault returns v, or def when v is empty.
func orDefault(v, def string) string {
	if v == "" {
		return def
	}
	return v
}
