package llmmock

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2"
)

// TestScriptedTurns checks what a scripted conversation relies on: request
// n gets reply n and tool calls n (a file of [] is a turn without a call),
// and a recording mock serves the bodies it received, oldest first, until
// they are cleared.
func TestScriptedTurns(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	zero := caddy.Duration(0)
	m := &Mock{
		ReplyTexts:     []string{"", "done"},
		ToolCallsFiles: []string{write("call.json", `[{"name":"shell","arguments":{"cmd":"ls"}}]`), write("none.json", `[]`)},
		Record:         true,
		Interval:       &zero,
	}
	if err := m.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	post := func(body string) string {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(body))
		if err := m.ServeHTTP(rec, req, nil); err != nil {
			t.Fatal(err)
		}
		return rec.Body.String()
	}
	first := post(`{"messages":[{"role":"user","content":"list"}],"stream":true}`)
	if !strings.Contains(first, `"name":"shell"`) || !strings.Contains(first, `"finish_reason":"tool_calls"`) {
		t.Errorf("turn 1 is not the tool call:\n%s", first)
	}
	second := post(`{"messages":[{"role":"tool","content":"a b"}],"stream":false}`)
	if strings.Contains(second, "tool_calls") || !strings.Contains(second, `"content":"done"`) {
		t.Errorf("turn 2 is not the answer:\n%s", second)
	}

	get := func() []json.RawMessage {
		rec := httptest.NewRecorder()
		if err := m.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/llm_mock/requests", nil), nil); err != nil {
			t.Fatal(err)
		}
		var bodies []json.RawMessage
		if err := json.Unmarshal(rec.Body.Bytes(), &bodies); err != nil {
			t.Fatalf("recorded bodies: %v: %s", err, rec.Body)
		}
		return bodies
	}
	bodies := get()
	if len(bodies) != 2 || !strings.Contains(string(bodies[0]), `"list"`) || !strings.Contains(string(bodies[1]), `"a b"`) {
		t.Fatalf("recorded %s, want both bodies in order", bodies)
	}
	rec := httptest.NewRecorder()
	if err := m.ServeHTTP(rec, httptest.NewRequest(http.MethodDelete, "/llm_mock/requests", nil), nil); err != nil || rec.Code != http.StatusNoContent {
		t.Fatalf("DELETE: %v, status %d", err, rec.Code)
	}
	if bodies := get(); len(bodies) != 0 {
		t.Errorf("after DELETE: %s", bodies)
	}
}

// TestReplay checks that a recorded upstream body reaches llm_stream byte
// for byte, as SSE or as one JSON completion by its file name, and that
// replay_file does not mix with the reply options.
func TestReplay(t *testing.T) {
	dir := t.TempDir()
	sse := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":[{\"type\":\"text\",\"text\":\"héllo\"}]}}]}\n\n: keep-alive\n\ndata: [DONE]\n\n"
	whole := `{"object":"chat.completion","choices":[{"index":0,"message":{"content":"x"},"finish_reason":"stop"}]}`
	files := map[string]string{"mistral.sse": sse, "whole.json": whole}
	var paths []string
	for _, name := range []string{"mistral.sse", "whole.json"} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(files[name]), 0o600); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	zero := caddy.Duration(0)
	m := &Mock{ReplayFiles: paths, ChunkSize: 3, RandomChunks: true, Interval: &zero}
	if err := m.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct{ body, ctype string }{{sse, "text/event-stream"}, {whole, "application/json"}} {
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(`{"messages":[],"stream":true}`))
		if err := m.ServeHTTP(rec, req, nil); err != nil {
			t.Fatal(err)
		}
		if rec.Body.String() != want.body || rec.Header().Get("Content-Type") != want.ctype {
			t.Errorf("request %d: %s %q, want %s %q", i+1, rec.Header().Get("Content-Type"), rec.Body, want.ctype, want.body)
		}
	}
	mixed := &Mock{ReplayFiles: paths, ReplyTexts: []string{"x"}}
	if err := mixed.Provision(caddy.Context{}); err == nil || !strings.Contains(err.Error(), "replay_file replaces") {
		t.Errorf("replay_file with reply_text: %v", err)
	}
}
