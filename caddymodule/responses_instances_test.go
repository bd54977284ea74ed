package caddymodule

import (
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/conversation/storetest"
)

// startRespInstance starts a Caddy process of its own (the test binary,
// TestMain) whose responses route keeps its responses in the Redis at
// redisURL, and waits until it answers.
func startRespInstance(t *testing.T, redisURL, upstream string) site {
	t.Helper()
	dir := t.TempDir()
	addr := freePort(t)
	caddyfile := "{\n\tadmin off\n\tpersist_config off\n\tauto_https off\n\tstorage file_system " + filepath.Join(dir, "data") +
		"\n}\nhttp://" + addr + " {\n" + strings.Replace(respRoute(upstream, "x"), "store file x", "store redis "+redisURL, 1) + "}\n"
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childConfigEnv+"="+cfg, "HOME="+dir,
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			b, _ := os.ReadFile(logFile.Name())
			t.Logf("%s's log:\n%s", addr, b)
		}
	})
	s := site{addr: addr}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(s.url("/v1/responses/resp_ready"))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNotFound {
				return s
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the Caddy instance did not answer: %v", err)
		}
	}
}

// TestResponsesTwoInstancesShareRedis: a chain started on one Caddy is
// read and continued on another sharing the Redis store, and a compaction
// item one wrote is opened by the other (the key is the store's secret).
func TestResponsesTwoInstancesShareRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy processes")
	}
	redisURL := storetest.StartRedis(t)
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		writeFlush(w, roleChunk, content("reply "+string(rune('0'+n))), finishChunks)
	})
	a, b := startRespInstance(t, redisURL, u.hostPort()), startRespInstance(t, redisURL, u.hostPort())
	ca := &respClient{t: t, s: a, auth: "Bearer shared", hc: newClient(t, "h1")}
	cb := &respClient{t: t, s: b, auth: "Bearer shared", hc: newClient(t, "h1")}

	_, r1 := ca.do("POST", "/v1/responses", `{"model":"m","input":"on A"}`)
	id1, _ := r1["id"].(string)
	if st, r2 := cb.do("POST", "/v1/responses", `{"model":"m","previous_response_id":"`+id1+`","input":"on B"}`); st != 200 || r2["previous_response_id"] != id1 {
		t.Fatalf("B continuing A's response: %d %v", st, r2)
	}
	if got := strings.Join(upstreamTexts(u.last(t)), "|"); got != "user: on A|assistant: reply 1|user: on B" {
		t.Errorf("B's upstream request %q", got)
	}
	if st, got := cb.do("GET", "/v1/responses/"+id1, ""); st != 200 || got["id"] != id1 {
		t.Errorf("B's GET of A's response: %d %v", st, got)
	}
	_, c := ca.do("POST", "/v1/responses/compact", `{"model":"m","input":"compact me"}`)
	item, _ := json.Marshal(c["output"].([]any)[0])
	if st, got := cb.do("POST", "/v1/responses", `{"model":"m","input":[`+string(item)+`]}`); st != 200 {
		t.Errorf("B opening A's compaction item: %d %v", st, got)
	}
}
