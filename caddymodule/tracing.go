package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/pipeline"
)

// Traces (CONTRACT.md §15): when Caddy's tracing handler wraps the route,
// the request arrives with its span in the context, and each upstream
// call (a round of the agent loop, or a retry) and each tool call the
// gateway runs gets a child span with the OpenTelemetry GenAI semantic
// conventions' attributes (gen_ai.*: the operation, the models, the
// usage, the finish reasons, the tool's name and call id). The spans are
// made with the tracer provider of the request's span, so they go
// wherever Caddy's tracing sends its own (its OTEL_* environment).
// Without tracing the request's span does not record, newTrace returns
// nil, and every method of a nil *turnTrace returns at once: nothing is
// added to a stream that is not traced, and nothing is ever added per
// delta (a reply's first token is an event added when the reply ends).
//
// No prompt, reply, tool argument or result text is put in a span unless
// the route says trace_content.

// tracerName is the instrumentation scope of llmstream's spans.
const tracerName = "github.com/llmstream/llmstream/caddymodule"

// The GenAI semantic conventions' attribute keys (OpenTelemetry semantic
// conventions, gen-ai-spans.md and gen-ai-agent-spans.md).
const (
	attrOperation     = attribute.Key("gen_ai.operation.name")
	attrProvider      = attribute.Key("gen_ai.provider.name")
	attrRequestModel  = attribute.Key("gen_ai.request.model")
	attrResponseModel = attribute.Key("gen_ai.response.model")
	attrInputTokens   = attribute.Key("gen_ai.usage.input_tokens")
	attrOutputTokens  = attribute.Key("gen_ai.usage.output_tokens")
	attrFinish        = attribute.Key("gen_ai.response.finish_reasons")
	attrToolName      = attribute.Key("gen_ai.tool.name")
	attrToolCallID    = attribute.Key("gen_ai.tool.call.id")
	attrToolType      = attribute.Key("gen_ai.tool.type")
	attrToolArgs      = attribute.Key("gen_ai.tool.call.arguments")
	attrToolResult    = attribute.Key("gen_ai.tool.call.result")
	attrInput         = attribute.Key("gen_ai.input.messages")
	attrOutput        = attribute.Key("gen_ai.output.messages")
	attrTTFT          = attribute.Key("gen_ai.server.time_to_first_token")
	attrErrorType     = attribute.Key("error.type")

	// llmstream's own, on its spans and on the request's.
	attrRoute    = attribute.Key("llm_stream.route")
	attrProtocol = attribute.Key("llm_stream.protocol")
	attrRound    = attribute.Key("llm_stream.round")
	attrCall     = attribute.Key("llm_stream.call")
	attrServer   = attribute.Key("llm_stream.tool.server")
	attrOutcome  = attribute.Key("llm_stream.outcome")
	attrRounds   = attribute.Key("llm_stream.rounds")
)

// turnTrace is one traced request's spans.
type turnTrace struct {
	tracer   trace.Tracer
	parent   context.Context // the request's context, holding its span
	request  trace.Span
	model    string // the model sent upstream
	provider string
	content  bool // trace_content
	call     trace.Span
	start    time.Time // the call's
	calls    int       // upstream calls so far: rounds and retries
}

// newTrace returns the request's trace, nil when the request is not
// traced (no tracing handler, or a span the sampler dropped).
func (h *Handler) newTrace(r *http.Request, c *chat, route string) *turnTrace {
	span := trace.SpanFromContext(r.Context())
	if !span.IsRecording() {
		return nil
	}
	span.SetAttributes(attrRoute.String(route), attrProtocol.String(h.proto.Name))
	return &turnTrace{
		tracer:   span.TracerProvider().Tracer(tracerName),
		parent:   r.Context(),
		request:  span,
		model:    c.info.Model,
		provider: h.settings.Provider,
		content:  h.TraceContent,
	}
}

// startCall starts the span of the upstream call r is about to make with
// body, and returns r carrying it: the upstream's own spans, if it traces,
// become its children (traceparent, where Caddy's tracing put one).
func (t *turnTrace) startCall(r *http.Request, body []byte, round int) *http.Request {
	if t == nil {
		return r
	}
	t.calls++
	name := "chat"
	if t.model != "" {
		name += " " + t.model
	}
	attrs := []attribute.KeyValue{
		attrOperation.String("chat"), attrProvider.String(t.provider), attrRequestModel.String(t.model),
		attrRound.Int(round), attrCall.Int(t.calls),
	}
	if t.content {
		attrs = append(attrs, attrInput.String(requestMessages(body)))
	}
	ctx, span := t.tracer.Start(t.parent, name, trace.WithSpanKind(trace.SpanKindClient), trace.WithAttributes(attrs...))
	t.call, t.start = span, time.Now()
	if r.Header.Get("Traceparent") != "" {
		propagation.TraceContext{}.Inject(ctx, propagation.HeaderCarrier(r.Header))
	}
	return r.WithContext(trace.ContextWithSpan(r.Context(), span))
}

// endCall ends the upstream call's span with what its reply told: the
// model, usage and finish reason, the first token as an event, and the
// error that ended the stream, if one did.
func (t *turnTrace) endCall(rep pipeline.Reply) {
	if t == nil || t.call == nil {
		return
	}
	span := t.call
	t.call = nil
	if rep.Model != "" {
		span.SetAttributes(attrResponseModel.String(rep.Model))
	}
	if in, out, ok := usageTokens(rep.Usage); ok {
		span.SetAttributes(attrInputTokens.Int64(in), attrOutputTokens.Int64(out))
	}
	if rep.FinishReason != "" {
		span.SetAttributes(attrFinish.StringSlice([]string{rep.FinishReason}))
	}
	if !rep.FirstEvent.IsZero() {
		span.AddEvent("first_token", trace.WithTimestamp(rep.FirstEvent),
			trace.WithAttributes(attrTTFT.Float64(rep.FirstEvent.Sub(t.start).Seconds())))
	}
	if t.content && rep.Text != nil {
		span.SetAttributes(attrOutput.String(replyMessages(rep.Text, rep.FinishReason)))
	}
	if rep.ErrorCode != "" {
		span.SetAttributes(attrErrorType.String(rep.ErrorCode))
		span.SetStatus(codes.Error, rep.ErrorCode)
	}
	span.End()
}

// toolSpan starts the span of a tool call the gateway runs.
func (t *turnTrace) toolSpan(c pipeline.ServerCall) trace.Span {
	if t == nil {
		return nil
	}
	attrs := []attribute.KeyValue{
		attrOperation.String("execute_tool"), attrToolName.String(c.Name), attrToolCallID.String(c.ID),
		attrToolType.String("extension"), attrServer.String(c.Tool.Server),
	}
	if t.content {
		attrs = append(attrs, attrToolArgs.String(string(c.Arguments)))
	}
	_, span := t.tracer.Start(t.parent, "execute_tool "+c.Name, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attrs...))
	return span
}

// endTool ends a tool call's span with its outcome; with trace_content,
// the result as the model was given it (cut at maxBytes).
func (t *turnTrace) endTool(span trace.Span, rec toolserver.CallRecord, res agent.Result, maxBytes int) {
	if t == nil || span == nil {
		return
	}
	span.SetAttributes(attrOutcome.String(rec.Outcome))
	if t.content {
		span.SetAttributes(attrToolResult.String(agent.ModelText(res, maxBytes)))
	}
	if rec.Outcome != "ok" {
		span.SetAttributes(attrErrorType.String(rec.Outcome))
		span.SetStatus(codes.Error, rec.Outcome)
	}
	span.End()
}

// finish adds the turn's outcome to the request's span.
func (t *turnTrace) finish(outcome string, rounds int) {
	if t == nil {
		return
	}
	t.request.SetAttributes(attrOutcome.String(outcome), attrRounds.Int(rounds))
}

// usageTokens reads the input and output token counts of a usage object:
// OpenAI's prompt_tokens and completion_tokens, or input_tokens and
// output_tokens. It runs once per reply, never per delta.
func usageTokens(u []byte) (in, out int64, ok bool) {
	if len(u) == 0 {
		return 0, 0, false
	}
	var v struct {
		Prompt     *int64 `json:"prompt_tokens"`
		Completion *int64 `json:"completion_tokens"`
		Input      *int64 `json:"input_tokens"`
		Output     *int64 `json:"output_tokens"`
	}
	if json.Unmarshal(u, &v) != nil {
		return 0, 0, false
	}
	pick := func(a, b *int64) (int64, bool) {
		switch {
		case a != nil:
			return *a, true
		case b != nil:
			return *b, true
		}
		return 0, false
	}
	in, okIn := pick(v.Prompt, v.Input)
	out, okOut := pick(v.Completion, v.Output)
	return in, out, okIn || okOut
}

// requestMessages is the messages array of an upstream request body, as
// sent (trace_content only).
func requestMessages(body []byte) string {
	var v struct {
		Messages json.RawMessage `json:"messages"`
	}
	if json.Unmarshal(body, &v) != nil || len(v.Messages) == 0 {
		return "[]"
	}
	var b bytes.Buffer
	if json.Compact(&b, v.Messages) != nil {
		return string(v.Messages)
	}
	return b.String()
}

// replyMessages is a reply's text as the GenAI conventions' output
// messages (trace_content only).
func replyMessages(text []byte, finish string) string {
	type part struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	}
	out, _ := json.Marshal([]struct {
		Role         string `json:"role"`
		Parts        []part `json:"parts"`
		FinishReason string `json:"finish_reason,omitempty"`
	}{{Role: "assistant", Parts: []part{{Type: "text", Content: string(text)}}, FinishReason: finish}})
	return string(out)
}

// endCall ends the trace's span of the upstream call whose reply just
// ended, reading the reply under the writer's lock (the timers share the
// pipeline).
func (sw *streamWriter) endCall() {
	if sw.trace == nil {
		return
	}
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.trace.endCall(sw.p.Reply())
}
