package caddymodule

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// BenchmarkObserved streams a ThinkingML reply through Caddy in process
// (llm_stream in front of llm_mock, 16-byte deltas, the openai protocol)
// with what operators turn on (CONTRACT.md §15) off and on: "off" is a
// config without Caddy's metrics option and without tracing; "on" has
// Caddy's metrics option and Caddy's tracing handler on the route, whose
// spans (the request's, llmstream's chat span with its first_token event)
// are recorded and batched for an exporter that drops them
// (OTEL_TRACES_EXPORTER=none: the export's own cost is the collector's
// side, measured with cmd/llmload in docs/development.md). llmstream's
// collectors count in both: they are registered whether Caddy serves
// them or not.
//
// Each mode runs a short and a long reply. allocs/op counts the whole
// process (client, Caddy, mock): what on adds per stream is the
// difference on − off, and it is the same for the short and the long
// reply when nothing is added per delta, but for what varies with timing:
// reverse_proxy allocates a logger per upstream read, and how many reads
// a stream takes depends on the scheduler (docs/operations.md has a
// memory profile that sets those apart). Run it alone (it serves on the
// caddytest ports, admin localhost:2999):
//
//	go test -c -o /tmp/cm.test ./caddymodule/ && cd caddymodule &&
//	/tmp/cm.test -test.run XXX -test.bench Observed -test.benchmem -test.count 6 -test.benchtime 300x
func BenchmarkObserved(b *testing.B) {
	fixture, err := os.ReadFile("../examples/fixtures/thinkingml.txt")
	if err != nil {
		b.Fatal(err)
	}
	dir := b.TempDir()
	replies := map[string]int{"short": 1, "long": 64} // the fixture's answer repeated
	for name, n := range replies {
		s := string(fixture)
		i, j := strings.Index(s, "<final>")+len("<final>"), strings.Index(s, "<!--")
		reply := s[:i] + strings.Repeat(s[i:j], n) + s[j:]
		if err := os.WriteFile(filepath.Join(dir, name+".txt"), []byte(reply), 0o600); err != nil {
			b.Fatal(err)
		}
	}
	b.Setenv("OTEL_TRACES_EXPORTER", "none")
	b.Setenv("OTEL_SERVICE_NAME", "llmstream-bench")

	for _, obs := range []string{"off", "metrics", "tracing", "on"} {
		global, tracing := "", ""
		if obs == "metrics" || obs == "on" {
			global = "metrics"
		}
		if obs == "tracing" || obs == "on" {
			tracing = "tracing {\n\t\t\tspan llm_bench\n\t\t}\n\t\t"
		}
		var body strings.Builder
		for name := range replies {
			fmt.Fprintf(&body, `	handle /mock_%[1]s/* {
		llm_mock {
			reply_file %[2]s
			chunk_size 16
			interval 0
		}
	}
	handle /%[1]s {
		%[3]sllm_stream {
			format thinkingml
			protocol openai
			name bench
			heartbeat 0
		}
		rewrite * /mock_%[1]s/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
`, name, filepath.Join(dir, name+".txt"), tracing)
		}
		s := startSite(b, global, body.String())
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
		for _, name := range []string{"short", "long"} {
			b.Run(fmt.Sprintf("obs=%s/reply=%s", obs, name), func(b *testing.B) {
				var chunks int
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					chunks = observedStream(b, client, s.url("/"+name))
				}
				b.ReportMetric(float64(chunks), "chunks/stream")
			})
		}
		client.CloseIdleConnections()
	}
}

// observedStream posts one streamed chat request, reads the reply to its
// end, and returns the chunks the client received.
func observedStream(b *testing.B, client *http.Client, url string) int {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	resp, err := post(ctx, client, url, `{"model":"m","stream":true,"messages":[{"role":"user","content":"A three-day split?"}]}`, nil)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !bytes.HasSuffix(raw, []byte("data: [DONE]\n\n")) {
		b.Fatalf("status %d, err %v, the stream did not complete: %.200s", resp.StatusCode, err, raw)
	}
	return bytes.Count(raw, []byte("\n\n"))
}
