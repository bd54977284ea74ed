// Package request rewrites a client's request body into the OpenAI
// chat-completions request that llmstream sends upstream (CONTRACT.md §3,
// "Request shaping"). A request Format converts its body into a
// chat-completions body (openai, skillpet and aisdk live here; responses
// and anthropic bring their own Format), and the Shaper adds the route's
// system prompt and tools and forces streaming. The package imports no
// protocol: the protocols that need it import it (their converters, the
// skillpet encoder its SkillpetFacts), so the arrows point one way.
//
// The openai rewrite splices: it locates fields by their byte offsets and
// replaces only the values it changes, so every byte of every other field
// reaches the upstream exactly as the client sent it, in the same order. The
// document is never decoded into a map and re-encoded.
//
// Like the rest of transform/, the package knows nothing of Caddy or HTTP
// handlers: bytes in, bytes out.
package request

import (
	"encoding/json"
)

// The names of the request formats this package converts (Format).
const (
	// FormatOpenAI is an OpenAI chat-completions request, the default.
	FormatOpenAI = "openai"
	// FormatSkillpet is the skillpet POST /stream body (specs/002 §2.3).
	FormatSkillpet = "skillpet"
	// FormatAISDK is the body the AI SDK's useChat (DefaultChatTransport)
	// posts: {id, messages: UIMessage[], trigger, messageId?}.
	FormatAISDK = "aisdk"
)

// The system prompt modes (CONTRACT.md §3 system_prompt_mode).
const (
	// ModePrepend inserts the prompt as a new first message, the default.
	ModePrepend = "prepend"
	// ModeAppend inserts it right after the last client system message, or
	// first when there is none.
	ModeAppend = "append"
	// ModeReplace removes every client system message and inserts it first.
	ModeReplace = "replace"
)

// The tool_choice values that are not function names.
const (
	ToolChoiceAuto     = "auto"
	ToolChoiceNone     = "none"
	ToolChoiceRequired = "required"
)

// Shaper rewrites client request bodies for one route. Its fields are set
// once (config.Route.Load builds it) and only read afterwards, so one Shaper
// serves concurrent requests.
type Shaper struct {
	// Format is the body the client sends; nil means OpenAI.
	Format *Format
	// Mode is the system prompt mode: ModePrepend (the default when empty),
	// ModeAppend or ModeReplace.
	Mode string
	// Tools are the configured tool definitions, each one complete, valid
	// JSON object in OpenAI form {"type":"function","function":{"name":…}}.
	// config.Route.Load checks them; Rewrite copies them as they are.
	Tools [][]byte
	// ToolChoice is "" (leave the client's), "auto", "none", "required", or
	// the name of a function to force.
	ToolChoice string
	// Model overrides the request's model when set. It is required for
	// skillpet and aisdk, whose bodies carry none (config validates).
	Model string
}

// Info is what Rewrite learned from the client's body that the response
// side needs.
type Info struct {
	// Stream is what the client asked for: true only for "stream": true in
	// an openai body (absent means false, the OpenAI default); a converted
	// body says for itself (skillpet and aisdk clients always stream). The
	// upstream is asked to stream anyway.
	Stream bool
	// Model is the model sent upstream: Shaper.Model, or the client's
	// "model" when no override is configured ("" when neither exists).
	Model string
	// IncludeUsage is an openai body's stream_options.include_usage: only
	// a client that asked gets the usage chunk (CONTRACT §7). The upstream
	// is always asked, for logs and metrics. A converted body says for
	// itself (none asks).
	IncludeUsage bool
	// Facts is what a converted body told that its protocol's encoder
	// needs (for the skillpet body, a SkillpetFacts); nil when nothing.
	// The handler hands it on as transform.Meta.Request, unread: only the
	// protocol it is for reads it.
	Facts any
	// LeftOut names what a converted body asked for that the upstream
	// request leaves out because a chat-completions upstream has no
	// counterpart (a hosted tool such as "tool:web_search", an item such
	// as "item:reasoning"), each once, space-separated, for the log ("" for
	// nothing; a string keeps Info comparable). It holds kinds and names
	// only, never prompt text.
	LeftOut string
	// Approvals are the user's answers to calls that waited for their
	// approval (CONTRACT.md §13), when the body carries some: the request
	// resumes those calls rather than starting a turn.
	Approvals []Approval
	// ContinueMessage is the id of the assistant message an AI SDK
	// approval reply continues (its last message), "" for none: the
	// resumed stream's messageId, so that useChat extends that message.
	ContinueMessage string
}

// Rewrite returns the body to send upstream for the client's body. prompt is
// the route's system prompt with its placeholders already expanded; "" means
// none. A body that cannot be rewritten gives an *Error (400 with a code
// naming the problem); the returned body is then nil.
//
// The rewritten body is always valid JSON and has "stream": true and
// "stream_options": {"include_usage": true}.
func (s *Shaper) Rewrite(body []byte, prompt string) ([]byte, Info, error) {
	out, info, e := s.rewrite(body, prompt)
	if e != nil {
		// Returning e directly would give a non-nil error interface holding
		// a nil pointer on success; the branch keeps nil nil.
		return nil, Info{}, e
	}
	return out, info, nil
}

func (s *Shaper) rewrite(body []byte, prompt string) ([]byte, Info, *Error) {
	f := s.Format
	if f == nil {
		f = OpenAI
	}
	mode := s.Mode
	if mode == "" {
		mode = ModePrepend
	}
	if mode != ModePrepend && mode != ModeAppend && mode != ModeReplace {
		return nil, Info{}, configError("unknown system prompt mode %q", mode)
	}
	if f.Convert == nil {
		d, root, e := parseObject(body, badRequest)
		if e != nil {
			return nil, Info{}, e
		}
		return s.splice(d, root, prompt, mode)
	}
	chat, conv, e := f.Convert(body)
	if e != nil {
		return nil, Info{}, e
	}
	// A converter's output is ours, but it passes the same checks: a bug
	// in it must be a clear error, not a malformed upstream request.
	d, root, e := parseObject(chat, badRequest)
	if e != nil {
		return nil, Info{}, configError("request format %s made an invalid body: %s", f.Name, e.Message)
	}
	out, info, e := s.splice(d, root, prompt, mode)
	if e != nil {
		return nil, Info{}, e
	}
	info.Stream, info.IncludeUsage, info.Facts, info.LeftOut, info.Approvals, info.ContinueMessage = conv.Stream, conv.IncludeUsage, conv.Facts, conv.LeftOut, conv.Approvals, conv.ContinueMessage
	return out, info, nil
}

// parseObject validates body and returns it with its top-level object. bad
// builds the error for each problem, so that each format can code it.
func parseObject(body []byte, bad func(code, msg string) *Error) (jsonDoc, span, *Error) {
	if len(body) == 0 {
		return nil, span{}, bad(CodeInvalidJSON, "request body is empty")
	}
	// Validation comes first: the scanner in jsondoc.go skips values by
	// their delimiters and relies on the document being well-formed.
	if !json.Valid(body) {
		return nil, span{}, bad(CodeInvalidJSON, "request body is not valid JSON")
	}
	d := jsonDoc(body)
	root := d.root()
	if d.kind(root) != '{' {
		return nil, span{}, bad(CodeInvalidBody, "request body must be a JSON object, got "+d.typeName(root))
	}
	return d, root, nil
}
