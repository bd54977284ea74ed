package caddymodule

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform/wiretest"
)

// TestLogsHoldNoSecrets runs streams of every protocol, completed and
// failed, with Caddy logging at DEBUG level (and an access log) to files,
// sending an API key in Authorization, a configured system prompt, a user
// message, and a reply and reasoning text, each with a marker. None of the
// markers may reach either log (CONTRACT §6), while each stream's
// "stream ended" line carries the fields operators need.
func TestLogsHoldNoSecrets(t *testing.T) {
	if testing.Short() {
		t.Skip("caddytest integration test")
	}
	const (
		apiKey    = "sk-test-SECRET123"
		prompt    = "TOP-SECRET-PROMPT 4e9c"
		userText  = "USER-SECRET-QUESTION 8d2a"
		replyText = "REPLY-SECRET-MARKER 7f3a"
		reasoning = "REASONING-SECRET-MARKER 1c6b"
	)
	secrets := []string{apiKey, "SECRET123", prompt, "TOP-SECRET", userText, replyText, reasoning}

	u := newScriptedUpstream(t, func(u *scriptedUpstream, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("kind") {
		case "refused":
			refusal(http.StatusTooManyRequests, "application/json", rateLimitBody)(u, w, r)
		case "broken":
			sseHead(w)
			if writeFlush(w, roleChunk, content(replyText)) {
				hangUp(w)
			}
		default:
			sseHead(w)
			writeFlush(w, roleChunk, chunk(`{"reasoning_content":"`+reasoning+`"}`),
				content(replyText), content(" more"), finishChunks)
		}
	})
	dir := t.TempDir()
	logFile, accessFile := filepath.Join(dir, "caddy.log"), filepath.Join(dir, "access.log")
	var routes strings.Builder
	for _, ps := range routeSpecs(t) {
		opts := append(append([]string{}, ps.options...), `system_prompt_text "`+prompt+` never tell"`)
		fmt.Fprintf(&routes, "\thandle /%s/* {\n\t\t%s\n\t\treverse_proxy %s {\n\t\t\tflush_interval -1\n\t\t}\n\t}\n",
			ps.protocol, llmStreamBlock(ps.protocol, opts...), u.hostPort())
	}
	// Caddy's http.auto_https logger dumps the whole adjusted config at
	// DEBUG on every load (autohttps.go, "adjusted config"), inline
	// system_prompt_text included. That is config-time logging by Caddy
	// core, which no module can redact: a prompt file or an {env.*}
	// placeholder (expanded per request) keeps the text out of the config,
	// or this exclude keeps the dump out of the log. Everything logged
	// while serving is checked.
	global := "log {\n\t\tlevel DEBUG\n\t\toutput file " + logFile + "\n\t\tformat json\n\t\texclude http.auto_https\n\t}"
	srv := startSite(t, global, "\tlog {\n\t\toutput file "+accessFile+"\n\t\tformat json\n\t}\n"+routes.String())

	client := newClient(t, "h1")
	streams := 0
	for _, ps := range protoSpecs(t) {
		for _, kind := range []string{"completed", "broken", "refused", "rejected"} {
			body := strings.Replace(ps.request, `"hi"`, `"`+userText+`"`, 1)
			if kind == "rejected" {
				body = "not JSON " + userText // refused before the upstream, and logged
			} else {
				streams++
			}
			ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
			url := srv.url("/" + ps.protocol + "/v1/chat/completions?kind=" + kind)
			resp, err := post(ctx, client, url, body, http.Header{"Authorization": {"Bearer " + apiKey}})
			if err != nil {
				cancel()
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			cancel()
		}
	}

	// The handler logs each stream on its way out, and Caddy writes the
	// access log entry after that: wait until all are there.
	var logs, access []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		logs, _ = os.ReadFile(logFile)
		access, _ = os.ReadFile(accessFile)
		if bytes.Count(logs, []byte(`"stream ended"`)) >= streams && bytes.Count(access, []byte(`"llm_stream"`)) >= streams {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 10s: %d stream-ended lines, %d access entries with llm_stream fields, want %d",
				bytes.Count(logs, []byte(`"stream ended"`)), bytes.Count(access, []byte(`"llm_stream"`)), streams)
		}
		time.Sleep(20 * time.Millisecond) // polling interval, not an assertion
	}
	for name, data := range map[string][]byte{"the log": logs, "the access log": access} {
		for line := range lines(data) {
			for _, s := range secrets {
				if bytes.Contains(line, []byte(s)) {
					var entry struct{ Logger, Msg string }
					_ = json.Unmarshal(line, &entry)
					t.Errorf("%s holds %q in a %q line of logger %q: %.300s", name, s, entry.Msg, entry.Logger, line)
				}
			}
		}
	}
	// The request's Authorization header is in the access log, redacted.
	if !bytes.Contains(access, []byte(`"Authorization":["REDACTED"]`)) {
		t.Errorf("the access log does not show Authorization as REDACTED")
	}

	fields := []string{"message_id", "request_id", "protocol", "format", "model", "outcome", "finish_reason",
		"reply_bytes", "violations", "duration", "ttft"}
	protocols := map[string]bool{}
	for line := range lines(logs) {
		var entry map[string]any
		if json.Unmarshal(line, &entry) != nil || entry["msg"] != "stream ended" {
			continue
		}
		protocols[fmt.Sprint(entry["protocol"])] = true
		for _, f := range fields {
			if _, ok := entry[f]; !ok {
				t.Errorf("stream ended line without %s: %s", f, line)
			}
		}
		if entry["request_id"] != "client-req-1" || !strings.HasPrefix(fmt.Sprint(entry["message_id"]), "msg_") {
			t.Errorf("stream ended line with wrong ids: %s", line)
		}
		// What the client's request asked for that the upstream has no
		// counterpart for (the Responses body's hosted tool) was left
		// out, and said so; nothing else is.
		c, err := wiretest.For(fmt.Sprint(entry["protocol"]))
		if err != nil {
			t.Fatal(err)
		}
		var want any
		if c.LeftOut != "" {
			want = c.LeftOut
		}
		if left := entry["left_out"]; left != want {
			t.Errorf("stream ended line with left_out %v, want %v: %s", left, want, line)
		}
	}
	for _, ps := range protoSpecs(t) {
		if !protocols[ps.protocol] {
			t.Errorf("no stream ended line for protocol %s", ps.protocol)
		}
	}
	for line := range lines(access) {
		var entry struct {
			LLM map[string]any `json:"llm_stream"`
		}
		if json.Unmarshal(line, &entry) != nil || entry.LLM == nil {
			continue
		}
		for _, f := range fields {
			if _, ok := entry.LLM[f]; !ok {
				t.Errorf("access log entry's llm_stream without %s: %s", f, line)
			}
		}
	}
}

// lines yields the lines of a log file.
func lines(data []byte) func(yield func([]byte) bool) {
	return func(yield func([]byte) bool) {
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			if !yield(sc.Bytes()) {
				return
			}
		}
	}
}
