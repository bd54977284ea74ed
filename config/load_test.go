package config

import (
	"encoding/json"
	"errors"
	"io/fs"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/request"
)

func dur(d time.Duration) *Duration { v := Duration(d); return &v }

func TestLoadDefaults(t *testing.T) {
	s, err := (&Route{Protocol: "gymbro"}).Load("")
	gymbro, _ := protocol.Lookup("gymbro")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := &Settings{
		RequestFormat:  "openai",
		PromptMode:     "prepend",
		Format:         "auto",
		Protocol:       "gymbro",
		Request:        request.OpenAI,
		Proto:          gymbro,
		MaxRequestBody: 8_000_000,
		Heartbeat:      15 * time.Second,
		IdleTimeout:    120 * time.Second,
		Provider:       "openai",
		ReasoningTitle: "Thought",
		FallbackText:   transform.DefaultFallbackText,
		Limits:         transform.Limits{}.WithDefaults(),
		Shaper:         request.Shaper{Format: request.OpenAI, Mode: "prepend"},
	}
	if !reflect.DeepEqual(s, want) {
		t.Errorf("defaults:\n got %+v\nwant %+v", s, want)
	}
	opts := s.ParserOptions()
	if opts.ReasoningTitle != "Thought" || opts.FallbackText != transform.DefaultFallbackText || opts.Limits != s.Limits {
		t.Errorf("ParserOptions = %+v", opts)
	}
}

func TestLoadSetValues(t *testing.T) {
	r := &Route{
		RequestFormat:    "skillpet",
		SystemPrompt:     []string{"prompts/base.md"},
		SystemPromptText: "Inline.",
		SystemPromptMode: "replace",
		Tools:            []string{"tools/search.json"},
		Tool:             []string{"ask_user"},
		ToolChoice:       "search",
		Model:            "deepseek-chat",
		MaxRequestBody:   1 << 20,
		Format:           "thinkingml",
		Protocol:         "skillpet",
		Heartbeat:        dur(0),
		IdleTimeout:      dur(30 * time.Second),
		Provider:         "deepseek",
		EndpointID:       7,
		ReasoningTitle:   "思考",
		FallbackText:     "Sorry.",
		Limits:           transform.Limits{MaxTagBytes: 128},
	}
	s, err := r.Load("testdata")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if s.Heartbeat != 0 {
		t.Errorf("heartbeat 0 must stay 0 (disabled), got %v", s.Heartbeat)
	}
	if s.IdleTimeout != 30*time.Second || s.MaxRequestBody != 1<<20 || s.Provider != "deepseek" || s.EndpointID != 7 {
		t.Errorf("settings not taken: %+v", s)
	}
	if s.Limits.MaxTagBytes != 128 || s.Limits.MaxDepth != transform.DefaultMaxDepth {
		t.Errorf("limits = %+v, want max_tag 128 and defaults", s.Limits)
	}
	if !slices.Equal(s.ToolNames, []string{"search", "ask_user"}) {
		t.Errorf("tool names = %q", s.ToolNames)
	}
	sh := s.Shaper
	if sh.Format != request.Skillpet || sh.Mode != "replace" || sh.ToolChoice != "search" || sh.Model != "deepseek-chat" || len(sh.Tools) != 2 {
		t.Errorf("shaper = %+v", sh)
	}
	if !strings.HasPrefix(s.Prompt, "You are a helpful assistant for {http.request.header.X-User}.") || !strings.HasSuffix(s.Prompt, "\n\nInline.") {
		t.Errorf("prompt = %q", s.Prompt)
	}
	// The shaper works with what Load built.
	out, _, err := sh.Rewrite([]byte(`{"projectId":"p","message":"hi"}`), s.Prompt)
	if err != nil || !json.Valid(out) {
		t.Fatalf("Rewrite with the loaded shaper: %v %s", err, out)
	}
	if r.Heartbeat == nil || *r.Heartbeat != 0 || r.Format != "thinkingml" {
		t.Errorf("Load modified the route: %+v", r)
	}
}

func TestLoadErrors(t *testing.T) {
	tests := []struct {
		name    string
		route   Route
		setting string
		// msg is the whole message, or its start when it ends in "…".
		msg string
	}{
		// The lists come from the tables, whose rows grow: list(…) spells
		// them, and the start of each message is checked here.
		{"protocol_missing", Route{}, "protocol", "protocol is required (want " + list(protocols) + ")"},
		{"protocol_unknown", Route{Protocol: "gymbo"}, "protocol", `protocol: unknown protocol "gymbo" (want ` + list(protocols) + ")"},
		{"format_unknown", Route{Protocol: "openai", Format: "xml"}, "format", `format: unknown format "xml" (want ` + list(formats) + ")"},
		{"think_tags_unknown", Route{Protocol: "openai", ThinkTags: "on"}, "think_tags", `think_tags: unknown setting "on" (want auto, prefilled or off)`},
		{"think_prefilled_bad", Route{Protocol: "openai", ThinkPrefilled: []string{"ok", "a(b"}}, "think_prefilled", `think_prefilled: bad pattern "a(b": …`},
		{"think_prefilled_empty", Route{Protocol: "openai", ThinkPrefilled: []string{""}}, "think_prefilled", "think_prefilled: an empty pattern would match every model"},
		{"think_prefilled_not_auto", Route{Protocol: "openai", ThinkTags: "prefilled", ThinkPrefilled: []string{"x"}}, "think_prefilled", "think_prefilled applies to think_tags auto, not prefilled"},
		{"text_tools_unknown", Route{Protocol: "openai", TextTools: "qwen"}, "text_tools", `text_tools: unknown convention "qwen" (want ` + list(textTools) + ")"},
		{"request_format_unknown", Route{Protocol: "openai", RequestFormat: "xml"}, "request_format", `request_format: unknown request format "xml" (want ` + list(requestFormats) + ")"},
		{"mode_unknown", Route{Protocol: "openai", SystemPromptMode: "insert"}, "system_prompt_mode", `system_prompt_mode: unknown mode "insert" (want prepend, append or replace)`},
		{"skillpet_requires_model", Route{Protocol: "skillpet", RequestFormat: "skillpet"}, "model", "request_format skillpet requires model"},
		{"aisdk_requires_model", Route{Protocol: "aisdk", RequestFormat: "aisdk"}, "model", "request_format aisdk requires model"},
		{"max_request_body_negative", Route{Protocol: "openai", MaxRequestBody: -1}, "max_request_body", "max_request_body must not be negative (got -1)"},
		{"heartbeat_negative", Route{Protocol: "openai", Heartbeat: dur(-time.Second)}, "heartbeat", "heartbeat must not be negative (got -1s)"},
		{"idle_timeout_negative", Route{Protocol: "openai", IdleTimeout: dur(-time.Minute)}, "idle_timeout", "idle_timeout must not be negative (got -1m0s)"},
		{"limit_negative", Route{Protocol: "openai", Limits: transform.Limits{MaxDepth: -2}}, "limits.max_depth", "limits.max_depth must not be negative (got -2)"},
		{"system_prompt_missing", Route{Protocol: "openai", SystemPrompt: []string{"prompts/x.md"}}, "system_prompt", "system_prompt: reading prompts/x.md: open testdata/prompts/x.md: no such file or directory"},
		{"system_prompt_not_utf8", Route{Protocol: "openai", SystemPrompt: []string{"prompts/latin1.md"}}, "system_prompt", "system_prompt: prompts/latin1.md is not valid UTF-8"},
		{"system_prompt_text_not_utf8", Route{Protocol: "openai", SystemPromptText: "caf\xe9"}, "system_prompt_text", "system_prompt_text is not valid UTF-8"},
		{"tools_missing", Route{Protocol: "openai", Tools: []string{"tools/x.json"}}, "tools", "tools: reading tools/x.json: open testdata/tools/x.json: no such file or directory"},
		{"tools_invalid_json", Route{Protocol: "openai", Tools: []string{"tools/invalid.json"}}, "tools", "tools: tools/invalid.json: invalid JSON: unexpected end of JSON input"},
		{"tools_empty_array", Route{Protocol: "openai", Tools: []string{"tools/empty.json"}}, "tools", "tools: tools/empty.json: holds no tool definition"},
		{"tools_no_name", Route{Protocol: "openai", Tools: []string{"tools/noname.json"}}, "tools", "tools: tools/noname.json: not a tool definition: the function has no name"},
		{"tools_bad_name", Route{Protocol: "openai", Tools: []string{"tools/badname.json"}}, "tools", `tools: tools/badname.json: not a tool definition: function name "my tool" must be 1 to 64 letters, digits, '_' or '-' (OpenAI's rule)`},
		{"tools_wrong_type", Route{Protocol: "openai", Tools: []string{"tools/wrongtype.json"}}, "tools", `tools: tools/wrongtype.json: not a tool definition: "type" without "function"…`},
		{"tools_function_string", Route{Protocol: "openai", Tools: []string{"tools/fnstring.json"}}, "tools", `tools: tools/fnstring.json: not a tool definition: "function" must be an object, got a string`},
		{"tools_bad_parameters", Route{Protocol: "openai", Tools: []string{"tools/badparams.json"}}, "tools", `tools: tools/badparams.json: not a tool definition: p: parameters must be a JSON Schema object, got a string`},
		{"tools_array_element", Route{Protocol: "openai", Tools: []string{"tools/array_bad.json"}}, "tools", "tools: tools/array_bad.json: tool 2: not a tool definition: want a JSON object, got a number"},
		{"tools_md_bad_block", Route{Protocol: "openai", Tools: []string{"tools/bad_block.md"}}, "tools", "tools: tools/bad_block.md: ```json block at line 9: not a tool definition: the function has no name"},
		{"tools_md_bad_json", Route{Protocol: "openai", Tools: []string{"tools/bad_json.md"}}, "tools", "tools: tools/bad_json.md: ```json block at line 1: invalid JSON: invalid character '}'…"},
		{"tools_md_unclosed", Route{Protocol: "openai", Tools: []string{"tools/unclosed.md"}}, "tools", "tools: tools/unclosed.md: ```json block at line 1 is not closed"},
		{"tools_md_none", Route{Protocol: "openai", Tools: []string{"tools/none.md"}}, "tools", "tools: tools/none.md: holds no ```json block with a tool definition"},
		{"tools_duplicate_across_files", Route{Protocol: "openai", Tools: []string{"tools/search.json", "tools/dup_search.md"}}, "tools", `tools: duplicate tool name "search" (tools/search.json and tools/dup_search.md)`},
		{"tools_duplicate_same_file_twice", Route{Protocol: "openai", Tools: []string{"tools/many.json", "tools/many.json"}}, "tools", `tools: duplicate tool name "get_weather" (tools/many.json and tools/many.json)`},
		{"tool_duplicate_with_file", Route{Protocol: "openai", Tools: []string{"tools/ask_user.json"}, Tool: []string{"ask_user"}}, "tool", `tool: duplicate tool name "ask_user" (tools/ask_user.json and built-in ask_user)`},
		{"tool_duplicate_builtin", Route{Protocol: "openai", Tool: []string{"ask_user", "ask_user"}}, "tool", `tool: duplicate tool name "ask_user" (built-in ask_user and built-in ask_user)`},
		{"tool_unknown", Route{Protocol: "openai", Tool: []string{"web_search"}}, "tool", `tool: unknown built-in tool "web_search" (known: ask_user)`},
		{"tool_choice_unknown", Route{Protocol: "openai", Tools: []string{"tools/search.json"}, Tool: []string{"ask_user"}, ToolChoice: "foo"}, "tool_choice", `tool_choice: "foo" names no configured tool (have search, ask_user)`},
		{"tool_choice_no_tools", Route{Protocol: "openai", ToolChoice: "search"}, "tool_choice", `tool_choice: "search" names no configured tool (have none)`},
		{"tools_schema_does_not_compile", Route{Protocol: "openai", Tools: []string{"tools/badschema.json"}}, "tools", `tools: tools/badschema.json: tool "broken": parameters: "schema#" is not valid against metaschema…`},
		{"validate_retries_negative", Route{Protocol: "openai", Validate: &Validate{Retries: intp(-1)}}, "validate.retries", "validate.retries: -1 is out of range (0 to 5)"},
		{"validate_retries_too_many", Route{Protocol: "openai", Validate: &Validate{Retries: intp(6)}}, "validate.retries", "validate.retries: 6 is out of range (0 to 5)"},
		{"validate_mode_unknown", Route{Protocol: "openai", Validate: &Validate{ExpectedMode: "artefact"}}, "validate.expected_mode", `validate.expected_mode: unknown mode "artefact" (want answer, artifact or clarify, or a placeholder)`},
		{"validate_artifact_tools_empty", Route{Protocol: "openai", Validate: &Validate{ArtifactTools: []string{""}}}, "validate.artifact_tools", "validate.artifact_tools: empty tool name"},
		{"validate_artifact_tools_wrong_format", Route{Protocol: "openai", Format: "aiplan", Validate: &Validate{ArtifactTools: []string{"x"}}}, "validate.artifact_tools", "validate.artifact_tools: applies to format final_result or auto, not aiplan"},
		{"validate_expected_mode_wrong_format", Route{Protocol: "openai", Format: "thinkingml", Validate: &Validate{ExpectedMode: "answer"}}, "validate.expected_mode", "validate.expected_mode: applies to format final_result or auto, not thinkingml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.route.Load("testdata")
			if err == nil {
				t.Fatalf("Load succeeded: %+v", s)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if e.Setting != tt.setting {
				t.Errorf("Setting = %q, want %q", e.Setting, tt.setting)
			}
			if !strings.Contains(err.Error(), tt.setting) {
				t.Errorf("message %q does not name the setting %q", err, tt.setting)
			}
			if want, ok := strings.CutSuffix(tt.msg, "…"); ok {
				if !strings.HasPrefix(err.Error(), want) {
					t.Errorf("message = %q\nwant it to start %q", err, want)
				}
			} else if err.Error() != tt.msg {
				t.Errorf("message = %q\n   want %q", err, tt.msg)
			}
		})
	}
}

func intp(n int) *int { return &n }

func TestLoadValidate(t *testing.T) {
	tests := []struct {
		name  string
		route Route
		want  *ValidateSettings
	}{
		{"off", Route{Protocol: "openai"}, nil},
		{"defaults", Route{Protocol: "openai", Validate: &Validate{}}, &ValidateSettings{Retries: 1, Terminal: true}},
		{"set", Route{Protocol: "aisdk", Format: "final_result", Validate: &Validate{Retries: intp(0), ArtifactTools: []string{"generate_pptx", "render_pdf"}, ExpectedMode: "artifact"}},
			&ValidateSettings{ArtifactTools: []string{"generate_pptx", "render_pdf"}, ExpectedMode: "artifact", Terminal: true}},
		{"placeholder", Route{Protocol: "openai", Validate: &Validate{ExpectedMode: "{http.request.header.X-Expected-Mode}"}},
			&ValidateSettings{Retries: 1, ExpectedMode: "{http.request.header.X-Expected-Mode}", Terminal: true}},
		{"tools_only_format", Route{Protocol: "openai", Format: "aiplan", Validate: &Validate{Retries: intp(2), ShowRetries: true}}, &ValidateSettings{Retries: 2, ShowRetries: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := tt.route.Load("testdata")
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(s.Validate, tt.want) {
				t.Errorf("Validate = %+v, want %+v", s.Validate, tt.want)
			}
		})
	}
}

func TestExpectedModeFor(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string
		ok   bool
	}{{"artifact", "artifact", true}, {" answer ", "answer", true}, {"", "", true}, {"Artifact", "Artifact", false}, {"x", "x", false}} {
		if got, ok := ExpectedModeFor(tt.in); got != tt.want || ok != tt.ok {
			t.Errorf("ExpectedModeFor(%q) = %q, %v", tt.in, got, ok)
		}
	}
}

func TestLoadFileErrorUnwraps(t *testing.T) {
	_, err := (&Route{Protocol: "openai", SystemPrompt: []string{"nope.md"}}).Load(t.TempDir())
	if !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("error %v does not wrap fs.ErrNotExist", err)
	}
}

func TestLoadAbsolutePath(t *testing.T) {
	dir := t.TempDir()
	s, err := (&Route{Protocol: "openai", SystemPromptText: "x"}).Load(dir)
	if err != nil || s.Prompt != "x" {
		t.Fatalf("Load: %v %+v", err, s)
	}
	abs, err := (&Route{Protocol: "openai", SystemPrompt: []string{mustAbs(t, "testdata/prompts/base.md")}}).Load(dir)
	if err != nil {
		t.Fatalf("absolute path not used as is: %v", err)
	}
	if !strings.HasPrefix(abs.Prompt, "You are") {
		t.Errorf("prompt = %q", abs.Prompt)
	}
}

func mustAbs(t *testing.T, path string) string {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
