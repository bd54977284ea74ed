// Package config holds the settings of one llm_stream route: the handler's
// JSON configuration (Route), and its validated, resolved form (Settings)
// with prompt and tool files read and defaults applied. It is pure Go, with
// no Caddy import: caddymodule embeds Route in its handler and parses the
// Caddyfile into it (CONTRACT.md §3).
package config

import "github.com/llmstream/llmstream/transform"

// Route is the llm_stream handler's configuration. caddymodule embeds it, so
// its JSON tags are the Caddy JSON config and these comments are its
// reference. Every field is optional except Protocol; Route.Load applies the
// defaults stated here and checks the rest.
type Route struct {
	// RequestFormat is the body the client sends: "openai" (an OpenAI
	// chat-completions request) or the name of a protocol that has a body
	// of its own, such as "skillpet" (the skillpet POST /stream body,
	// specs/002 §2.3) or "aisdk" (what the AI SDK's useChat posts); the
	// protocol table (transform/protocol) lists them. Default "openai".
	RequestFormat string `json:"request_format,omitempty"`

	// SystemPrompt lists files whose contents make the system prompt,
	// concatenated in order, each with its trailing whitespace removed,
	// separated by a blank line ("\n\n"). Caddy placeholders in them
	// ({http.request.header.X-User}) are expanded per request; other
	// braces are left alone. Relative paths are relative to the working
	// directory. Default none.
	SystemPrompt []string `json:"system_prompt,omitempty"`

	// SystemPromptText is system prompt text given inline. It follows the
	// SystemPrompt files, after a blank line. Default none.
	SystemPromptText string `json:"system_prompt_text,omitempty"`

	// SystemPromptMode says where the system prompt goes: "prepend" (a new
	// first message), "append" (right after the client's last system
	// message) or "replace" (instead of every client system message).
	// Default "prepend".
	SystemPromptMode string `json:"system_prompt_mode,omitempty"`

	// Tools lists files of tool definitions added to every request. A .json
	// file holds one tool object or an array of them; any other file is
	// Markdown whose ```json blocks each hold one tool or an array. A tool
	// is in OpenAI form {"type":"function","function":{"name":…}} or a bare
	// function {"name","description","parameters"}. A client tool with the
	// same function name is replaced. Default none.
	Tools []string `json:"tools,omitempty"`

	// Tool lists built-in tool definitions by name, added after the Tools
	// files' tools. Known: "ask_user" (specs/002 §6). Default none.
	Tool []string `json:"tool,omitempty"`

	// ToolChoice sets the request's tool_choice: "auto", "none",
	// "required", or the name of a configured tool to force. Default: the
	// client's tool_choice is left as it is.
	ToolChoice string `json:"tool_choice,omitempty"`

	// Model overrides the model the request names. Required when
	// RequestFormat is "skillpet" or "aisdk", whose bodies name none.
	// Default: the client's model.
	Model string `json:"model,omitempty"`

	// MaxRequestBody is the largest request body accepted, in bytes; a
	// larger one gets 413. Default 8000000 (Caddy's "8MB").
	MaxRequestBody int64 `json:"max_request_body,omitempty"`

	// Format is what the model writes, a row of the format table
	// (transform/format): "thinkingml", "jsonl", "aiplan", "final_result",
	// "text", or "auto" (decided from the reply's first bytes, CONTRACT.md
	// §4). Default "auto".
	Format string `json:"format,omitempty"`

	// ThinkTags says how <think> tags the model writes in its content are
	// read (CONTRACT.md §8; models served raw by llama.cpp, or vLLM and
	// SGLang without a reasoning parser): "auto" takes a <think>…</think>
	// block at the start of the content as reasoning, and reads a model
	// whose chat template opens <think> in the prompt (DeepSeek-R1 and its
	// distills, QwQ, Qwen3 *-Thinking-2507, Qwen3.5, DeepSeek-V3.2,
	// MiniMax-M2: transform/thinktags Families, and ThinkPrefilled; by the
	// model name the upstream reports) as "prefilled";
	// "prefilled" takes everything before the first </think> as
	// reasoning, unless the reasoning came natively (reasoning_content);
	// "off" leaves the content as written. An empty <think></think> is
	// dropped; under format auto the format is detected after the
	// reasoning. A reply that never closes its reasoning repeats it as the
	// answer (up to limits.max_block, violation think_unclosed). Applies to
	// every format; thinkingml keeps its own <think> block. Default "auto".
	ThinkTags string `json:"think_tags,omitempty"`

	// ThinkPrefilled are model-name patterns that think_tags auto reads as
	// prefilled, besides the families of transform/thinktags (Families):
	// a family served today that the table does not know yet. Each is a Go
	// regular expression (RE2), searched for anywhere in the model name
	// the upstream reports, case-insensitively: "qwen3\.7", "^my-r1-". An
	// empty or invalid pattern is an error, and so is a pattern with
	// think_tags other than auto. Default none.
	ThinkPrefilled []string `json:"think_prefilled,omitempty"`

	// TextTools names how the model writes tool calls as text, for servers
	// without a tool parser (CONTRACT.md §8): "hermes" reads
	// <tool_call>{"name": …, "arguments": …}</tool_call> blocks (Hermes,
	// Qwen 2.5/3) as tool calls in every protocol, streamed, with
	// finish_reason tool_calls; "off" reads none. It applies to format text
	// and to auto, which then takes a leading <tool_call> for text. A
	// block that is not a call is delivered as text with the violation
	// bad_tool_call. Default "off".
	TextTools string `json:"text_tools,omitempty"`

	// Protocol is what the client gets, a row of the protocol table
	// (transform/protocol): "gymbro", "jsonseq", "skillpet", "aisdk",
	// "openai", … (CONTRACT.md §5, docs/protocols.md). Required.
	Protocol string `json:"protocol,omitempty"`

	// Heartbeat is the interval of keep-alives while the upstream is
	// silent, a duration string ("15s") or nanoseconds. 0 disables them.
	// Default 15s.
	Heartbeat *Duration `json:"heartbeat,omitempty"`

	// IdleTimeout ends the stream with an upstream_timeout error when the
	// upstream sends no byte for this long. 0 disables it (the proxy's own
	// timeouts still apply). Default 120s.
	IdleTimeout *Duration `json:"idle_timeout,omitempty"`

	// Name names the route in its metrics (the route label), its trace
	// spans and the playground's list (CONTRACT.md §15). It is the
	// operator's word, never the request's, so a label has no more values
	// than the config has routes. Default: the path of the matcher that
	// leads to the route in the config ("/v1/chat/completions",
	// "/skillpet/*"), or "" when none names a path.
	Name string `json:"name,omitempty"`

	// TraceContent puts what the model was asked and what it answered in
	// the route's trace spans when Caddy's tracing is on: the upstream
	// request's messages (gen_ai.input.messages), the reply's text
	// (gen_ai.output.messages), a tool call's arguments and result. Off by
	// default: spans carry names, models, counts and timings only, since a
	// trace backend is not where prompts and conversations belong.
	TraceContent bool `json:"trace_content,omitempty"`

	// Provider is the provider name reported in status, completed and
	// error events. Default "openai".
	Provider string `json:"provider,omitempty"`

	// EndpointID is the endpoint id reported in status, completed and
	// error events. Default 0.
	EndpointID int `json:"endpoint_id,omitempty"`

	// ReasoningTitle is the phase title given to reasoning that has none.
	// Default "Thought".
	ReasoningTitle string `json:"reasoning_title,omitempty"`

	// FallbackText is the answer sent when an aiplan reply is unusable and
	// no answer text was sent yet. Default the message of specs/003
	// (错误处理标准).
	FallbackText string `json:"fallback_text,omitempty"`

	// Limits bounds what one stream may buffer; each zero field takes its
	// default (see transform.Limits).
	Limits transform.Limits `json:"limits,omitzero"`

	// Validate makes the checks of a reply act: retries, the terminal-state
	// rules of a FinalResult, tool calls held until they pass their
	// schemas (CONTRACT.md §10; see Validate). Default off: tool calls are
	// still checked, and a failure is a violation.
	Validate *Validate `json:"validate,omitempty"`
	// Conversation, on a skillpet route, keeps conversations and serves
	// the component's init and clear endpoints beside stream (CONTRACT.md
	// §9; see Conversation). Default none: every turn stands alone.
	Conversation *Conversation `json:"conversation,omitempty"`
	// ToolServers is the tools block (CONTRACT.md §12; see ToolServers):
	// MCP servers whose tools llmstream runs, with the agent loop's
	// bounds. Default none: the model's tool calls go to the client.
	ToolServers *ToolServers `json:"tool_servers,omitempty"`
}
