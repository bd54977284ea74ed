package caddymodule

import (
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestUnmarshalCaddyfileErrors covers every error branch of the llm_stream
// directive: each case must fail, naming the option.
func TestUnmarshalCaddyfileErrors(t *testing.T) {
	cases := map[string]struct{ input, want string }{
		"argument on the directive":  {"llm_stream extra {\n}", "wrong argument count"},
		"unknown option":             {"llm_stream {\n\tprotocl gymbro\n}", `unrecognized llm_stream option "protocl"`},
		"missing value":              {"llm_stream {\n\tprotocol\n}", "protocol: missing value"},
		"too many values":            {"llm_stream {\n\treasoning_title Deep Thought\n}", "reasoning_title: too many values"},
		"duplicate protocol":         {"llm_stream {\n\tprotocol gymbro\n\tprotocol jsonseq\n}", "protocol: specified more than once"},
		"duplicate model":            {"llm_stream {\n\tmodel a\n\tmodel b\n}", "model: specified more than once"},
		"bad size":                   {"llm_stream {\n\tmax_request_body lots\n}", `max_request_body: invalid size "lots"`},
		"zero size":                  {"llm_stream {\n\tmax_reply 0\n}", `max_reply: invalid size "0"`},
		"size too large for int":     {"llm_stream {\n\tmax_block 8GiB\n}", "max_block: size too large"},
		"bad int":                    {"llm_stream {\n\tendpoint_id one\n}", `endpoint_id: invalid number "one"`},
		"negative int":               {"llm_stream {\n\tmax_depth -1\n}", `max_depth: invalid number "-1"`},
		"bad duration":               {"llm_stream {\n\theartbeat soon\n}", `heartbeat: invalid duration "soon"`},
		"negative duration":          {"llm_stream {\n\tidle_timeout -5s\n}", `idle_timeout: invalid duration "-5s"`},
		"tool without name":          {"llm_stream {\n\ttool\n}", "tool: missing value"},
		"tools without file":         {"llm_stream {\n\ttools\n}", "tools: missing value"},
		"system_prompt without file": {"llm_stream {\n\tsystem_prompt\n}", "system_prompt: missing value"},
		// Checked when the Caddyfile is adapted, not only at provisioning
		// (CONTRACT §3): each names the setting.
		"unknown protocol":        {"llm_stream {\n\tprotocol gymbo\n}", `protocol: unknown protocol "gymbo"`},
		"no protocol":             {"llm_stream {\n\tformat text\n}", "protocol"},
		"missing prompt file":     {"llm_stream {\n\tprotocol gymbro\n\tsystem_prompt nope.md\n}", "system_prompt: reading nope.md"},
		"unreadable tools":        {"llm_stream {\n\tprotocol gymbro\n\ttools testdata/bad_tools.json\n}", "tools: testdata/bad_tools.json"},
		"undefined tool_choice":   {"llm_stream {\n\tprotocol gymbro\n\ttool ask_user\n\ttool_choice search\n}", `tool_choice: "search"`},
		"skillpet without model":  {"llm_stream {\n\tprotocol skillpet\n\trequest_format skillpet\n}", "model"},
		"unknown think_tags":      {"llm_stream {\n\tprotocol openai\n\tthink_tags always\n}", `think_tags: unknown setting "always" (want auto, prefilled or off)`},
		"unknown text_tools":      {"llm_stream {\n\tprotocol openai\n\ttext_tools mistral\n}", `text_tools: unknown convention "mistral" (want off or hermes)`},
		"think_tags twice":        {"llm_stream {\n\tthink_tags off\n\tthink_tags auto\n}", "think_tags: specified more than once"},
		"think_prefilled empty":   {"llm_stream {\n\tprotocol openai\n\tthink_prefilled\n}", "think_prefilled: expected at least one model name pattern"},
		"think_prefilled bad":     {"llm_stream {\n\tprotocol openai\n\tthink_prefilled qwen[3\n}", `think_prefilled: bad pattern "qwen[3"`},
		"think_prefilled off":     {"llm_stream {\n\tprotocol openai\n\tthink_tags off\n\tthink_prefilled qwen\n}", "think_prefilled applies to think_tags auto, not off"},
		"validate argument":       {"llm_stream {\n\tprotocol openai\n\tvalidate on\n}", `validate: unexpected argument "on"`},
		"validate unknown option": {"llm_stream {\n\tprotocol openai\n\tvalidate {\n\t\tretry 1\n\t}\n}", `unrecognized validate option "retry"`},
		"validate duplicate":      {"llm_stream {\n\tprotocol openai\n\tvalidate {\n\t\tretries 1\n\t\tretries 2\n\t}\n}", "validate: retries: specified more than once"},
		"validate bad retries":    {"llm_stream {\n\tprotocol openai\n\tvalidate {\n\t\tretries once\n\t}\n}", `retries: invalid number "once"`},
		"validate too many":       {"llm_stream {\n\tprotocol openai\n\tvalidate {\n\t\tretries 9\n\t}\n}", "validate.retries: 9 is out of range"},
		"validate no tools":       {"llm_stream {\n\tprotocol openai\n\tvalidate {\n\t\tartifact_tools\n\t}\n}", "artifact_tools: missing value"},
		"validate bad mode":       {"llm_stream {\n\tprotocol openai\n\tvalidate {\n\t\texpected_mode maybe\n\t}\n}", `validate.expected_mode: unknown mode "maybe"`},
		"show_retries argument":   {"llm_stream {\n\tprotocol openai\n\tvalidate {\n\t\tshow_retries yes\n\t}\n}", `show_retries: unexpected argument "yes"`},
		"validate twice":          {"llm_stream {\n\tprotocol openai\n\tvalidate\n\tvalidate\n}", "validate: specified more than once"},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			h := new(Handler)
			err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(tc.input))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

// TestUnmarshalCaddyfile checks that every option lands in its field and
// that the repeatable ones accumulate in order.
func TestUnmarshalCaddyfile(t *testing.T) {
	h := new(Handler)
	err := h.UnmarshalCaddyfile(caddyfile.NewTestDispenser(`llm_stream {
		request_format aisdk
		system_prompt ../examples/prompts/thinkingml.md
		system_prompt ../examples/prompts/aiplan.md
		system_prompt_text "be brief"
		system_prompt_mode replace
		tools ../examples/tools/search.json
		tools ../examples/tools/tools.md
		tool ask_user
		tool_choice required
		model m
		max_request_body 1MiB
		format aiplan
		protocol aisdk
		heartbeat 0
		idle_timeout 1m
		provider p
		endpoint_id 7
		reasoning_title "Deep thought"
		fallback_text "try again"
		think_tags prefilled
		text_tools hermes
		max_sse_line 2KiB
		max_reply 1MB
		max_tag 100
		max_block 1KB
		max_key 300
		max_depth 10
		max_tool_calls 3
	}`))
	if err != nil {
		t.Fatal(err)
	}
	r := h.Route
	checks := []struct {
		name      string
		got, want any
	}{
		{"request_format", r.RequestFormat, "aisdk"},
		{"system_prompt", strings.Join(r.SystemPrompt, ","), "../examples/prompts/thinkingml.md,../examples/prompts/aiplan.md"},
		{"system_prompt_text", r.SystemPromptText, "be brief"},
		{"system_prompt_mode", r.SystemPromptMode, "replace"},
		{"tools", strings.Join(r.Tools, ","), "../examples/tools/search.json,../examples/tools/tools.md"},
		{"tool", strings.Join(r.Tool, ","), "ask_user"},
		{"tool_choice", r.ToolChoice, "required"},
		{"model", r.Model, "m"},
		{"max_request_body", r.MaxRequestBody, int64(1 << 20)},
		{"format", r.Format, "aiplan"},
		{"protocol", r.Protocol, "aisdk"},
		{"heartbeat", time.Duration(*r.Heartbeat), time.Duration(0)},
		{"idle_timeout", time.Duration(*r.IdleTimeout), time.Minute},
		{"provider", r.Provider, "p"},
		{"endpoint_id", r.EndpointID, 7},
		{"reasoning_title", r.ReasoningTitle, "Deep thought"},
		{"fallback_text", r.FallbackText, "try again"},
		{"think_tags", r.ThinkTags, "prefilled"},
		{"text_tools", r.TextTools, "hermes"},
		{"max_sse_line", r.Limits.MaxSSELineBytes, 2048},
		{"max_reply", r.Limits.MaxReplyBytes, int64(1000000)},
		{"max_tag", r.Limits.MaxTagBytes, 100},
		{"max_block", r.Limits.MaxBlockBytes, 1000},
		{"max_key", r.Limits.MaxKeyBytes, 300},
		{"max_depth", r.Limits.MaxDepth, 10},
		{"max_tool_calls", r.Limits.MaxToolCalls, 3},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
}
