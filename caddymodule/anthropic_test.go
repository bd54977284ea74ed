package caddymodule

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
)

// TestAnthropicRoute drives what the anthropic request format adds to a
// route beside its chat requests (issue 15): count_tokens answered without
// the upstream, the Anthropic headers kept from it and the client's key
// moved to where it reads keys, and refusals in Anthropic's error shape.
func TestAnthropicRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("caddytest integration test")
	}
	var mu sync.Mutex
	var seen []http.Header
	u := newScriptedUpstream(t, func(_ *scriptedUpstream, w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
		sseHead(w)
		writeFlush(w, roleChunk, content("Hello"), finishChunks)
	})
	srv := startSite(t, "", "\thandle /v1/messages* {\n\t"+
		llmStreamBlock("anthropic", "request_format anthropic", `system_prompt_text "Route prompt."`)+
		"\n\t\treverse_proxy "+u.hostPort()+" {\n\t\t\tflush_interval -1\n\t\t}\n\t}\n")
	client := newClient(t, "h1")
	send := func(path, body string, header http.Header) (*http.Response, string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		defer cancel()
		resp, err := post(ctx, client, srv.url(path), body, header)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, string(raw)
	}

	t.Run("count_tokens", func(t *testing.T) {
		count := func(body string) int {
			resp, raw := send("/v1/messages/count_tokens", body, nil)
			var v struct {
				InputTokens *int `json:"input_tokens"`
			}
			if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(raw), &v) != nil || v.InputTokens == nil {
				t.Fatalf("%d %s", resp.StatusCode, raw)
			}
			return *v.InputTokens
		}
		short := count(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
		long := count(`{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("a few more words ", 100) + `"}]}`)
		// The route's prompt counts: the upstream would read it.
		if short < 5 || long < short+250 || long > short+450 {
			t.Errorf("estimates %d and %d for a short and a 400-word message", short, long)
		}
		resp, raw := send("/v1/messages/count_tokens", `{"messages":[{"role":"user","content":[{"type":"nope"}]}]}`, nil)
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(raw, `"type":"invalid_request_error"`) {
			t.Errorf("bad count_tokens body: %d %s", resp.StatusCode, raw)
		}
		if n := u.requests.Load(); n != 0 {
			t.Errorf("the upstream got %d requests for count_tokens", n)
		}
	})

	t.Run("headers", func(t *testing.T) {
		h := http.Header{}
		h.Set("Anthropic-Version", "2023-06-01")
		h.Set("Anthropic-Beta", "fine-grained-tool-streaming-2025-05-14")
		h.Set("X-Api-Key", "sk-ant-test")
		resp, raw := send("/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],"stream":true}`, h)
		if resp.StatusCode != http.StatusOK || !strings.Contains(raw, "event: message_stop") || !strings.Contains(raw, `"text":"Hello"`) {
			t.Fatalf("%d %s", resp.StatusCode, raw)
		}
		mu.Lock()
		got := seen[len(seen)-1]
		mu.Unlock()
		for _, k := range []string{"Anthropic-Version", "Anthropic-Beta", "X-Api-Key"} {
			if got.Get(k) != "" {
				t.Errorf("the upstream got %s: %q", k, got.Get(k))
			}
		}
		if got.Get("Authorization") != "Bearer sk-ant-test" {
			t.Errorf("the upstream got Authorization %q", got.Get("Authorization"))
		}
	})

	t.Run("server_tool_refused", func(t *testing.T) {
		before := u.requests.Load()
		resp, raw := send("/v1/messages", `{"model":"m","max_tokens":10,"messages":[{"role":"user","content":"hi"}],`+
			`"tools":[{"type":"web_search_20250305","name":"web_search"}]}`, nil)
		var v struct {
			Type  string
			Error struct {
				Type, Message string
			}
		}
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal([]byte(raw), &v) != nil || v.Type != "error" ||
			v.Error.Type != "invalid_request_error" || !strings.Contains(v.Error.Message, "web_search_20250305") {
			t.Errorf("%d %s", resp.StatusCode, raw)
		}
		if u.requests.Load() != before {
			t.Errorf("the upstream was called")
		}
	})
}
