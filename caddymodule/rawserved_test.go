package caddymodule

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// rawChunk is a chunk from an upstream that serves model raw, its content
// text as the model wrote it.
func rawChunk(model, text string) string {
	b, _ := json.Marshal(text)
	return `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"` + model +
		`","choices":[{"index":0,"delta":{"content":` + string(b) + `},"finish_reason":null}]}` + "\n\n"
}

// TestRawServedThroughCaddy: a raw-served R1 distill and a Hermes-style
// tool call, through reverse_proxy and the jsonseq protocol, which shows no
// reasoning (CONTRACT.md §8): with the defaults, the reasoning stays out of
// the answer; text_tools hermes makes a tool_call event and finish_reason
// tool_calls; a reply that never closes its reasoning is still shown.
func TestRawServedThroughCaddy(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy")
	}
	type want struct {
		answer, finish string
		tools          []string
		violations     []string
	}
	cases := []struct {
		name    string
		options []string
		model   string
		pieces  []string
		want    want
	}{
		{"R1 distill, defaults", nil, "deepseek-r1:7b",
			[]string{"The user greets me.</th", "ink>\n\nHello!"},
			want{answer: "Hello!", finish: "stop"}},
		{"Hermes tool call", []string{"text_tools hermes"}, "Qwen2.5-7B-Instruct",
			[]string{"Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"argu", "ments\": {\"city\": \"Paris\"}}\n</tool_call>"},
			want{answer: "Checking.", finish: "tool_calls", tools: []string{`get_weather {"city":"Paris"}`}}},
		{"prefilled, never closed", []string{"think_tags prefilled"}, "my-model",
			[]string{"Just the answer."},
			want{answer: "Just the answer.", finish: "stop", violations: []string{"think_unclosed"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			up := newScriptedUpstream(t, func(_ *scriptedUpstream, w http.ResponseWriter, _ *http.Request) {
				sseHead(w)
				for _, p := range tc.pieces {
					writeFlush(w, rawChunk(tc.model, p))
				}
				writeFlush(w, finishChunks)
			})
			s := startSite(t, "", routeBlock("jsonseq", up.hostPort(), tc.options...))
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			resp, err := post(ctx, newClient(t, "h1"), s.chatURL(), `{"model":"m","messages":[{"role":"user","content":"hi"}]}`, nil)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			events, err := parseSSE(string(raw))
			if err != nil {
				t.Fatal(err)
			}
			var answer, finish string
			var tools, violations []string
			for _, ev := range events {
				switch ev.Name {
				case "final_delta":
					answer += ev.json(t)["text"].(string)
				case "tool_call":
					m := ev.json(t)
					args, _ := json.Marshal(m["args"])
					tools = append(tools, m["name"].(string)+" "+string(args))
				case "completed":
					meta := ev.json(t)["metadata"].(map[string]any)
					finish, _ = meta["finish_reason"].(string)
					vs, _ := meta["violations"].([]any)
					for _, v := range vs {
						violations = append(violations, v.(map[string]any)["code"].(string))
					}
				case "thinking_start", "phase_delta":
					t.Errorf("jsonseq got %s: free reasoning has no place in it", ev.Name)
				}
			}
			if answer != tc.want.answer {
				t.Errorf("answer %q, want %q", answer, tc.want.answer)
			}
			if finish != tc.want.finish {
				t.Errorf("finish_reason %q, want %q", finish, tc.want.finish)
			}
			if strings.Join(tools, "|") != strings.Join(tc.want.tools, "|") {
				t.Errorf("tool calls %q, want %q", tools, tc.want.tools)
			}
			if strings.Join(violations, "|") != strings.Join(tc.want.violations, "|") {
				t.Errorf("violations %q, want %q", violations, tc.want.violations)
			}
		})
	}
}
