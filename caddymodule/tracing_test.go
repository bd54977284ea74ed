package caddymodule

import (
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// The trace spans of a turn (CONTRACT.md §15), in process: a test handler
// stands where Caddy's tracing handler stands (a server span in the
// request's context, its traceparent injected into the request's headers,
// as modules/caddyhttp/tracing does), with a provider whose spans the test
// reads. TestTracesReachCollector (tracing_otel_test.go) sends the same
// spans through Caddy's own tracing handler to a real OpenTelemetry
// Collector.

var (
	testSpans    = tracetest.NewSpanRecorder()
	testProvider = sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(testSpans))
	// upstreamTraceparents are the traceparent headers the mock received.
	upstreamTraceparents struct {
		sync.Mutex
		values []string
	}
)

func init() {
	caddy.RegisterModule(testServerSpan{})
	caddy.RegisterModule(testHeaderTap{})
	httpcaddyfile.RegisterHandlerDirective("llm_test_server_span", func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		h.Next()
		return testServerSpan{}, nil
	})
	httpcaddyfile.RegisterHandlerDirective("llm_test_header_tap", func(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
		h.Next()
		return testHeaderTap{}, nil
	})
}

// testServerSpan starts a server span around the rest of the route.
type testServerSpan struct{}

func (testServerSpan) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.llm_test_server_span", New: func() caddy.Module { return testServerSpan{} }}
}

func (testServerSpan) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	ctx, span := testProvider.Tracer("test").Start(r.Context(), "server", trace.WithSpanKind(trace.SpanKindServer))
	defer span.End()
	propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(r.Header))
	return next.ServeHTTP(w, r.WithContext(ctx))
}

// testHeaderTap records the traceparent of the requests it passes on.
type testHeaderTap struct{}

func (testHeaderTap) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{ID: "http.handlers.llm_test_header_tap", New: func() caddy.Module { return testHeaderTap{} }}
}

func (testHeaderTap) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	upstreamTraceparents.Lock()
	upstreamTraceparents.values = append(upstreamTraceparents.values, r.Header.Get("Traceparent"))
	upstreamTraceparents.Unlock()
	return next.ServeHTTP(w, r)
}

// traceSite serves /traced (and /traced_content, with trace_content) in
// front of the loop's scripted mock: round 1 calls search_knowledge on the
// demo server, round 2 answers.
func traceSite(t *testing.T) site {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	route := func(path, extra string) string {
		return `	handle ` + path + ` {
		route {
			llm_test_server_span
			llm_stream {
				format text
				protocol openai
				name ` + strings.TrimPrefix(path, "/") + `
				` + extra + `
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
	}
`
	}
	body := `	handle /mock/* {
		route {
			llm_test_header_tap
			llm_mock {
				by_round
				interval 0
				reply_text "Let me search."
				tool_calls_file testdata/loop/search_call.json
				reply_text "Found: {{tool_result}}"
				tool_calls_file testdata/loop/no_calls.json
			}
		}
	}
` + route("/traced", "") + route("/traced_content", "trace_content")
	return startSite(t, "", body)
}

// spanAttrs are a span's attributes by key.
func spanAttrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// turnSpans sends one chat request to path and returns the spans of its
// trace: the server span, and its children in the order they started.
func turnSpans(t *testing.T, s site, path string) (sdktrace.ReadOnlySpan, []sdktrace.ReadOnlySpan) {
	t.Helper()
	testSpans.Reset()
	upstreamTraceparents.Lock()
	upstreamTraceparents.values = nil
	upstreamTraceparents.Unlock()
	_, evs := loopPost(t, s, path, `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"What is Caddy?"}]}`)
	if len(evs) == 0 || evs[len(evs)-1].Data != "[DONE]" {
		t.Fatalf("the stream did not complete: %v", evs)
	}
	// The server span ends when the handler returns, just after the body.
	deadline := time.Now().Add(5 * time.Second)
	var server sdktrace.ReadOnlySpan
	var ended []sdktrace.ReadOnlySpan
	for server == nil {
		ended = testSpans.Ended()
		for _, sp := range ended {
			if sp.Name() == "server" {
				server = sp
			}
		}
		if server == nil && time.Now().After(deadline) {
			t.Fatalf("no server span ended; spans: %d", len(ended))
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not an assertion
	}
	var children []sdktrace.ReadOnlySpan
	for _, sp := range ended {
		if sp.SpanContext().TraceID() != server.SpanContext().TraceID() || sp == server {
			continue
		}
		if sp.Parent().SpanID() != server.SpanContext().SpanID() {
			t.Errorf("span %q is not a child of the request's span", sp.Name())
		}
		children = append(children, sp)
	}
	slices.SortFunc(children, func(a, b sdktrace.ReadOnlySpan) int { return a.StartTime().Compare(b.StartTime()) })
	return server, children
}

func TestTraceSpans(t *testing.T) {
	s := traceSite(t)

	t.Run("a span per upstream call and per tool call, with the GenAI attributes", func(t *testing.T) {
		server, spans := turnSpans(t, s, "/traced")
		var names []string
		for _, sp := range spans {
			names = append(names, sp.Name())
		}
		if want := []string{"chat m", "execute_tool search_knowledge", "chat m"}; !slices.Equal(names, want) {
			t.Fatalf("child spans %v, want %v", names, want)
		}
		for i, round := range []int{1, 2} {
			sp := spans[2*i]
			a := spanAttrs(sp)
			if sp.SpanKind() != trace.SpanKindClient {
				t.Errorf("round %d: kind %v, want client", round, sp.SpanKind())
			}
			want := map[attribute.Key]any{
				"gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
				"gen_ai.request.model": "m", "gen_ai.response.model": "llm-mock",
				"llm_stream.round": int64(round), "llm_stream.call": int64(round),
			}
			for k, v := range want {
				if got := a[k].AsInterface(); got != v {
					t.Errorf("round %d: %s = %v, want %v", round, k, got, v)
				}
			}
			finish := []string{"tool_calls", "stop"}[i]
			if got := a["gen_ai.response.finish_reasons"].AsStringSlice(); !slices.Equal(got, []string{finish}) {
				t.Errorf("round %d: finish reasons %v, want [%s]", round, got, finish)
			}
			if a["gen_ai.usage.input_tokens"].AsInt64() <= 0 || a["gen_ai.usage.output_tokens"].AsInt64() <= 0 {
				t.Errorf("round %d: usage %v / %v, want the mock's counts", round, a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"])
			}
			evs := sp.Events()
			if len(evs) != 1 || evs[0].Name != "first_token" || evs[0].Time.Before(sp.StartTime()) || evs[0].Time.After(sp.EndTime()) {
				t.Errorf("round %d: events %v, want one first_token within the span", round, evs)
			}
			for _, k := range []attribute.Key{"gen_ai.input.messages", "gen_ai.output.messages"} {
				if _, ok := a[k]; ok {
					t.Errorf("round %d: %s recorded without trace_content", round, k)
				}
			}
		}
		tool := spanAttrs(spans[1])
		for k, v := range map[attribute.Key]string{
			"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search_knowledge",
			"llm_stream.tool.server": "demo", "llm_stream.outcome": "ok",
		} {
			if got := tool[k].AsString(); got != v {
				t.Errorf("tool span: %s = %q, want %q", k, got, v)
			}
		}
		if !strings.HasPrefix(tool["gen_ai.tool.call.id"].AsString(), "call_") {
			t.Errorf("tool span: call id %q", tool["gen_ai.tool.call.id"].AsString())
		}
		if _, ok := tool["gen_ai.tool.call.arguments"]; ok {
			t.Error("tool arguments recorded without trace_content")
		}
		// The tool ran between the rounds.
		if spans[1].StartTime().Before(spans[0].EndTime()) || spans[2].StartTime().Before(spans[1].EndTime()) {
			t.Error("the spans overlap: round 1, the tool call and round 2 ran one after another")
		}
		sa := spanAttrs(server)
		if sa["llm_stream.route"].AsString() != "traced" || sa["llm_stream.outcome"].AsString() != "completed" || sa["llm_stream.rounds"].AsInt64() != 2 {
			t.Errorf("the request's span: %v", server.Attributes())
		}
		// Each upstream call carried its own span as the parent of what the
		// upstream traces.
		upstreamTraceparents.Lock()
		got := upstreamTraceparents.values
		upstreamTraceparents.Unlock()
		if len(got) != 2 {
			t.Fatalf("traceparents %v, want one per round", got)
		}
		for i, tp := range got {
			if want := spans[2*i].SpanContext().SpanID().String(); !strings.Contains(tp, want) {
				t.Errorf("round %d's request carried traceparent %q, want its span %s", i+1, tp, want)
			}
		}
	})

	t.Run("trace_content adds the messages, the reply and the tool's arguments and result", func(t *testing.T) {
		_, spans := turnSpans(t, s, "/traced_content")
		if len(spans) != 3 {
			t.Fatalf("%d spans", len(spans))
		}
		r1, tool, r2 := spanAttrs(spans[0]), spanAttrs(spans[1]), spanAttrs(spans[2])
		if in := r1["gen_ai.input.messages"].AsString(); !strings.Contains(in, "What is Caddy?") {
			t.Errorf("round 1 input messages %q", in)
		}
		if in := r2["gen_ai.input.messages"].AsString(); !strings.Contains(in, `"role":"tool"`) {
			t.Errorf("round 2 input messages %q lack the tool message", in)
		}
		if out := r1["gen_ai.output.messages"].AsString(); !strings.Contains(out, "Let me search.") {
			t.Errorf("round 1 output %q", out)
		}
		if out := r2["gen_ai.output.messages"].AsString(); !strings.Contains(out, "Found: ") {
			t.Errorf("round 2 output %q", out)
		}
		if args := tool["gen_ai.tool.call.arguments"].AsString(); !strings.Contains(args, "caddy") {
			t.Errorf("tool arguments %q", args)
		}
		if res := tool["gen_ai.tool.call.result"].AsString(); !strings.Contains(res, "Caddy is a web server") {
			t.Errorf("tool result %q", res)
		}
	})
}
