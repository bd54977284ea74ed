package caddymodule

import (
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/pipeline"
)

// record logs a finished stream and counts it. The fields describe the
// stream (ids, protocol, format, model, outcome, sizes, timings, and
// left_out: what the request format could not forward, such as a
// Responses client's hosted tools); no prompt, reply text, API key or
// Authorization header is ever among them. The same fields are added to
// the access log entry, which Caddy writes at info level.
func (h *Handler) record(r *http.Request, meta transform.Meta, leftOut string, p *pipeline.Pipeline, sw *streamWriter, start time.Time) {
	sum := p.Summary()
	dur := time.Since(start)
	var ttft time.Duration
	if !sum.FirstEvent.IsZero() {
		ttft = sum.FirstEvent.Sub(start)
	}
	outcome := "completed"
	switch {
	case sum.ErrorCode != "":
		outcome = sum.ErrorCode
	case sw.gone || !p.Ended():
		outcome = "client_gone"
	}
	in, out, usage := usageTokens(p.Usage())
	h.metrics.finished(ended{
		route: sw.route, protocol: h.proto.Name, format: sum.Format, model: h.metrics.modelLabel(h.settings.Model, sum.Model),
		outcome: outcome, finish: sum.FinishReason, ttft: ttft,
		violations: sum.Violations, violationCount: sum.ViolationCount,
		tokensIn: in, tokensOut: out, usage: usage, rounds: sum.Rounds,
	})
	sw.trace.finish(outcome, sum.Rounds)

	fields := []zap.Field{
		zap.String("message_id", meta.MessageID),
		zap.String("request_id", meta.RequestID),
		zap.String("protocol", h.proto.Name),
		zap.String("format", sum.Format),
		zap.String("model", sum.Model),
		zap.String("outcome", outcome),
		zap.String("finish_reason", sum.FinishReason),
		zap.Int64("reply_bytes", sum.ContentBytes),
		zap.Int64("reasoning_bytes", sum.ReasoningBytes),
		zap.Int("tool_calls", sum.ToolCalls),
		zap.Int("violation_count", sum.ViolationCount),
		zap.Strings("violations", sum.Violations),
		zap.Duration("duration", dur),
		zap.Duration("ttft", ttft),
	}
	if leftOut != "" {
		fields = append(fields, zap.String("left_out", leftOut))
	}
	if sum.Rounds > 1 || sum.ServerCalls > 0 {
		// The agent loop (CONTRACT.md §12): counts only, never what the
		// tools were given or returned.
		fields = append(fields, zap.Int("rounds", sum.Rounds), zap.Int("server_calls", sum.ServerCalls))
	}
	if len(sum.Retries) > 0 {
		// Codes only: a failure's detail may quote the reply.
		fields = append(fields, zap.Int("retries", len(sum.Retries)), zap.Strings("retry_reasons", sum.Retries))
	}
	if extra, ok := r.Context().Value(caddyhttp.ExtraLogFieldsCtxKey).(*caddyhttp.ExtraLogFields); ok {
		extra.Add(zap.Dict("llm_stream", fields...))
	}
	lvl := zapcore.DebugLevel
	if sum.ErrorCode != "" {
		lvl = zapcore.WarnLevel
	}
	if c := h.logger.Check(lvl, "stream ended"); c != nil {
		c.Write(fields...)
	}
}
