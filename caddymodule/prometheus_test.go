package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// requirePrometheusEnv makes a missing prometheus binary a failure, not a
// skip: .ci/run installs Debian's prometheus and sets it.
const requirePrometheusEnv = "LLMSTREAM_REQUIRE_PROMETHEUS"

// TestPrometheusScrapes has a real Prometheus (Debian's prometheus
// package) scrape Caddy's metrics endpoint after the streams of
// driveMetrics, and asks its HTTP API for each of llmstream's metrics
// (CONTRACT.md §15): what an operator's dashboard would read.
func TestPrometheusScrapes(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		if os.Getenv(requirePrometheusEnv) != "" {
			t.Fatalf("%s is set but prometheus is not installed (apt-get install prometheus)", requirePrometheusEnv)
		}
		t.Skip("prometheus is not installed (apt-get install prometheus); .ci/run installs it")
	}
	m, err := registerMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	rejected := testutil.ToFloat64(m.rejections.WithLabelValues("invalid_json"))
	retried := testutil.ToFloat64(m.retries.WithLabelValues("artifact_without_evidence"))
	s := metricsSite(t, "prom")
	run := driveMetrics(t, s, "prom")
	waitCounted(t, m, "prom_agent", "openai", "llm-mock", 2)
	waitCounted(t, m, "/prom_violations", "jsonseq", "pinned-model", 1)
	waitCounted(t, m, "prom_retry", "openai", "llm-mock", 1)

	api := startPrometheus(t, bin, s.addr)
	// The first scrape comes within a second of the start: wait for it.
	waitQuery(t, api, `caddy_llm_stream_requests_total{route="prom_agent"}`, 10*time.Second)

	checks := []struct {
		query string
		want  float64
	}{
		{`sum(caddy_llm_stream_requests_total{route="prom_agent",protocol="openai",model="llm-mock",outcome="completed"})`, 2},
		{`sum(caddy_llm_stream_requests_total{route="/prom_violations",protocol="jsonseq",model="pinned-model"})`, 1},
		{`sum(caddy_llm_stream_requests_total{route="prom_retry"})`, 1},
		{`sum(caddy_llm_stream_tokens_total{route="prom_agent",type="input"})`, float64(run.agentIn)},
		{`sum(caddy_llm_stream_tokens_total{route="prom_agent",type="output"})`, float64(run.agentOut)},
		{`sum(caddy_llm_stream_tokens_total{route="/prom_violations",type="output"})`, float64(run.violOut)},
		{`sum(caddy_llm_stream_time_to_first_token_seconds_count{route="prom_agent"})`, 2},
		{`sum(caddy_llm_stream_rounds_count{route="prom_agent"})`, 2},
		{`sum(caddy_llm_stream_rounds_sum{route="prom_agent"})`, 4},
		{`sum(caddy_llm_stream_rounds_bucket{route="prom_agent",le=~"1|1.0"})`, 0},
		{`sum(caddy_llm_stream_rounds_bucket{route="prom_agent",le=~"2|2.0"})`, 2},
		{`sum(caddy_llm_stream_tool_calls_total{route="prom_agent",server="demo",tool="search_knowledge",outcome="ok"})`, 2},
		{`sum(caddy_llm_stream_tool_call_duration_seconds_count{route="prom_agent",server="demo",tool="search_knowledge"})`, 2},
		{`sum(caddy_llm_stream_violations_total{route="/prom_violations",code="literal_final_tag"})`, 1},
		{`sum(caddy_llm_stream_violations_total{route="/prom_violations"})`, 3},
		{`sum(caddy_llm_stream_violations_total{route="prom_agent"}) or vector(0)`, 0},
		{`sum(caddy_llm_stream_retries_total{reason="artifact_without_evidence"})`, retried + 1},
		{`sum(caddy_llm_stream_rejected_requests_total{code="invalid_json"})`, rejected + 1},
		{`sum(caddy_llm_stream_streams_total{outcome="completed"}) >= 4`, 1},
	}
	for _, c := range checks {
		q := c.query
		if q[len(q)-4:] == ">= 4" {
			q = "count(" + q + ")" // 1 when the comparison holds
		}
		if got := queryValue(t, api, q); got != c.want {
			t.Errorf("%s = %v, want %v", c.query, got, c.want)
		}
	}
	// A dashboard's quantile works on what was scraped.
	if got := queryValue(t, api, `histogram_quantile(0.5, sum by (le) (caddy_llm_stream_time_to_first_token_seconds_bucket{route="prom_agent"}))`); got <= 0 || got > 32 {
		t.Errorf("median time to first token %v s", got)
	}
}

// startPrometheus runs prometheus scraping target's /metrics every
// second, and returns its HTTP API's base URL. It is stopped when the
// test ends.
func startPrometheus(t *testing.T, bin, target string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: llmstream
    metrics_path: /metrics
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"),
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	log, err := os.Create(filepath.Join(dir, "prometheus.log"))
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		log.Close()
		if t.Failed() {
			b, _ := os.ReadFile(log.Name())
			t.Logf("prometheus log:\n%s", b)
		}
	})
	api := "http://" + addr
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(api + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return api
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready at %s: %v", api, err)
		}
		time.Sleep(100 * time.Millisecond) // polling interval, not an assertion
	}
}

// query runs an instant query and returns its vector's samples' values.
func query(t *testing.T, api, q string) []float64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, api+"/api/v1/query?query="+url.QueryEscape(q), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Status string
		Error  string
		Data   struct {
			ResultType string
			Result     []struct {
				Value [2]any
			}
		}
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatal(err)
	}
	if out.Status != "success" {
		t.Fatalf("query %s: %s", q, out.Error)
	}
	var vals []float64
	for _, r := range out.Data.Result {
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("query %s: value %v", q, r.Value)
		}
		vals = append(vals, v)
	}
	return vals
}

// queryValue runs a query whose result is one sample.
func queryValue(t *testing.T, api, q string) float64 {
	t.Helper()
	vals := query(t, api, q)
	if len(vals) != 1 {
		t.Errorf("query %s gave %d samples, want 1", q, len(vals))
		return -1
	}
	return vals[0]
}

// waitQuery waits until q has a sample: the scrape happened.
func waitQuery(t *testing.T, api, q string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for len(query(t, api, q)) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("no sample of %s within %v: Prometheus did not scrape Caddy", q, d)
		}
		time.Sleep(200 * time.Millisecond) // polling interval, not an assertion
	}
}
