package config

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
)

func TestDurationJSON(t *testing.T) {
	tests := []struct {
		name string
		json string
		want time.Duration
		err  string
	}{
		{name: "string_seconds", json: `"15s"`, want: 15 * time.Second},
		{name: "string_compound", json: `"1m30s"`, want: 90 * time.Second},
		{name: "string_fraction", json: `"1.5h"`, want: 90 * time.Minute},
		{name: "string_days", json: `"2d"`, want: 48 * time.Hour},
		{name: "string_days_and_hours", json: `"1d12h"`, want: 36 * time.Hour},
		{name: "string_fraction_days", json: `"0.5d"`, want: 12 * time.Hour},
		{name: "string_zero", json: `"0"`, want: 0},
		{name: "string_negative", json: `"-5s"`, want: -5 * time.Second},
		{name: "integer_nanoseconds", json: `1000000000`, want: time.Second},
		{name: "integer_zero", json: `0`, want: 0},
		{name: "string_no_unit", json: `"15"`, err: "missing unit"},
		{name: "string_garbage", json: `"soon"`, err: "invalid duration"},
		{name: "string_bad_days", json: `"xd"`, err: "bad number of days"},
		{name: "string_too_long", json: `"` + strings.Repeat("1", 1025) + `s"`, err: "longer than 1024"},
		{name: "boolean", json: `true`, err: "want a string"},
		{name: "float", json: `1.5`, err: "want a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d Duration
			err := json.Unmarshal([]byte(tt.json), &d)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if time.Duration(d) != tt.want {
				t.Errorf("got %v, want %v", time.Duration(d), tt.want)
			}
		})
	}
	t.Run("round_trip", func(t *testing.T) {
		b, err := json.Marshal(Route{Heartbeat: dur(15 * time.Second)})
		if err != nil {
			t.Fatal(err)
		}
		if want := `{"heartbeat":15000000000}`; string(b) != want {
			t.Errorf("marshal = %s, want %s", b, want)
		}
		var r Route
		if err := json.Unmarshal(b, &r); err != nil || r.Heartbeat == nil || time.Duration(*r.Heartbeat) != 15*time.Second {
			t.Errorf("unmarshal: %v %v", err, r.Heartbeat)
		}
	})
}

func TestRouteJSON(t *testing.T) {
	// The JSON config a `caddy adapt` of a full llm_stream block gives.
	const cfg = `{
		"request_format": "aisdk",
		"system_prompt": ["prompts/base.md", "prompts/blank.md", "prompts/bom_crlf.md"],
		"system_prompt_text": "Today is {time.now.year}.\n",
		"system_prompt_mode": "append",
		"tools": ["tools/tools.md"],
		"tool": ["ask_user"],
		"tool_choice": "auto",
		"model": "gpt-4o-mini",
		"max_request_body": 1000,
		"format": "aiplan",
		"protocol": "aisdk",
		"heartbeat": "0s",
		"idle_timeout": 5000000000,
		"provider": "azure",
		"endpoint_id": 3,
		"reasoning_title": "Plan",
		"fallback_text": "Try again.",
		"think_tags": "prefilled",
		"text_tools": "hermes",
		"limits": {"max_sse_line": 4096, "max_reply": 1048576, "max_tag": 32, "max_block": 1024, "max_key": 64, "max_depth": 16, "max_tool_calls": 4}
	}`
	var r Route
	dec := json.NewDecoder(strings.NewReader(cfg))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&r); err != nil {
		t.Fatalf("decoding: %v", err)
	}
	s, err := r.Load("testdata")
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	const prompt = "You are a helpful assistant for {http.request.header.X-User}.\n" +
		"Answer in JSON like {\"answer\": \"...\"}.\n\n" +
		"## Rules\r\n\r\n- Be brief.\n\n" +
		"Today is {time.now.year}."
	if s.Prompt != prompt {
		t.Errorf("prompt =\n%q\nwant\n%q", s.Prompt, prompt)
	}
	checks := []struct {
		name      string
		got, want any
	}{
		{"request_format", s.RequestFormat, "aisdk"},
		{"system_prompt_mode", s.PromptMode, "append"},
		{"tools", len(s.Tools), 5},
		{"tool_choice", s.ToolChoice, "auto"},
		{"model", s.Model, "gpt-4o-mini"},
		{"max_request_body", s.MaxRequestBody, int64(1000)},
		{"format", s.Format, "aiplan"},
		{"protocol", s.Protocol, "aisdk"},
		{"heartbeat", s.Heartbeat, time.Duration(0)},
		{"idle_timeout", s.IdleTimeout, 5 * time.Second},
		{"provider", s.Provider, "azure"},
		{"endpoint_id", s.EndpointID, 3},
		{"reasoning_title", s.ReasoningTitle, "Plan"},
		{"fallback_text", s.FallbackText, "Try again."},
		{"think_tags", s.ThinkTags, transform.ThinkTagsPrefilled},
		{"text_tools", s.TextTools, "hermes"},
		{"parser think_tags", s.ParserOptions().ThinkTags, transform.ThinkTagsPrefilled},
		{"parser text_tools", s.ParserOptions().TextTools, "hermes"},
		{"limits.max_sse_line", s.Limits.MaxSSELineBytes, 4096},
		{"limits.max_reply", s.Limits.MaxReplyBytes, int64(1048576)},
		{"limits.max_tag", s.Limits.MaxTagBytes, 32},
		{"limits.max_block", s.Limits.MaxBlockBytes, 1024},
		{"limits.max_key", s.Limits.MaxKeyBytes, 64},
		{"limits.max_depth", s.Limits.MaxDepth, 16},
		{"limits.max_tool_calls", s.Limits.MaxToolCalls, 4},
	}
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			if c.got != c.want {
				t.Errorf("got %v, want %v", c.got, c.want)
			}
		})
	}
}

func TestPrompt(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		text  string
		want  string
	}{
		{name: "none", want: ""},
		{name: "text_only", text: "Be brief.\n\n", want: "Be brief."},
		{name: "text_leading_space_kept", text: "  indented", want: "  indented"},
		{name: "file_trailing_newlines_trimmed", files: []string{"prompts/base.md"},
			want: "You are a helpful assistant for {http.request.header.X-User}.\nAnswer in JSON like {\"answer\": \"...\"}."},
		{name: "bom_removed_crlf_inside_kept", files: []string{"prompts/bom_crlf.md"}, want: "## Rules\r\n\r\n- Be brief."},
		{name: "blank_file_skipped", files: []string{"prompts/blank.md", "prompts/bom_crlf.md", "prompts/blank.md"}, text: "T",
			want: "## Rules\r\n\r\n- Be brief.\n\nT"},
		{name: "same_file_twice", files: []string{"prompts/bom_crlf.md", "prompts/bom_crlf.md"},
			want: "## Rules\r\n\r\n- Be brief.\n\n## Rules\r\n\r\n- Be brief."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := loadPrompt(tt.files, tt.text, "testdata")
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("prompt = %q, want %q", got, tt.want)
			}
		})
	}
}
