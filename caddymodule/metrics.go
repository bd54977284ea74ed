package caddymodule

import (
	"errors"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmstream/llmstream/toolserver"
)

// metrics are the handler's Prometheus collectors (CONTRACT.md §15). They
// are created once per process and registered with each config load's
// registry (a reload gets a new registry: mholt/caddy-ratelimit#102,
// CADDY.md P14). No label holds request data: route names and models
// come from the config, error and violation codes from llmstream's own
// tables, tool servers from the config and tools from their servers'
// lists; what the upstream or a server names (a model, a tool) is kept
// to a bounded set of values, then "other". Everything is counted once
// per stream, round or tool call, never per delta.
type metrics struct {
	streams    *prometheus.CounterVec
	rejections *prometheus.CounterVec
	ttfe       *prometheus.HistogramVec
	violations *prometheus.CounterVec
	retries    *prometheus.CounterVec

	requests      *prometheus.CounterVec
	ttft          *prometheus.HistogramVec
	tokens        *prometheus.CounterVec
	rounds        *prometheus.HistogramVec
	toolCalls     *prometheus.CounterVec
	toolDurations *prometheus.HistogramVec

	models, tools *boundedLabel
}

var (
	metricsOnce   sync.Once
	sharedMetrics *metrics
)

// Label bounds: the distinct models the upstreams report and the tools the
// servers list, per process, before "other".
const (
	maxModelLabels = 64
	maxToolLabels  = 256
)

func newMetrics() *metrics {
	const ns, sub = "caddy", "llm_stream"
	route := []string{"route", "protocol", "model"}
	return &metrics{
		streams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "streams_total",
			Help: "Streams ended, by protocol, format, outcome (completed, client_gone or an error code) and finish reason.",
		}, []string{"protocol", "format", "outcome", "finish_reason"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "rejected_requests_total",
			Help: "Requests answered with a 4xx before reaching the upstream, by error code.",
		}, []string{"code"}),
		ttfe: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "time_to_first_event_seconds",
			Help:    "Time from the request to the first content event written to the client.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 10),
		}, []string{"protocol"}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "violations_total",
			Help: "Structural violations found in model replies, by route, protocol, format and code.",
		}, []string{"route", "protocol", "format", "code"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "retries_total",
			Help: "Replies retried because they failed validation, by the failure code that caused the retry.",
		}, []string{"reason"}),

		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "requests_total",
			Help: "Chat requests streamed, by route, protocol, model and outcome (completed, client_gone or an error code).",
		}, append(route, "outcome")),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "time_to_first_token_seconds",
			Help:    "Time from the request to the first content event (reasoning, answer or tool call) written to the client.",
			Buckets: []float64{0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32},
		}, route),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "tokens_total",
			Help: "Tokens the upstream reported in its usage, summed over a turn's rounds, by route, protocol, model and type (input or output).",
		}, append(route, "type")),
		rounds: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "rounds",
			Help:    "Upstream rounds per request: 1, or more when the gateway ran tools (the agent loop); retries not counted.",
			Buckets: []float64{1, 2, 3, 4, 6, 8, 12, 16},
		}, []string{"route", "protocol"}),
		toolCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "tool_calls_total",
			Help: "Tool calls the gateway ran, by route, server, tool and outcome (ok, tool_error, timeout, …).",
		}, []string{"route", "server", "tool", "outcome"}),
		toolDurations: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "tool_call_duration_seconds",
			Help:    "Duration of the tool calls the gateway ran, by route, server and tool.",
			Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
		}, []string{"route", "server", "tool"}),

		models: newBoundedLabel(maxModelLabels),
		tools:  newBoundedLabel(maxToolLabels),
	}
}

// registerMetrics registers the collectors with reg; a nil registry (unit
// tests without an app) leaves them unregistered but usable.
func registerMetrics(reg prometheus.Registerer) (*metrics, error) {
	metricsOnce.Do(func() { sharedMetrics = newMetrics() })
	if reg == nil {
		return sharedMetrics, nil
	}
	m := sharedMetrics
	for _, c := range m.collectors() {
		var already prometheus.AlreadyRegisteredError
		if err := reg.Register(c); err != nil && !errors.As(err, &already) {
			return nil, err
		}
	}
	return m, nil
}

func (m *metrics) collectors() []prometheus.Collector {
	return []prometheus.Collector{m.streams, m.rejections, m.ttfe, m.violations, m.retries,
		m.requests, m.ttft, m.tokens, m.rounds, m.toolCalls, m.toolDurations}
}

// ended is what one ended stream tells the metrics.
type ended struct {
	route, protocol, format, model string
	outcome, finish                string
	ttft                           time.Duration
	violations                     []string // codes, at most pipeline.MaxViolations
	violationCount                 int
	tokensIn, tokensOut            int64
	usage                          bool // the upstream reported usage
	rounds                         int
}

// finished counts one ended stream.
func (m *metrics) finished(e ended) {
	m.streams.WithLabelValues(e.protocol, e.format, e.outcome, finishLabel(e.finish)).Inc()
	m.requests.WithLabelValues(e.route, e.protocol, e.model, e.outcome).Inc()
	if e.ttft > 0 {
		m.ttfe.WithLabelValues(e.protocol).Observe(e.ttft.Seconds())
		m.ttft.WithLabelValues(e.route, e.protocol, e.model).Observe(e.ttft.Seconds())
	}
	if e.usage {
		m.tokens.WithLabelValues(e.route, e.protocol, e.model, "input").Add(float64(e.tokensIn))
		m.tokens.WithLabelValues(e.route, e.protocol, e.model, "output").Add(float64(e.tokensOut))
	}
	if e.rounds > 0 {
		m.rounds.WithLabelValues(e.route, e.protocol).Observe(float64(e.rounds))
	}
	// The listed codes one by one; those beyond the list (a stream
	// forwards at most pipeline.MaxViolations) under the code that stands
	// for them, so that the sum is the stream's count.
	for _, code := range e.violations {
		m.violations.WithLabelValues(e.route, e.protocol, e.format, code).Inc()
	}
	if rest := e.violationCount - len(e.violations); rest > 0 {
		m.violations.WithLabelValues(e.route, e.protocol, e.format, "too_many_violations").Add(float64(rest))
	}
}

// toolCalled counts one tool call the gateway ran.
func (m *metrics) toolCalled(route string, rec toolserver.CallRecord) {
	tool := labelText(rec.Tool)
	if tool != "" && !m.tools.admit(rec.Server+"\x00"+tool) {
		tool = "other"
	}
	m.toolCalls.WithLabelValues(route, rec.Server, tool, rec.Outcome).Inc()
	m.toolDurations.WithLabelValues(route, rec.Server, tool).Observe(rec.Duration.Seconds())
}

// retried counts one retry of a reply that failed validation; reason is
// a validate failure code, a fixed set.
func (m *metrics) retried(reason string) { m.retries.WithLabelValues(reason).Inc() }

// rejected counts a request refused before the upstream.
func (m *metrics) rejected(code string) { m.rejections.WithLabelValues(code).Inc() }

// modelLabel is the model label of a stream: the route's configured model
// (config), else the one the upstream reported, kept to a bounded set.
func (m *metrics) modelLabel(configured, reported string) string {
	if configured != "" {
		return configured
	}
	v := labelText(reported)
	if v != "" && !m.models.admit(v) {
		return "other"
	}
	return v
}

// finishLabel bounds the finish_reason label to the values OpenAI defines:
// an upstream can send any string.
func finishLabel(reason string) string {
	switch reason {
	case "", "stop", "length", "tool_calls", "content_filter", "function_call":
		return reason
	}
	return "other"
}

// boundedLabel keeps a label whose values come from outside the config to
// at most max distinct values per process; later ones are "other". It is
// consulted once per stream or call, so a mutex is cheap enough.
type boundedLabel struct {
	mu   sync.Mutex
	seen map[string]struct{}
	max  int
}

func newBoundedLabel(max int) *boundedLabel {
	return &boundedLabel{seen: make(map[string]struct{}), max: max}
}

// admit reports whether v is one of the values the label keeps: those
// seen before, and new ones while fewer than max were.
func (b *boundedLabel) admit(v string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if _, ok := b.seen[v]; ok {
		return true
	}
	if len(b.seen) >= b.max {
		return false
	}
	b.seen[v] = struct{}{}
	return true
}

// labelText makes a name from outside llmstream fit a label value: valid
// UTF-8 (Prometheus refuses anything else), at most 128 bytes (a label is
// a name, not a document).
func labelText(v string) string {
	v = strings.ToValidUTF8(v, "\uFFFD")
	if len(v) <= 128 {
		return v
	}
	cut := 128
	for cut > 0 && !utf8.RuneStart(v[cut]) {
		cut--
	}
	return v[:cut]
}
