package caddymodule

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

// TestDefaultCaddyfileAskUserPrompt: every route of the shipped Caddyfile
// that offers the ask_user tool tells the model, in its system prompt,
// when to call it (specs/002 §7.1: every question through the form, at
// least three options with free text allowed, no questions in the text;
// issue 22 found the shipped prompts without it).
func TestDefaultCaddyfileAskUserPrompt(t *testing.T) {
	t.Chdir("..") // the Caddyfile names its files from the repository's root
	src, err := os.ReadFile("Caddyfile")
	if err != nil {
		t.Fatal(err)
	}
	var cfg any
	if err := json.Unmarshal([]byte(adapt(t, string(src))), &cfg); err != nil {
		t.Fatal(err)
	}
	routes := 0
	for _, h := range llmStreamHandlers(cfg) {
		tools, _ := h["tool"].([]any)
		if !slices.Contains(tools, any("ask_user")) {
			continue
		}
		routes++
		var prompt strings.Builder
		files, _ := h["system_prompt"].([]any)
		for _, f := range files {
			b, err := os.ReadFile(f.(string))
			if err != nil {
				t.Fatal(err)
			}
			prompt.Write(b)
		}
		if text, ok := h["system_prompt_text"].(string); ok {
			prompt.WriteString(text)
		}
		for _, rule := range []string{"call the `ask_user` tool", "at least three", "`allowFreeText` to true", "Never ask in your text"} {
			if !strings.Contains(prompt.String(), rule) {
				t.Errorf("a route with ask_user (prompts %v) does not say %q", files, rule)
			}
		}
	}
	if routes == 0 {
		t.Fatal("no route of the Caddyfile offers ask_user")
	}
}

// llmStreamHandlers returns every llm_stream handler in an adapted config.
func llmStreamHandlers(v any) []map[string]any {
	var out []map[string]any
	switch v := v.(type) {
	case map[string]any:
		if v["handler"] == "llm_stream" {
			out = append(out, v)
		}
		for _, e := range v {
			out = append(out, llmStreamHandlers(e)...)
		}
	case []any:
		for _, e := range v {
			out = append(out, llmStreamHandlers(e)...)
		}
	}
	return out
}
