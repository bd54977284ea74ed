package request

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

const (
	askUser = `{"type":"function","function":{"name":"ask_user","parameters":{"type":"object"}}}`
	search  = `{"type":"function","function":{"name":"search","description":"web"}}`
)

func TestRewriteOpenAI(t *testing.T) {
	tests := []struct {
		name   string
		shaper Shaper
		prompt string
		body   string
		// msgs are the upstream messages as "role:content".
		msgs []string
		// tools are the upstream tool names in order (nil: not checked).
		tools []string
		// choice is the upstream tool_choice, raw ("": absent).
		choice string
		info   Info
		// contains are byte strings the output must hold: the client's
		// bytes that must survive untouched.
		contains []string
	}{
		{
			name:   "prepend_no_system",
			prompt: "P",
			body:   `{"model":"gpt","messages":[{"role":"user","content":"hi"}]}`,
			msgs:   []string{"system:P", "user:hi"},
			info:   Info{Model: "gpt"},
		},
		{
			name:   "prepend_several_system",
			prompt: "P",
			body:   `{"messages":[{"role":"system","content":"s1"},{"role":"system","content":"s2"},{"role":"user","content":"u"}]}`,
			msgs:   []string{"system:P", "system:s1", "system:s2", "user:u"},
		},
		{
			name:   "append_several_system",
			shaper: Shaper{Mode: ModeAppend},
			prompt: "P",
			body:   `{"messages":[{"role":"system","content":"s1"},{"role":"system","content":"s2"},{"role":"user","content":"u"}]}`,
			msgs:   []string{"system:s1", "system:s2", "system:P", "user:u"},
		},
		{
			name:   "append_no_system",
			shaper: Shaper{Mode: ModeAppend},
			prompt: "P",
			body:   `{"messages":[{"role":"user","content":"u"},{"role":"assistant","content":"a"}]}`,
			msgs:   []string{"system:P", "user:u", "assistant:a"},
		},
		{
			name:   "append_non_leading_system",
			shaper: Shaper{Mode: ModeAppend},
			prompt: "P",
			body:   `{"messages":[{"role":"system","content":"s1"},{"role":"user","content":"u1"},{"role":"system","content":"s2"},{"role":"user","content":"u2"}]}`,
			msgs:   []string{"system:s1", "user:u1", "system:s2", "system:P", "user:u2"},
		},
		{
			name:   "append_last_is_system",
			shaper: Shaper{Mode: ModeAppend},
			prompt: "P",
			body:   "{\"messages\": [\n  {\"role\":\"user\",\"content\":\"u\"},\n  {\"role\":\"system\",\"content\":\"s\"}\n]}",
			msgs:   []string{"user:u", "system:s", "system:P"},
		},
		{
			name:   "replace_several_system",
			shaper: Shaper{Mode: ModeReplace},
			prompt: "P",
			body:   "{\"messages\":[\n\t{\"role\":\"system\",\"content\":\"s1\"},\n\t{\"role\":\"user\",\"content\":\"u\"},\n\t{\"role\":\"system\",\"content\":\"s2\"}\n]}",
			msgs:   []string{"system:P", "user:u"},
			// The kept message keeps the whitespace before it.
			contains: []string{"\n\t{\"role\":\"user\",\"content\":\"u\"}\n]"},
		},
		{
			name:   "replace_no_system",
			shaper: Shaper{Mode: ModeReplace},
			prompt: "P",
			body:   `{"messages":[{"role":"user","content":"u"}]}`,
			msgs:   []string{"system:P", "user:u"},
		},
		{
			name:   "replace_only_system",
			shaper: Shaper{Mode: ModeReplace},
			prompt: "P",
			body:   `{"messages":[{"role":"system","content":"s1"},{"role":"system","content":"s2"}]}`,
			msgs:   []string{"system:P"},
		},
		{
			name:   "replace_duplicate_role_key",
			shaper: Shaper{Mode: ModeReplace},
			prompt: "P",
			// The upstream keeps the last "role": this is a system message.
			body: `{"messages":[{"role":"user","role":"system","content":"sneaky"},{"role":"user","content":"u"}]}`,
			msgs: []string{"system:P", "user:u"},
		},
		{
			name:   "replace_empty_prompt_strips",
			shaper: Shaper{Mode: ModeReplace},
			body:   `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`,
			msgs:   []string{"user:u"},
		},
		{
			name: "prepend_empty_prompt_inserts_nothing",
			body: `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"u"}]}`,
			msgs: []string{"system:s", "user:u"},
		},
		{
			name:   "empty_messages",
			prompt: "P",
			body:   `{"messages":[ ]}`,
			msgs:   []string{"system:P"},
		},
		{
			name:   "prompt_escaped",
			prompt: "say \"hi\"\n\t</final> \u2028 {http.x}",
			body:   `{"messages":[]}`,
			msgs:   []string{"system:say \"hi\"\n\t</final> \u2028 {http.x}"},
		},
		{
			name:   "untouched_bytes_kept",
			prompt: "P",
			body: "\r\n{ \"temperature\" :\t1.0e+2 ,\"x\\u00e9\":\"caf\\u00e9 \\ud83d\\ude00 \u00e9\",\n" +
				"  \"meta\": {\"a\": [1, {\"b\": null}], \"a\": \"dup\"},\"meta\":\"dup2\",\n" +
				"  \"messages\" : [ {\"role\":\"user\",\"content\":\"\\u0068i\",\"name\":\"n\"} ] ,\n" +
				"  \"top_p\": -0.5E-3, \"logit_bias\": {}, \"stop\": [\"\\n\", \"\\\"\"]\r\n}\r\n",
			msgs: []string{"system:P", "user:hi"},
			contains: []string{
				"\r\n{ \"temperature\" :\t1.0e+2 ,\"x\\u00e9\":\"caf\\u00e9 \\ud83d\\ude00 \u00e9\",\n",
				"  \"meta\": {\"a\": [1, {\"b\": null}], \"a\": \"dup\"},\"meta\":\"dup2\",\n",
				"  \"messages\" : [",
				" {\"role\":\"user\",\"content\":\"\\u0068i\",\"name\":\"n\"} ] ,\n",
				// New members go before the closing whitespace.
				"\"stop\": [\"\\n\", \"\\\"\"],\"stream\":true,\"stream_options\":{\"include_usage\":true}\r\n}\r\n",
			},
		},
		{
			name:   "escaped_messages_key",
			prompt: "P",
			body:   `{"mess\u0061ges":[{"role":"user","content":"u"}]}`,
			msgs:   []string{"system:P", "user:u"},
		},
		{
			name:   "tools_added",
			shaper: Shaper{Tools: [][]byte{[]byte(askUser), []byte(search)}},
			body:   `{"messages":[]}`,
			tools:  []string{"ask_user", "search"},
		},
		{
			name:   "tools_null_replaced",
			shaper: Shaper{Tools: [][]byte{[]byte(askUser)}},
			body:   `{"messages":[],"tools":null}`,
			tools:  []string{"ask_user"},
		},
		{
			name:   "tools_replaced_and_appended",
			shaper: Shaper{Tools: [][]byte{[]byte(askUser), []byte(search)}},
			body: `{"messages":[],"tools":[` +
				` {"type":"function","function":{"name":"calc","x":1}},` +
				"\n {\"type\":\"function\",\"function\":{\"name\":\"ask_user\",\"description\":\"client's\"}},\n" +
				` {"type":"function","function":{"name":"zeta"}} ]}`,
			tools: []string{"calc", "ask_user", "zeta", "search"},
			contains: []string{
				`[ {"type":"function","function":{"name":"calc","x":1}},` + "\n " + askUser + ",\n",
				` {"type":"function","function":{"name":"zeta"}},` + search + " ]",
			},
		},
		{
			name:   "tools_client_duplicates_dropped",
			shaper: Shaper{Tools: [][]byte{[]byte(askUser)}},
			body:   `{"messages":[],"tools":[{"type":"function","function":{"name":"ask_user"}},{"type":"function","function":{"name":"ask_user","v":2}}]}`,
			tools:  []string{"ask_user"},
		},
		{
			name:     "tools_client_kept_without_configured",
			body:     `{"messages":[],"tools":{"odd":true}}`,
			contains: []string{`"tools":{"odd":true}`},
		},
		{
			name:   "tool_choice_auto",
			shaper: Shaper{ToolChoice: "auto"},
			body:   `{"messages":[],"tool_choice":"none"}`,
			choice: `"auto"`,
		},
		{
			name:   "tool_choice_none",
			shaper: Shaper{ToolChoice: "none"},
			body:   `{"messages":[]}`,
			choice: `"none"`,
		},
		{
			name:   "tool_choice_required",
			shaper: Shaper{ToolChoice: "required"},
			body:   `{"messages":[],"tool_choice":{"type":"function","function":{"name":"x"}}}`,
			choice: `"required"`,
		},
		{
			name:   "tool_choice_function",
			shaper: Shaper{Tools: [][]byte{[]byte(askUser)}, ToolChoice: "ask_user"},
			body:   `{"messages":[],"tool_choice":"auto"}`,
			tools:  []string{"ask_user"},
			choice: `{"type":"function","function":{"name":"ask_user"}}`,
		},
		{
			name:   "tool_choice_client_kept",
			body:   `{"messages":[],"tool_choice": "required"}`,
			choice: `"required"`,
		},
		{
			name:   "model_override",
			shaper: Shaper{Model: "deepseek-chat"},
			body:   `{"model":"gpt-4o","messages":[]}`,
			info:   Info{Model: "deepseek-chat"},
		},
		{
			name:   "model_added",
			shaper: Shaper{Model: "m"},
			body:   `{"messages":[]}`,
			info:   Info{Model: "m"},
		},
		{
			name: "model_not_a_string",
			body: `{"model":7,"messages":[]}`,
			info: Info{Model: ""},
		},
		{
			name: "stream_true",
			body: `{"messages":[],"stream":true}`,
			info: Info{Stream: true},
		},
		{
			name: "stream_false_forced",
			body: `{"stream":false,"messages":[]}`,
			info: Info{Stream: false},
		},
		{
			name: "stream_string_forced",
			body: `{"stream":"true","messages":[]}`,
			info: Info{Stream: false},
		},
		{
			name:     "stream_options_other_keys",
			body:     `{"messages":[],"stream":true,"stream_options":{"chunk":1, "extra":{"a":[1]} }}`,
			info:     Info{Stream: true},
			contains: []string{`"stream_options":{"chunk":1, "extra":{"a":[1]},"include_usage":true }}`},
		},
		{
			name:     "stream_options_usage_asked",
			body:     `{"messages":[],"stream":true,"stream_options":{"include_usage":true}}`,
			info:     Info{Stream: true, IncludeUsage: true},
			contains: []string{`"stream_options":{"include_usage":true}`},
		},
		{
			name:   "replace_developer",
			shaper: Shaper{Mode: ModeReplace},
			prompt: "P",
			body:   `{"messages":[{"role":"developer","content":"d"},{"role":"user","content":"hi"},{"role":"system","content":"s"}]}`,
			msgs:   []string{"system:P", "user:hi"},
		},
		{
			name:   "append_after_developer",
			shaper: Shaper{Mode: ModeAppend},
			prompt: "P",
			body:   `{"messages":[{"role":"system","content":"s"},{"role":"developer","content":"d"},{"role":"user","content":"hi"}]}`,
			msgs:   []string{"system:s", "developer:d", "system:P", "user:hi"},
		},
		{
			name:     "n_one_kept",
			body:     `{"messages":[],"n":1}`,
			contains: []string{`"n":1`},
		},
		{
			name: "n_null_kept",
			body: `{"messages":[],"n":null}`,
		},
		{
			name:     "stream_options_usage_false",
			body:     `{"messages":[],"stream_options":{"include_usage":false,"x":2}}`,
			contains: []string{`"stream_options":{"include_usage":true,"x":2}`},
		},
		{
			name:     "stream_options_usage_duplicated",
			body:     `{"messages":[],"stream_options":{"include_usage":false,"include_usage":0}}`,
			contains: []string{`"stream_options":{"include_usage":true,"include_usage":true}`},
		},
		{
			name:     "stream_options_empty",
			body:     `{"messages":[],"stream_options":{}}`,
			contains: []string{`"stream_options":{"include_usage":true}`},
		},
		{
			name:     "stream_options_null",
			body:     `{"messages":[],"stream_options":null}`,
			contains: []string{`"stream_options":{"include_usage":true}`},
		},
		{
			name:   "pretty_printed",
			shaper: Shaper{Model: "m", Tools: [][]byte{[]byte(search)}, ToolChoice: "search"},
			prompt: "P",
			body:   "{\n  \"model\": \"x\",\n  \"messages\": [\n    {\n      \"role\": \"user\",\n      \"content\": \"u\"\n    }\n  ],\n  \"stream\": false\n}\n",
			msgs:   []string{"system:P", "user:u"},
			tools:  []string{"search"},
			choice: `{"type":"function","function":{"name":"search"}}`,
			info:   Info{Model: "m"},
			contains: []string{
				"{\n  \"model\": \"m\",\n  \"messages\": [{\"role\":\"system\",\"content\":\"P\"},\n    {\n      \"role\": \"user\",\n      \"content\": \"u\"\n    }\n  ],\n  \"stream\": true,",
				`"stream_options":{"include_usage":true}` + "\n}\n",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.shaper
			out, info, err := s.Rewrite([]byte(tt.body), tt.prompt)
			if err != nil {
				t.Fatalf("Rewrite: %v", err)
			}
			u := checkUpstream(t, &s, out)
			checkUntouched(t, []byte(tt.body), out)
			if tt.msgs != nil {
				if got := roleContents(t, u.Messages); !slices.Equal(got, tt.msgs) {
					t.Errorf("messages = %q, want %q", got, tt.msgs)
				}
			}
			if tt.tools != nil {
				var names []string
				for _, raw := range u.Tools {
					names = append(names, toolName(raw))
				}
				if !slices.Equal(names, tt.tools) {
					t.Errorf("tools = %q, want %q", names, tt.tools)
				}
			}
			if got := string(u.ToolChoice); got != tt.choice {
				t.Errorf("tool_choice = %s, want %s", got, tt.choice)
			}
			if want := tt.info; !reflect.DeepEqual(info, want) {
				t.Errorf("info = %+v, want %+v", info, tt.info)
			}
			for _, c := range tt.contains {
				if !strings.Contains(string(out), c) {
					t.Errorf("output lacks %q\noutput: %q", c, out)
				}
			}
			golden(t, "openai/"+tt.name, out)
		})
	}
}
