package caddymodule

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"
)

// otelcolEnv names the OpenTelemetry Collector binary the trace test
// sends to: e2e/otelcol, built by .ci/run (cd e2e/otelcol && go build).
// requireOtelcolEnv makes its absence a failure rather than a skip.
const (
	otelcolEnv        = "LLMSTREAM_OTELCOL"
	requireOtelcolEnv = "LLMSTREAM_REQUIRE_OTELCOL"
)

// TestTracesReachCollector: with Caddy's own tracing handler on a route
// (its OTLP exporter configured by the OTEL_* environment, as an operator
// configures it), a streamed turn with a tool round reaches a real
// OpenTelemetry Collector as one trace: Caddy's server span, and under it
// a chat span per round and an execute_tool span for the call, with the
// GenAI attributes (CONTRACT.md §15). The collector writes what it
// received as OTLP JSON, which the test reads back.
func TestTracesReachCollector(t *testing.T) {
	bin := os.Getenv(otelcolEnv)
	if bin == "" {
		if os.Getenv(requireOtelcolEnv) != "" {
			t.Fatalf("%s is set but %s is not", requireOtelcolEnv, otelcolEnv)
		}
		t.Skipf("%s is not set (cd e2e/otelcol && go build -o otelcol .); .ci/run builds it", otelcolEnv)
	}
	if testing.Short() {
		t.Skip("runs Caddy and a collector")
	}
	endpoint, out := startCollector(t, bin)
	// Caddy's tracing module builds its exporter from these
	// (autoexport), when the config loads.
	t.Setenv("OTEL_TRACES_EXPORTER", "otlp")
	t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://"+endpoint)
	t.Setenv("OTEL_BSP_SCHEDULE_DELAY", "100")
	t.Setenv("OTEL_SERVICE_NAME", "llmstream-test")

	s := startSite(t, "", `	handle /mock/* {
		llm_mock {
			by_round
			interval 0
			reply_text "Let me search."
			tool_calls_file testdata/loop/search_call.json
			reply_text "Found: {{tool_result}}"
			tool_calls_file testdata/loop/no_calls.json
		}
	}
	handle /otel {
		tracing {
			span llm_request
		}
		llm_stream {
			format text
			protocol openai
			name otel
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
`)
	_, evs := loopPost(t, s, "/otel", `{"model":"m","stream":true,"messages":[{"role":"user","content":"What is Caddy?"}]}`)
	if len(evs) == 0 || evs[len(evs)-1].Data != "[DONE]" {
		t.Fatalf("the stream did not complete: %v", evs)
	}

	// The batch span processor exports within 100ms of the spans' end,
	// the collector's file exporter flushes every 100ms.
	var spans []otlpSpan
	deadline := time.Now().Add(20 * time.Second)
	for {
		spans = readOTLPFile(t, out)
		if root := findSpan(spans, "llm_request"); root != nil && len(childrenOf(spans, root)) >= 3 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector did not receive the turn's spans within 20s; it has %d: %v", len(spans), spanNames(spans))
		}
		time.Sleep(100 * time.Millisecond) // polling interval, not an assertion
	}

	root := findSpan(spans, "llm_request")
	if root.ParentSpanID != "" || root.Kind != 2 {
		t.Errorf("Caddy's span: parent %q, kind %d; want a root server span", root.ParentSpanID, root.Kind)
	}
	if root.attr("llm_stream.route") != "otel" || root.attr("llm_stream.rounds") != "2" {
		t.Errorf("Caddy's span lacks llmstream's attributes: %v", root.Attributes)
	}
	kids := childrenOf(spans, root)
	slices.SortFunc(kids, func(a, b otlpSpan) int { return cmpNano(a.Start, b.Start) })
	if got, want := spanNames(kids), []string{"chat m", "execute_tool search_knowledge", "chat m"}; !slices.Equal(got, want) {
		t.Fatalf("the request's children %v, want %v", got, want)
	}
	for i, finish := range []string{`["tool_calls"]`, `["stop"]`} {
		sp := kids[2*i]
		for k, v := range map[string]string{
			"gen_ai.operation.name": "chat", "gen_ai.request.model": "m", "gen_ai.response.model": "llm-mock",
			"gen_ai.response.finish_reasons": finish, "llm_stream.round": strconv.Itoa(i + 1),
		} {
			if got := sp.attr(k); got != v {
				t.Errorf("round %d: %s = %s, want %s", i+1, k, got, v)
			}
		}
		for _, k := range []string{"gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
			if n, err := strconv.Atoi(sp.attr(k)); err != nil || n <= 0 {
				t.Errorf("round %d: %s = %q", i+1, k, sp.attr(k))
			}
		}
		if len(sp.Events) != 1 || sp.Events[0].Name != "first_token" {
			t.Errorf("round %d: events %v, want first_token", i+1, sp.Events)
		}
		if sp.Kind != 3 {
			t.Errorf("round %d: kind %d, want client", i+1, sp.Kind)
		}
	}
	tool := kids[1]
	for k, v := range map[string]string{
		"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_knowledge",
		"llm_stream.tool.server": "demo", "llm_stream.outcome": "ok",
	} {
		if got := tool.attr(k); got != v {
			t.Errorf("tool span: %s = %s, want %s", k, got, v)
		}
	}
	if tool.attr("gen_ai.tool.call.id") == "" {
		t.Error("tool span without gen_ai.tool.call.id")
	}
	// No prompt or reply text without trace_content.
	for _, sp := range kids {
		for _, a := range sp.Attributes {
			if slices.Contains([]string{"gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result"}, a.Key) {
				t.Errorf("span %s carries %s", sp.Name, a.Key)
			}
		}
	}
}

// startCollector runs the collector with an OTLP/HTTP receiver on a free
// loopback port and the file exporter, and returns the receiver's
// host:port and the file it writes.
func startCollector(t *testing.T, bin string) (string, string) {
	t.Helper()
	dir := t.TempDir()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	endpoint := l.Addr().String()
	l.Close()
	out := filepath.Join(dir, "traces.jsonl")
	cfg := fmt.Sprintf(`receivers:
  otlp:
    protocols:
      http:
        endpoint: %s
exporters:
  file:
    path: %s
    flush_interval: 100ms
service:
  telemetry:
    metrics:
      level: none
  pipelines:
    traces:
      receivers: [otlp]
      exporters: [file]
`, endpoint, out)
	if err := os.WriteFile(filepath.Join(dir, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	cmd := exec.Command(bin, "--config", filepath.Join(dir, "config.yaml"))
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("collector log:\n%s", log.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		// The receiver answers an empty export once it listens.
		resp, err := http.Post("http://"+endpoint+"/v1/traces", "application/json", bytes.NewReader([]byte(`{"resourceSpans":[]}`)))
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return endpoint, out
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the collector did not listen on %s: %v\n%s", endpoint, err, log.String())
		}
		time.Sleep(100 * time.Millisecond) // polling interval, not an assertion
	}
}

// otlpSpan is a span as the collector's file exporter writes it (OTLP
// JSON: ids in hex, kinds and times as numbers or strings).
type otlpSpan struct {
	TraceID      string     `json:"traceId"`
	SpanID       string     `json:"spanId"`
	ParentSpanID string     `json:"parentSpanId"`
	Name         string     `json:"name"`
	Kind         int        `json:"kind"`
	Start        string     `json:"startTimeUnixNano"`
	Attributes   []otlpAttr `json:"attributes"`
	Events       []struct {
		Name string `json:"name"`
	} `json:"events"`
}

type otlpAttr struct {
	Key   string          `json:"key"`
	Value json.RawMessage `json:"value"`
}

// attr returns an attribute's value as text: a string as it is, a number
// in decimal, an array as JSON of its strings.
func (s otlpSpan) attr(key string) string {
	for _, a := range s.Attributes {
		if a.Key != key {
			continue
		}
		var v struct {
			StringValue *string `json:"stringValue"`
			IntValue    any     `json:"intValue"`
			ArrayValue  *struct {
				Values []struct {
					StringValue string `json:"stringValue"`
				} `json:"values"`
			} `json:"arrayValue"`
		}
		_ = json.Unmarshal(a.Value, &v)
		switch {
		case v.StringValue != nil:
			return *v.StringValue
		case v.IntValue != nil:
			return fmt.Sprint(v.IntValue)
		case v.ArrayValue != nil:
			var ss []string
			for _, x := range v.ArrayValue.Values {
				ss = append(ss, x.StringValue)
			}
			b, _ := json.Marshal(ss)
			return string(b)
		}
		return string(a.Value)
	}
	return ""
}

// readOTLPFile reads every span the collector wrote so far.
func readOTLPFile(t *testing.T, path string) []otlpSpan {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var spans []otlpSpan
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var line struct {
			ResourceSpans []struct {
				ScopeSpans []struct {
					Spans []otlpSpan `json:"spans"`
				} `json:"scopeSpans"`
			} `json:"resourceSpans"`
		}
		if json.Unmarshal(sc.Bytes(), &line) != nil {
			continue // a line the exporter is still writing
		}
		for _, rs := range line.ResourceSpans {
			for _, ss := range rs.ScopeSpans {
				spans = append(spans, ss.Spans...)
			}
		}
	}
	return spans
}

func findSpan(spans []otlpSpan, name string) *otlpSpan {
	for i := range spans {
		if spans[i].Name == name {
			return &spans[i]
		}
	}
	return nil
}

func childrenOf(spans []otlpSpan, parent *otlpSpan) []otlpSpan {
	var out []otlpSpan
	for _, s := range spans {
		if s.TraceID == parent.TraceID && s.ParentSpanID == parent.SpanID {
			out = append(out, s)
		}
	}
	return out
}

func spanNames(spans []otlpSpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name)
	}
	return out
}

// cmpNano compares two decimal nanosecond timestamps.
func cmpNano(a, b string) int {
	x, _ := strconv.ParseUint(a, 10, 64)
	y, _ := strconv.ParseUint(b, 10, 64)
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	return 0
}
