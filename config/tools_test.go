package config

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"testing"
)

func TestToolsFiles(t *testing.T) {
	tests := []struct {
		name  string
		files []string
		names []string
		// defs are the expected definitions, by index; unchecked when nil.
		defs map[int]string
	}{
		{
			name:  "json_one_tool",
			files: []string{"tools/search.json"},
			names: []string{"search"},
			defs: map[int]string{0: `{"type":"function","function":{"name":"search","description":"Search the web.",` +
				`"parameters":{"type":"object","properties":{"q":{"type":"string","description":"查询"}},"required":["q"]},"strict":true}}`},
		},
		{
			name:  "json_array_openai_and_bare",
			files: []string{"tools/many.json"},
			names: []string{"get_weather", "calc"},
			defs: map[int]string{
				0: `{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}}`,
				// The bare form is wrapped; its bytes, escapes included, kept.
				1: `{"type":"function","function":{"name":"calc","description":"Evaluate \"2+2\"\u2026","parameters":{"type":"object"}}}`,
			},
		},
		{
			name:  "markdown_blocks",
			files: []string{"tools/tools.md"},
			names: []string{"lookup", "remind", "notify", "four_backticks"},
			defs: map[int]string{
				0: `{"type":"function","function":{"name":"lookup","description":"Look up a record."}}`,
				1: `{"type":"function","function":{"name":"remind","parameters":{"type":"object"}}}`,
				2: `{"type":"function","function":{"name":"notify"}}`,
			},
		},
		{
			name:  "files_in_order",
			files: []string{"tools/tools.md", "tools/search.json"},
			names: []string{"lookup", "remind", "notify", "four_backticks", "search"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := (&Route{Protocol: "openai", Tools: tt.files}).Load("testdata")
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			if !slices.Equal(s.ToolNames, tt.names) {
				t.Errorf("tool names = %q, want %q", s.ToolNames, tt.names)
			}
			for i, def := range s.Tools {
				if !json.Valid(def) {
					t.Errorf("tool %d is not valid JSON: %s", i, def)
				}
				if want, ok := tt.defs[i]; ok && string(def) != want {
					t.Errorf("tool %d =\n %s\nwant\n %s", i, def, want)
				}
			}
			if len(s.Shaper.Tools) != len(tt.names) {
				t.Errorf("shaper has %d tools, want %d", len(s.Shaper.Tools), len(tt.names))
			}
		})
	}
}

func TestAskUserIsSpec(t *testing.T) {
	// testdata/spec002_s6_ask_user.json is the JSON block of specs/002 §6,
	// copied byte for byte.
	spec, err := os.ReadFile("testdata/spec002_s6_ask_user.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Run("embedded_bytes", func(t *testing.T) {
		if !bytes.Equal(askUserJSON, spec) {
			t.Errorf("builtin/ask_user.json differs from the spec's schema")
		}
	})
	t.Run("sent_upstream", func(t *testing.T) {
		s, err := (&Route{Protocol: "skillpet", Tool: []string{"ask_user"}}).Load("")
		if err != nil {
			t.Fatal(err)
		}
		var want bytes.Buffer
		if err := json.Compact(&want, spec); err != nil {
			t.Fatal(err)
		}
		if len(s.Tools) != 1 || !bytes.Equal(s.Tools[0], want.Bytes()) {
			t.Errorf("ask_user sent upstream =\n %s\nwant the spec's schema compacted\n %s", s.Tools, want.Bytes())
		}
		if !slices.Equal(s.ToolNames, []string{"ask_user"}) {
			t.Errorf("tool names = %q", s.ToolNames)
		}
	})
	t.Run("schema_shape", func(t *testing.T) {
		// The parts the skillpet encoder relies on (specs/002 §5, §6).
		var v struct {
			Type     string `json:"type"`
			Function struct {
				Name       string `json:"name"`
				Parameters struct {
					Required   []string `json:"required"`
					Properties struct {
						Questions struct {
							Items struct {
								Required []string `json:"required"`
							} `json:"items"`
						} `json:"questions"`
					} `json:"properties"`
				} `json:"parameters"`
			} `json:"function"`
		}
		if err := json.Unmarshal(askUserJSON, &v); err != nil {
			t.Fatal(err)
		}
		p := v.Function.Parameters
		if v.Type != "function" || v.Function.Name != "ask_user" || !slices.Equal(p.Required, []string{"questions"}) ||
			!slices.Equal(p.Properties.Questions.Items.Required, []string{"id", "prompt"}) {
			t.Errorf("ask_user schema = %+v", v)
		}
	})
}

func TestJSONBlocks(t *testing.T) {
	tests := []struct {
		name  string
		md    string
		lines []int
		texts []string
		err   string
	}{
		{name: "none", md: "# x\n\ntext ```json``` inline\n"},
		{name: "one", md: "a\n```json\n{}\n```\n", lines: []int{2}, texts: []string{"{}\n"}},
		{name: "crlf", md: "```json\r\n{\"a\":1}\r\n```\r\n", lines: []int{1}, texts: []string{"{\"a\":1}\n"}},
		{name: "case_and_info", md: "```JSON title=x\n1\n```\n", lines: []int{1}, texts: []string{"1\n"}},
		{name: "jsonc_is_not_json", md: "```jsonc\n1\n```\n"},
		{name: "other_language_skipped", md: "````md\n```json\n1\n```\n````\n```json\n2\n```\n", lines: []int{6}, texts: []string{"2\n"}},
		{name: "longer_fence", md: "````json\n```\n````\n", lines: []int{1}, texts: []string{"```\n"}},
		{name: "tilde", md: "~~~json\n3\n~~~\n", lines: []int{1}, texts: []string{"3\n"}},
		{name: "tilde_not_closed_by_backticks", md: "~~~json\n```\n~~~", lines: []int{1}, texts: []string{"```\n"}},
		{name: "indent_four_is_code", md: "    ```json\n    1\n    ```\n"},
		{name: "closing_with_info_does_not_close", md: "```json\n1\n```json\n```\n", lines: []int{1}, texts: []string{"1\n```json\n"}},
		{name: "empty_block", md: "```json\n```\n", lines: []int{1}, texts: []string{""}},
		{name: "unclosed", md: "x\n\n```json\n{", err: "```json block at line 3 is not closed"},
		{name: "unclosed_other_language_ok", md: "```go\nfunc"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			blocks, err := jsonBlocks([]byte(tt.md))
			if tt.err != "" {
				if err == nil || err.Error() != tt.err {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var lines []int
			var texts []string
			for _, b := range blocks {
				lines = append(lines, b.line)
				texts = append(texts, string(b.content))
			}
			if !slices.Equal(lines, tt.lines) || !slices.Equal(texts, tt.texts) {
				t.Errorf("blocks at %v %q, want %v %q", lines, texts, tt.lines, tt.texts)
			}
		})
	}
}
