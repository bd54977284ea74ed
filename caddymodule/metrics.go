package caddymodule

import (
	"errors"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the handler's Prometheus collectors. They are created once per
// process and registered with each config load's registry (a reload gets a
// new registry: mholt/caddy-ratelimit#102, CADDY.md P14). Every label has a
// small fixed set of values: no model names, users or keys.
type metrics struct {
	streams    *prometheus.CounterVec
	rejections *prometheus.CounterVec
	ttft       *prometheus.HistogramVec
	violations *prometheus.CounterVec
	retries    *prometheus.CounterVec
}

var (
	metricsOnce   sync.Once
	sharedMetrics *metrics
)

func newMetrics() *metrics {
	const ns, sub = "caddy", "llm_stream"
	return &metrics{
		streams: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "streams_total",
			Help: "Streams ended, by protocol, format, outcome (completed, client_gone or an error code) and finish reason.",
		}, []string{"protocol", "format", "outcome", "finish_reason"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "rejected_requests_total",
			Help: "Requests answered with a 4xx before reaching the upstream, by error code.",
		}, []string{"code"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: ns, Subsystem: sub, Name: "time_to_first_event_seconds",
			Help:    "Time from the request to the first content event written to the client.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 10),
		}, []string{"protocol"}),
		violations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "violations_total",
			Help: "Structural violations found in model replies, by protocol and format.",
		}, []string{"protocol", "format"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Subsystem: sub, Name: "retries_total",
			Help: "Replies retried because they failed validation, by the failure code that caused the retry.",
		}, []string{"reason"}),
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
	for _, c := range []prometheus.Collector{m.streams, m.rejections, m.ttft, m.violations, m.retries} {
		var already prometheus.AlreadyRegisteredError
		if err := reg.Register(c); err != nil && !errors.As(err, &already) {
			return nil, err
		}
	}
	return m, nil
}

// finished counts one ended stream.
func (m *metrics) finished(protocol, format, outcome, finish string, ttft time.Duration, violations int) {
	m.streams.WithLabelValues(protocol, format, outcome, finishLabel(finish)).Inc()
	if ttft > 0 {
		m.ttft.WithLabelValues(protocol).Observe(ttft.Seconds())
	}
	if violations > 0 {
		m.violations.WithLabelValues(protocol, format).Add(float64(violations))
	}
}

// retried counts one retry of a reply that failed validation; reason is
// a validate failure code, a fixed set.
func (m *metrics) retried(reason string) { m.retries.WithLabelValues(reason).Inc() }

// rejected counts a request refused before the upstream.
func (m *metrics) rejected(code string) { m.rejections.WithLabelValues(code).Inc() }

// finishLabel bounds the finish_reason label to the values OpenAI defines:
// an upstream can send any string.
func finishLabel(reason string) string {
	switch reason {
	case "", "stop", "length", "tool_calls", "content_filter", "function_call":
		return reason
	}
	return "other"
}
