package anthropic_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/anthropic"
	"github.com/llmstream/llmstream/transform/request"
)

func TestConvert(t *testing.T) {
	tests := []struct {
		name, body, want string
		stream, thinking bool
	}{
		{
			name: "minimal",
			body: `{"model":"claude-x","max_tokens":1024,"messages":[{"role":"user","content":"Hello"}]}`,
			want: `{"model":"claude-x","messages":[{"role":"user","content":"Hello"}],"max_tokens":1024}`,
		},
		{
			name: "system_string_and_settings",
			body: `{"model":"m","max_tokens":5,"system":"Be brief.","temperature":0.2,"top_p":0.9,"top_k":40,` +
				`"stop_sequences":["END","\n\n"],"metadata":{"user_id":"u-1"},"stream":true,"service_tier":"auto",` +
				`"messages":[{"role":"user","content":"q"}]}`,
			want: `{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"q"}],` +
				`"max_tokens":5,"temperature":0.2,"top_p":0.9,"stop":["END","\n\n"]}`,
			stream: true,
		},
		{
			// Claude Code's shape: system blocks and user blocks with
			// cache_control, which chat completions has no use for.
			name: "system_blocks_and_cache_control",
			body: `{"model":"m","system":[{"type":"text","text":"You are Claude Code.","cache_control":{"type":"ephemeral"}},` +
				`{"type":"text","text":"Rules."}],"messages":[{"role":"user","content":[` +
				`{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"fix it","cache_control":{"type":"ephemeral"}}]}],` +
				`"stop_sequences":[],"thinking":{"type":"enabled","budget_tokens":2048}}`,
			want: `{"model":"m","messages":[{"role":"system","content":"You are Claude Code.\n\nRules."},` +
				`{"role":"user","content":[{"type":"text","text":"<system-reminder>ctx</system-reminder>"},{"type":"text","text":"fix it"}]}]}`,
			thinking: true,
		},
		{
			name: "images",
			body: `{"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},` +
				`{"type":"image","source":{"type":"base64","media_type":"image/png","data":"iVBORw0KGgo="}},` +
				`{"type":"image","source":{"type":"url","url":"https://x.test/a.jpg"}}]}]}`,
			want: `{"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBORw0KGgo="}},` +
				`{"type":"image_url","image_url":{"url":"https://x.test/a.jpg"}}]}]}`,
		},
		{
			name: "documents",
			body: `{"messages":[{"role":"user","content":[` +
				`{"type":"document","source":{"type":"text","media_type":"text/plain","data":"plain doc"}},` +
				`{"type":"document","title":"spec.pdf","source":{"type":"base64","media_type":"application/pdf","data":"JVBERi0="}},` +
				`{"type":"document","source":{"type":"content","content":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}}]}]}`,
			want: `{"messages":[{"role":"user","content":[{"type":"text","text":"plain doc"},` +
				`{"type":"file","file":{"filename":"spec.pdf","file_data":"data:application/pdf;base64,JVBERi0="}},` +
				`{"type":"text","text":"a\n\nb"}]}]}`,
		},
		{
			// The tool round trip: thinking dropped, tool_use as
			// tool_calls, tool results as tool messages first, their
			// images and the user's text in a user message after them.
			name: "tool_round_trip",
			body: `{"model":"m","messages":[` +
				`{"role":"user","content":"Weather in Paris and a photo?"},` +
				`{"role":"assistant","content":[{"type":"thinking","thinking":"need tools","signature":"sig"},` +
				`{"type":"redacted_thinking","data":"xx"},{"type":"text","text":"Checking."},` +
				`{"type":"tool_use","id":"toolu_1","name":"get_weather","input":{"city": "Paris"}},` +
				`{"type":"tool_use","id":"toolu_2","name":"photo","input":{}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"18°C"},` +
				`{"type":"tool_result","tool_use_id":"toolu_2","is_error":true,"content":[{"type":"text","text":"camera"},{"type":"text","text":"offline"},` +
				`{"type":"image","source":{"type":"url","url":"https://x.test/last.png"}}]},` +
				`{"type":"text","text":"Thanks"}]},` +
				`{"role":"assistant","content":[{"type":"tool_use","id":"toolu_3","name":"ping"}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_3"}]}]}`,
			want: `{"model":"m","messages":[{"role":"user","content":"Weather in Paris and a photo?"},` +
				`{"role":"assistant","content":"Checking.","tool_calls":[` +
				`{"id":"toolu_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}},` +
				`{"id":"toolu_2","type":"function","function":{"name":"photo","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"toolu_1","content":"18°C"},` +
				`{"role":"tool","tool_call_id":"toolu_2","content":"Error: camera\n\noffline"},` +
				`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x.test/last.png"}},{"type":"text","text":"Thanks"}]},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"toolu_3","type":"function","function":{"name":"ping","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"toolu_3","content":""}]}`,
		},
		{
			name: "thinking_only_assistant_dropped_and_system_role",
			body: `{"messages":[{"role":"system","content":[{"type":"text","text":"S"}]},{"role":"user","content":"a"},` +
				`{"role":"assistant","content":[{"type":"thinking","thinking":"t","signature":""}]},{"role":"assistant","content":"b"}]}`,
			want: `{"messages":[{"role":"system","content":"S"},{"role":"user","content":"a"},{"role":"assistant","content":"b"}]}`,
		},
		{
			name: "tools_and_choices",
			body: `{"messages":[{"role":"user","content":"x"}],"tools":[` +
				`{"name":"get_weather","description":"Weather","input_schema":{"type":"object","properties":{"city":{"type":"string"}}},"cache_control":{"type":"ephemeral"}},` +
				`{"type":"custom","name":"noop","input_schema":{"type":"object"},"strict":true}],` +
				`"tool_choice":{"type":"any","disable_parallel_tool_use":true}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"tools":[` +
				`{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},` +
				`{"type":"function","function":{"name":"noop","parameters":{"type":"object"}}}],` +
				`"tool_choice":"required","parallel_tool_calls":false}`,
		},
		{
			// Claude Code's tool search: a deferred tool is offered like the
			// others, and the tool_reference blocks ToolSearch returns are
			// rendered as Claude Code renders them for models without
			// references.
			name: "tool_search",
			body: `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t1","name":"ToolSearch","input":{"query":"select:WebFetch"}}]},` +
				`{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":[{"type":"tool_reference","tool_name":"WebFetch"},{"type":"tool_reference","tool_name":"Gone"}]}]}],` +
				`"tools":[{"name":"ToolSearch","input_schema":{"type":"object"}},` +
				`{"name":"WebFetch","description":"Fetch a URL","input_schema":{"type": "object","properties":{"url":{"type":"string"}}},"defer_loading":true}]}`,
			want: `{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"ToolSearch","arguments":"{\"query\":\"select:WebFetch\"}"}}]},` +
				`{"role":"tool","tool_call_id":"t1","content":"<functions>\n<function>{\"description\":\"Fetch a URL\",\"name\":\"WebFetch\",\"parameters\":{\"type\":\"object\",\"properties\":{\"url\":{\"type\":\"string\"}}}}</function>\n<function>{\"name\":\"Gone\"}</function>\n</functions>"}],` +
				`"tools":[{"type":"function","function":{"name":"ToolSearch","parameters":{"type":"object"}}},` +
				`{"type":"function","function":{"name":"WebFetch","description":"Fetch a URL","parameters":{"type": "object","properties":{"url":{"type":"string"}}}}}]}`,
		},
		{
			name: "tool_choice_tool",
			body: `{"messages":[],"tools":[{"name":"f","input_schema":{}}],"tool_choice":{"type":"tool","name":"f"}}`,
			want: `{"messages":[],"tools":[{"type":"function","function":{"name":"f","parameters":{}}}],` +
				`"tool_choice":{"type":"function","function":{"name":"f"}}}`,
		},
		{
			name: "tool_choice_none_and_nulls",
			body: `{"model":null,"system":null,"messages":[{"role":"user","content":"x"}],"tools":null,"tool_choice":{"type":"none"},"stream":false,"thinking":{"type":"disabled"}}`,
			want: `{"messages":[{"role":"user","content":"x"}],"tool_choice":"none"}`,
		},
		{
			name:     "adaptive_thinking_omitted_display",
			body:     `{"messages":[],"thinking":{"type":"adaptive","display":"omitted"}}`,
			want:     `{"messages":[]}`,
			thinking: false,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, e := anthropic.Convert([]byte(tt.body))
			if e != nil {
				t.Fatalf("error %v", e)
			}
			if string(out) != tt.want {
				t.Errorf("got\n%s\nwant\n%s", out, tt.want)
			}
			facts, _ := info.Facts.(anthropic.Request)
			if info.Stream != tt.stream || facts.Thinking != tt.thinking {
				t.Errorf("stream %v thinking %v, want %v %v", info.Stream, facts.Thinking, tt.stream, tt.thinking)
			}
			if facts.InputTokens != anthropic.EstimateTokens(out) || facts.InputTokens <= 0 {
				t.Errorf("InputTokens %d, the estimate of the body is %d", facts.InputTokens, anthropic.EstimateTokens(out))
			}
		})
	}
}

func TestConvertRefuses(t *testing.T) {
	msgs := `"messages":[{"role":"user","content":"x"}]`
	tests := []struct {
		name, body, code, msg string
	}{
		{"empty", ``, request.CodeInvalidJSON, "empty"},
		{"not_json", `{"messages":`, request.CodeInvalidJSON, "not valid JSON"},
		{"array", `[]`, request.CodeInvalidBody, "JSON object"},
		{"null", `null`, request.CodeInvalidBody, "JSON object"},
		{"no_messages", `{"model":"m"}`, request.CodeMissingMessages, "messages"},
		{"messages_not_array", `{"messages":{}}`, request.CodeInvalidMessages, "messages"},
		{"model_not_string", `{"model":1,` + msgs + `}`, anthropic.CodeInvalidRequest, "model"},
		{"max_tokens_not_number", `{"max_tokens":"x",` + msgs + `}`, anthropic.CodeInvalidRequest, "max_tokens"},
		{"stream_not_bool", `{"stream":"yes",` + msgs + `}`, anthropic.CodeInvalidRequest, "stream"},
		{"stop_not_strings", `{"stop_sequences":[1],` + msgs + `}`, anthropic.CodeInvalidRequest, "stop_sequences"},
		{"bad_role", `{"messages":[{"role":"tool","content":"x"}]}`, anthropic.CodeInvalidRequest, `messages.0.role: must be user, assistant or system, got "tool"`},
		{"no_content", `{"messages":[{"role":"user"}]}`, anthropic.CodeInvalidRequest, "messages.0.content: field required"},
		{"message_not_object", `{"messages":["x"]}`, anthropic.CodeInvalidRequest, "messages.0"},
		{"unknown_block", `{"messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"hologram"}]}]}`,
			anthropic.CodeUnsupported, `messages.0.content.1.type: "hologram" blocks are not supported`},
		{"server_tool_block", `{"messages":[{"role":"assistant","content":[{"type":"server_tool_use","id":"s","name":"web_search","input":{}}]}]}`,
			anthropic.CodeUnsupported, `"server_tool_use" blocks`},
		{"tool_result_in_assistant", `{"messages":[{"role":"assistant","content":[{"type":"tool_result","tool_use_id":"x"}]}]}`,
			anthropic.CodeUnsupported, "an assistant message"},
		{"unknown_block_in_tool_result", `{"messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x","content":[{"type":"search_result","source":"s","title":"t","content":[]}]}]}]}`,
			anthropic.CodeUnsupported, "messages.0.content.0.content.0.type"},
		{"file_source", `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"file","file_id":"f1"}}]}]}`,
			anthropic.CodeUnsupported, "Files API"},
		{"image_not_image", `{"messages":[{"role":"user","content":[{"type":"image","source":{"type":"base64","media_type":"text/html","data":"x"}}]}]}`,
			anthropic.CodeInvalidRequest, "media_type"},
		{"image_without_source", `{"messages":[{"role":"user","content":[{"type":"image"}]}]}`, anthropic.CodeInvalidRequest, "source"},
		{"document_url", `{"messages":[{"role":"user","content":[{"type":"document","source":{"type":"url","url":"https://x/a.pdf"}}]}]}`,
			anthropic.CodeUnsupported, `"url" is not supported`},
		{"tool_use_input_not_object", `{"messages":[{"role":"assistant","content":[{"type":"tool_use","id":"t","name":"f","input":[1]}]}]}`,
			anthropic.CodeInvalidRequest, "input: must be an object"},
		{"blocks_wrong_types", `{"messages":[{"role":"user","content":[{"type":"text","text":5}]}]}`, anthropic.CodeInvalidRequest, "messages.0.content"},
		{"system_image", `{"system":[{"type":"image"}],` + msgs + `}`, anthropic.CodeUnsupported, "system.0"},
		{"web_search_tool", `{` + msgs + `,"tools":[{"type":"web_search_20250305","name":"web_search","max_uses":5}]}`,
			anthropic.CodeUnsupported, `tools.0: "web_search_20250305" is a tool Anthropic defines`},
		{"bash_tool", `{` + msgs + `,"tools":[{"name":"f","input_schema":{}},{"type":"bash_20250124","name":"bash"}]}`,
			anthropic.CodeUnsupported, `tools.1: "bash_20250124"`},
		{"text_editor_tool", `{` + msgs + `,"tools":[{"type":"text_editor_20250728","name":"str_replace_based_edit_tool"}]}`,
			anthropic.CodeUnsupported, "text_editor_20250728"},
		{"tool_without_schema", `{` + msgs + `,"tools":[{"name":"f"}]}`, anthropic.CodeInvalidRequest, "tools.0.input_schema"},
		{"tool_without_name", `{` + msgs + `,"tools":[{"input_schema":{}}]}`, anthropic.CodeInvalidRequest, "tools.0.name"},
		{"tools_not_array", `{` + msgs + `,"tools":{}}`, anthropic.CodeInvalidRequest, "tools"},
		{"tool_choice_unknown", `{` + msgs + `,"tool_choice":{"type":"some"}}`, anthropic.CodeInvalidRequest, "tool_choice.type"},
		{"tool_choice_tool_without_name", `{` + msgs + `,"tool_choice":{"type":"tool"}}`, anthropic.CodeInvalidRequest, "tool_choice.name"},
		{"tool_choice_string", `{` + msgs + `,"tool_choice":"auto"}`, anthropic.CodeInvalidRequest, "tool_choice"},
		{"thinking_unknown", `{` + msgs + `,"thinking":{"type":"deep"}}`, anthropic.CodeInvalidRequest, "thinking.type"},
		{"mcp_servers", `{` + msgs + `,"mcp_servers":[{"type":"url","url":"https://mcp","name":"m"}]}`, anthropic.CodeUnsupported, "mcp_servers"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, e := anthropic.Convert([]byte(tt.body))
			if e == nil {
				t.Fatalf("converted to %s", out)
			}
			if e.Status != http.StatusBadRequest || e.Code != tt.code || !strings.Contains(e.Message, tt.msg) || out != nil {
				t.Errorf("got %d %s %q, want 400 %s containing %q", e.Status, e.Code, e.Message, tt.code, tt.msg)
			}
		})
	}
}

// TestRequestErrorShape checks the body of a refused request: Anthropic's
// error shape, which the SDKs parse into APIError.type and errorCode.
func TestRequestErrorShape(t *testing.T) {
	tests := []struct {
		e    *request.Error
		want string
	}{
		{&request.Error{Status: 400, Code: "unsupported", Message: "tools.0: no"},
			`{"type":"error","error":{"type":"invalid_request_error","message":"tools.0: no","details":{"error_code":"unsupported"}}}`},
		{request.TooLarge(1000),
			`{"type":"error","error":{"type":"request_too_large","message":"request body is larger than 1000 bytes (max_request_body)","details":{"error_code":"request_too_large"}}}`},
		{&request.Error{Status: 500, Code: "bad_config", Message: "x"},
			`{"type":"error","error":{"type":"api_error","message":"x","details":{"error_code":"bad_config"}}}`},
	}
	for _, tt := range tests {
		if got := string(anthropic.AppendRequestError(nil, tt.e)); got != tt.want {
			t.Errorf("got %s\nwant %s", got, tt.want)
		}
	}
	if got := string(anthropic.AppendRefusal(nil, "upstream_timeout", "no upstream byte for 1s")); got !=
		`{"type":"error","error":{"type":"timeout_error","message":"no upstream byte for 1s","details":{"error_code":"upstream_timeout"}}}` {
		t.Errorf("refusal %s", got)
	}
}

// TestConvertThroughShaper: the converted body goes through the openai
// rules like any other format's, route prompt and tools included, and
// streams upstream whatever the client asked.
func TestConvertThroughShaper(t *testing.T) {
	f := &request.Format{Name: "anthropic", Convert: anthropic.Convert, AppendError: anthropic.AppendRequestError}
	s := request.Shaper{Format: f, Tools: [][]byte{[]byte(`{"type":"function","function":{"name":"search","parameters":{}}}`)}}
	out, info, err := s.Rewrite([]byte(`{"model":"claude-x","max_tokens":9,"system":"client","messages":[{"role":"user","content":"hi"}],"stream":false}`), "route prompt")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Model    string `json:"model"`
		Stream   bool   `json:"stream"`
		Messages []struct {
			Role, Content string
		} `json:"messages"`
		Tools []json.RawMessage `json:"tools"`
	}
	if err := json.Unmarshal(out, &body); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if body.Model != "claude-x" || !body.Stream || len(body.Messages) != 3 || body.Messages[0].Content != "route prompt" ||
		body.Messages[1].Content != "client" || len(body.Tools) != 1 || info.Stream || info.Model != "claude-x" {
		t.Errorf("shaped %s, info %+v", out, info)
	}
}

func TestUpstreamHeader(t *testing.T) {
	h := http.Header{}
	h.Set("Anthropic-Version", "2023-06-01")
	h.Set("Anthropic-Beta", "interleaved-thinking-2025-05-14")
	h.Set("X-Api-Key", "sk-ant-1")
	h.Set("X-Other", "kept")
	anthropic.UpstreamHeader(h)
	if len(h) != 2 || h.Get("Authorization") != "Bearer sk-ant-1" || h.Get("X-Other") != "kept" {
		t.Errorf("headers %v", h)
	}
	// A bearer token the client sent (ANTHROPIC_AUTH_TOKEN) wins.
	h = http.Header{}
	h.Set("Authorization", "Bearer tok")
	h.Set("X-Api-Key", "sk-ant-1")
	anthropic.UpstreamHeader(h)
	if len(h) != 1 || h.Get("Authorization") != "Bearer tok" {
		t.Errorf("headers %v", h)
	}
}
