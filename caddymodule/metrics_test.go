package caddymodule

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/tidwall/gjson"

	"github.com/llmstream/llmstream/toolserver"
)

// The metrics of CONTRACT.md §15, through Caddy: a turn of the agent loop
// (two rounds, one tool call) on a route named m_agent, a reply with
// violations on a route with a configured model and no name (its label is
// its path), a refused request. TestMetrics reads the collectors;
// TestPrometheusScrapes (prometheus_test.go) has a real Prometheus scrape
// the same streams from Caddy's metrics endpoint. The routes have names
// of their own, so the counts other tests add elsewhere in the process do
// not mix in.

// metricsSite serves the metrics routes, named after tag (<tag>_agent,
// /<tag>_violations, <tag>_retry), and Caddy's metrics handler at
// /metrics.
func metricsSite(t *testing.T, tag string) site {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	body := `	handle /mock/* {
		llm_mock {
			by_round
			interval 0
			reply_text "Let me search."
			tool_calls_file testdata/loop/search_call.json
			reply_text "Found: {{tool_result}}"
			tool_calls_file testdata/loop/no_calls.json
		}
	}
	handle /violations_mock/* {
		llm_mock {
			interval 0
			reply_file ../examples/fixtures/thinkingml_violations.txt
		}
	}
	handle /retry_mock/* {
		llm_mock {
			interval 0
			reply_text ` + "`" + `{"status":"artifact_ready","message":"Your deck is ready"}` + "`" + `
			reply_text ` + "`" + `{"status":"answer_ready","message":"I could not make the deck yet."}` + "`" + `
		}
	}
	handle /m_retry {
		llm_stream {
			format final_result
			protocol openai
			name ` + tag + `_retry
			validate {
				artifact_tools generate_pptx
			}
		}
		rewrite * /retry_mock/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
	handle /m_agent {
		llm_stream {
			format text
			protocol openai
			name ` + tag + `_agent
			tools {
				mcp demo {
					builtin demo
				}
			}
		}
		rewrite * /mock/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
	handle /m_violations {
		# no name: the route label is the config's path, /m_violations
		llm_stream {
			format thinkingml
			protocol jsonseq
			model pinned-model
		}
		rewrite * /violations_mock/v1/chat/completions
		reverse_proxy {http.request.hostport} {
			flush_interval -1
		}
	}
	handle /metrics {
		metrics
	}
`
	return startSite(t, "", strings.ReplaceAll(body, "/m_", "/"+tag+"_"))
}

// metricsRun is what the streams of driveMetrics reported themselves.
type metricsRun struct {
	agentIn, agentOut int64 // the agent turn's usage, summed over its rounds
	violIn, violOut   int64
}

// driveMetrics sends the streams the metric tests count: two agent turns,
// one reply with violations, one retried reply, one refused request.
func driveMetrics(t *testing.T, s site, tag string) metricsRun {
	t.Helper()
	var run metricsRun
	for range 2 {
		_, evs := loopPost(t, s, "/"+tag+"_agent", `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"What is Caddy?"}]}`)
		for _, ev := range evs {
			if u := gjson.Get(ev.Data, "usage"); u.Exists() && u.Type != gjson.Null {
				run.agentIn += u.Get("prompt_tokens").Int()
				run.agentOut += u.Get("completion_tokens").Int()
			}
		}
	}
	_, evs := loopPost(t, s, "/"+tag+"_violations", `{"model":"m","messages":[{"role":"user","content":"hi"}]}`)
	for _, ev := range evs {
		if ev.Name == "completed" {
			run.violIn = gjson.Get(ev.Data, "metadata.usage.prompt_tokens").Int()
			run.violOut = gjson.Get(ev.Data, "metadata.usage.completion_tokens").Int()
		}
	}
	_, evs = loopPost(t, s, "/"+tag+"_retry", `{"model":"m","stream":true,"messages":[{"role":"user","content":"make a deck"}]}`)
	var answer strings.Builder
	for _, ev := range evs {
		answer.WriteString(gjson.Get(ev.Data, "choices.0.delta.content").String())
	}
	if answer.String() != "I could not make the deck yet." {
		t.Fatalf("the retried reply gave %q, want the second reply's message", answer.String())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	resp, err := post(ctx, newClient(t, "h1"), s.url("/"+tag+"_agent"), `{"messages":`, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("a truncated body got %d, want 400", resp.StatusCode)
	}
	if run.agentIn == 0 || run.agentOut == 0 || run.violIn == 0 {
		t.Fatalf("the streams reported no usage: %+v", run)
	}
	return run
}

// waitCounted waits until the stream counters saw n more streams of
// route: the counts are taken as each handler returns, just after the
// client read the end of its stream.
func waitCounted(t *testing.T, m *metrics, route, protocol, model string, n float64) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for testutil.ToFloat64(m.requests.WithLabelValues(route, protocol, model, "completed")) < n {
		if time.Now().After(deadline) {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(m.requests)
			fs, _ := reg.Gather()
			t.Fatalf("route %s: fewer than %v streams counted: %v", route, n, fs)
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not an assertion
	}
}

func TestMetrics(t *testing.T) {
	m, err := registerMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	rejected := testutil.ToFloat64(m.rejections.WithLabelValues("invalid_json"))
	retried := testutil.ToFloat64(m.retries.WithLabelValues("artifact_without_evidence"))
	s := metricsSite(t, "m")
	run := driveMetrics(t, s, "m")
	waitCounted(t, m, "m_agent", "openai", "llm-mock", 2)
	waitCounted(t, m, "/m_violations", "jsonseq", "pinned-model", 1)
	waitCounted(t, m, "m_retry", "openai", "llm-mock", 1)

	checks := []struct {
		name      string
		got, want float64
	}{
		{"requests_total m_agent", testutil.ToFloat64(m.requests.WithLabelValues("m_agent", "openai", "llm-mock", "completed")), 2},
		{"requests_total m_violations (the configured model)", testutil.ToFloat64(m.requests.WithLabelValues("/m_violations", "jsonseq", "pinned-model", "completed")), 1},
		{"tokens_total input", testutil.ToFloat64(m.tokens.WithLabelValues("m_agent", "openai", "llm-mock", "input")), float64(run.agentIn)},
		{"tokens_total output", testutil.ToFloat64(m.tokens.WithLabelValues("m_agent", "openai", "llm-mock", "output")), float64(run.agentOut)},
		{"tokens_total input m_violations", testutil.ToFloat64(m.tokens.WithLabelValues("/m_violations", "jsonseq", "pinned-model", "input")), float64(run.violIn)},
		{"tool_calls_total", testutil.ToFloat64(m.toolCalls.WithLabelValues("m_agent", "demo", "search_knowledge", "ok")), 2},
		{"violations_total literal_final_tag", testutil.ToFloat64(m.violations.WithLabelValues("/m_violations", "jsonseq", "thinkingml", "literal_final_tag")), 1},
		{"violations_total phase_order", testutil.ToFloat64(m.violations.WithLabelValues("/m_violations", "jsonseq", "thinkingml", "phase_order")), 1},
		{"rejected_requests_total invalid_json", testutil.ToFloat64(m.rejections.WithLabelValues("invalid_json")) - rejected, 1},
		{"retries_total artifact_without_evidence", testutil.ToFloat64(m.retries.WithLabelValues("artifact_without_evidence")) - retried, 1},
		{"requests_total m_retry (one request, two upstream calls)", testutil.ToFloat64(m.requests.WithLabelValues("m_retry", "openai", "llm-mock", "completed")), 1},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	// The histograms: one observation per stream (rounds: 2 each) and per
	// tool call.
	if n, sum := histogram(t, m.rounds.WithLabelValues("m_agent", "openai")); n != 2 || sum != 4 {
		t.Errorf("rounds: %v observations summing to %v, want 2 and 4", n, sum)
	}
	if n, _ := histogram(t, m.ttft.WithLabelValues("m_agent", "openai", "llm-mock")); n != 2 {
		t.Errorf("time_to_first_token: %v observations, want 2", n)
	}
	if n, _ := histogram(t, m.toolDurations.WithLabelValues("m_agent", "demo", "search_knowledge")); n != 2 {
		t.Errorf("tool_call_duration: %v observations, want 2", n)
	}

	// The whole exposition, as Prometheus reads it from Caddy.
	resp, err := http.Get(s.url("/metrics"))
	if err != nil {
		t.Fatal(err)
	}
	text, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{
		`caddy_llm_stream_requests_total{model="llm-mock",outcome="completed",protocol="openai",route="m_agent"} 2`,
		`caddy_llm_stream_tool_calls_total{outcome="ok",route="m_agent",server="demo",tool="search_knowledge"} 2`,
		`caddy_llm_stream_rounds_count{protocol="openai",route="m_agent"} 2`,
	} {
		if !strings.Contains(string(text), want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// histogram returns a histogram's observation count and sum.
func histogram(t *testing.T, o prometheus.Observer) (uint64, float64) {
	t.Helper()
	var out dto.Metric
	if err := o.(prometheus.Metric).Write(&out); err != nil {
		t.Fatal(err)
	}
	h := out.GetHistogram()
	return h.GetSampleCount(), h.GetSampleSum()
}

// TestLabelBounds: a label whose values come from outside the config keeps
// to its bound, and every value is valid UTF-8 of at most 128 bytes.
func TestLabelBounds(t *testing.T) {
	b := newBoundedLabel(2)
	for _, v := range []string{"a", "b", "a"} {
		if !b.admit(v) {
			t.Errorf("%q refused within the bound", v)
		}
	}
	if b.admit("c") {
		t.Error("a third value admitted past a bound of 2")
	}
	m := newMetrics()
	m.models = newBoundedLabel(1)
	if got := m.modelLabel("", "gpt-x"); got != "gpt-x" {
		t.Errorf("first model %q", got)
	}
	if got := m.modelLabel("", "gpt-y"); got != "other" {
		t.Errorf("a model past the bound is %q, want other", got)
	}
	if got := m.modelLabel("configured", "gpt-y"); got != "configured" {
		t.Errorf("a configured model is %q", got)
	}
	long := strings.Repeat("é", 100) + "\xff"
	if got := labelText(long); len(got) > 128 || !strings.HasPrefix(long, got) || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("labelText cut %d bytes to %q", len(long), got)
	}
	if got := labelText("a\xffb"); got != "a\uFFFDb" {
		t.Errorf("labelText(invalid) = %q", got)
	}
	// A tool name from no server never becomes a label.
	m.toolCalled("r", toolserver.CallRecord{Outcome: "unknown_tool"})
	if got := testutil.ToFloat64(m.toolCalls.WithLabelValues("r", "", "", "unknown_tool")); got != 1 {
		t.Errorf("unknown tool counted %v times under the empty tool label", got)
	}
}
