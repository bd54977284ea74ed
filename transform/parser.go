package transform

import "regexp"

import "strconv"

// Parser turns a model's reply text into events, incrementally. Every format
// (thinkingml, jsonl, aiplan, final_result, text) implements it.
//
// A Parser is fed the reply one upstream delta at a time. Each Feed handles
// its bytes in time proportional to their length (each byte is examined a
// bounded number of times; nothing already consumed is re-parsed) and emits
// every event those bytes complete before it returns. The concatenated text
// of the events does not depend on how the reply was split: a tag, an escape
// or a UTF-8 sequence cut across Feeds gives the same events as the unsplit
// text, only cut differently.
//
// Malformed text never panics and is never lost: it is emitted as text and
// the anomaly is reported as a KindViolation. Only fatal conditions (a
// limit exceeded, the model's <<ParsingError>> marker) emit a KindError;
// after one, the parser ignores further input.
//
// A Parser is not safe for concurrent use and starts no goroutines.
type Parser interface {
	// Feed consumes the next bytes of the reply. p is not retained.
	Feed(p []byte, emit Emit)
	// Close ends the reply: it releases held-back bytes, closes every open
	// section, and reports what the reply lacked. Close emits no KindFinish;
	// the stream's terminal event is the pipeline's to send.
	Close(emit Emit)
	// Reset readies the parser for a new reply with the same options, so
	// that parsers can be pooled.
	Reset()
}

// ParserOptions configures a format parser. The zero value is usable: zero
// fields take the defaults below.
type ParserOptions struct {
	// Limits bounds what a parser may hold (see Limits).
	Limits Limits
	// ReasoningTitle is the phase title for reasoning that has none (a
	// <phase> without <title>, an aiplan "thought"). Default "Thought".
	ReasoningTitle string
	// FallbackText is the aiplan safe-fallback answer (specs/003 错误处理标准),
	// sent when a reply is not a usable AIPlan and no answer text was sent.
	FallbackText string
	// ThinkTags says how <think> tags the model writes in its content are
	// read (CONTRACT.md §8, transform/thinktags): ThinkTagsAuto (the zero
	// value), ThinkTagsPrefilled or ThinkTagsOff. The pipeline applies it
	// in front of every format, so that one setting covers them all.
	ThinkTags ThinkTags
	// ThinkPrefilled are model-name patterns (the think_prefilled option)
	// that ThinkTagsAuto reads as prefilled, besides the model families of
	// transform/thinktags: a route adds a family the table does not know.
	// Each is searched for anywhere in the model name the upstream reports;
	// config compiles them case-insensitive.
	ThinkPrefilled []*regexp.Regexp
	// TextTools names the convention by which the model writes tool calls
	// as text, a row of the texttools table ("hermes"); "" reads none
	// (CONTRACT.md §8). The text format, and auto when it finds text,
	// apply it.
	TextTools string
}

// ThinkTags is how <think> tags in the content are read (CONTRACT.md §8).
type ThinkTags uint8

// The think_tags settings.
const (
	// ThinkTagsAuto takes a <think>…</think> block at the start of the
	// content as reasoning, and behaves as ThinkTagsPrefilled for the model
	// families whose chat template opens <think> in the prompt.
	ThinkTagsAuto ThinkTags = iota
	// ThinkTagsPrefilled also takes everything before the first </think>
	// as reasoning: the chat template opened <think> (PARSING.md TM08).
	ThinkTagsPrefilled
	// ThinkTagsOff leaves the content as the model wrote it.
	ThinkTagsOff
)

var thinkTagsNames = [...]string{"auto", "prefilled", "off"}

// String returns the setting as the think_tags option spells it.
func (t ThinkTags) String() string {
	if int(t) < len(thinkTagsNames) {
		return thinkTagsNames[t]
	}
	return "think_tags(" + strconv.Itoa(int(t)) + ")"
}

// ParseThinkTags returns the setting the think_tags option names.
func ParseThinkTags(s string) (ThinkTags, bool) {
	for i, n := range thinkTagsNames {
		if s == n {
			return ThinkTags(i), true
		}
	}
	return 0, false
}

// ThinkTagsNames lists the think_tags values, in the order messages list
// them.
func ThinkTagsNames() []string { return thinkTagsNames[:] }

// DefaultReasoningTitle is the default ParserOptions.ReasoningTitle.
const DefaultReasoningTitle = "Thought"

// DefaultFallbackText is the safe-fallback answer of specs/003.
const DefaultFallbackText = "抱歉，我的响应格式有问题，请重新尝试您的请求。"

// WithDefaults returns o with zero fields set to their defaults.
func (o ParserOptions) WithDefaults() ParserOptions {
	o.Limits = o.Limits.WithDefaults()
	if o.ReasoningTitle == "" {
		o.ReasoningTitle = DefaultReasoningTitle
	}
	if o.FallbackText == "" {
		o.FallbackText = DefaultFallbackText
	}
	return o
}

// Limits bounds every buffer a stream may grow, so that hostile or broken
// input costs bounded memory (PARSING.md §5.10). Exceeding one of the limits
// that bound what a stream holds (max_sse_line, max_reply, max_block) ends
// the stream with the error code named in its comment; the others stop
// holding and go on, the model's text delivered as text with a violation of
// that code (CONTRACT.md §7: nothing the model wrote vanishes). Zero fields
// take the defaults.
type Limits struct {
	// MaxSSELineBytes bounds one line of the upstream's SSE stream.
	// Default 1 MiB; code sse_line_too_long.
	MaxSSELineBytes int `json:"max_sse_line,omitempty"`
	// MaxReplyBytes bounds the upstream reply body of one stream.
	// Default 32 MiB; code reply_too_large.
	MaxReplyBytes int64 `json:"max_reply,omitempty"`
	// MaxTagBytes bounds a ThinkingML tag held back while it may still be a
	// tag, attributes included. Default 64. A longer candidate is released
	// as text with the violation tag_too_long; it does not end the stream
	// (CONTRACT.md §7).
	MaxTagBytes int `json:"max_tag,omitempty"`
	// MaxBlockBytes bounds text that is only meaningful whole and so is held
	// until it ends: a <serp> summary, a <title>, the serp_queries comment, a
	// clarify or artifacts value. Default 64 KiB; code block_too_long.
	MaxBlockBytes int `json:"max_block,omitempty"`
	// MaxKeyBytes bounds a JSON object key the model writes. Default 256;
	// code key_too_long. A longer key ends the reading of the JSON, not the
	// stream: the reply from the key on is answer text, with a violation.
	MaxKeyBytes int `json:"max_key,omitempty"`
	// MaxDepth bounds JSON nesting. Default 64; code json_too_deep. Deeper
	// nesting ends the reading of the JSON, not the stream, as MaxKeyBytes.
	MaxDepth int `json:"max_depth,omitempty"`
	// MaxToolCalls bounds the tool calls of one stream. Default 128; code
	// too_many_tool_calls. Native tool calls beyond it end the stream (they
	// are no text to deliver); an aiplan call beyond it is not made, and
	// its text is answer text, with a violation.
	MaxToolCalls int `json:"max_tool_calls,omitempty"`
}

// The default limits.
const (
	DefaultMaxSSELineBytes = 1 << 20
	DefaultMaxReplyBytes   = 32 << 20
	DefaultMaxTagBytes     = 64
	DefaultMaxBlockBytes   = 64 << 10
	DefaultMaxKeyBytes     = 256
	DefaultMaxDepth        = 64
	DefaultMaxToolCalls    = 128
)

// WithDefaults returns l with zero fields set to their defaults.
func (l Limits) WithDefaults() Limits {
	if l.MaxSSELineBytes <= 0 {
		l.MaxSSELineBytes = DefaultMaxSSELineBytes
	}
	if l.MaxReplyBytes <= 0 {
		l.MaxReplyBytes = DefaultMaxReplyBytes
	}
	if l.MaxTagBytes <= 0 {
		l.MaxTagBytes = DefaultMaxTagBytes
	}
	if l.MaxBlockBytes <= 0 {
		l.MaxBlockBytes = DefaultMaxBlockBytes
	}
	if l.MaxKeyBytes <= 0 {
		l.MaxKeyBytes = DefaultMaxKeyBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxToolCalls <= 0 {
		l.MaxToolCalls = DefaultMaxToolCalls
	}
	return l
}

// NativeCallsNoter is implemented by a parser whose format expects the
// reply to be a document of its own (aiplan, final_result, jsonl). The
// pipeline tells it, before Close, that the upstream's own tool calls
// carried the reply: a reply with no text then lacks nothing. An agent
// loop's tool-calling turn has no FinalResult yet (specs/004 §7.3: the
// loop goes on), and reporting it as not_json_object, or answering it with
// aiplan's safe fallback, would be false.
type NativeCallsNoter interface {
	NoteNativeCalls()
}
