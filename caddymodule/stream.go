package caddymodule

import (
	"context"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/pipeline"
)

// stream proxies a shaped chat request through next and re-encodes the
// reply into the route's protocol as it arrives: a pooled pipeline, the
// writer that feeds it (writer.go) and its timers (keepalive.go), and
// the next round of the turn (turnloop.go) for each reply that called
// tools the gateway runs or that its validation refuses. The stream is
// logged and counted when it ends (logging.go).
func (h *Handler) stream(w http.ResponseWriter, r *http.Request, c *chat, next caddyhttp.Handler) error {
	meta := transform.Meta{
		MessageID:  newID("msg_"),
		RequestID:  c.rid,
		Provider:   h.settings.Provider,
		EndpointID: h.settings.EndpointID,
		Model:      c.info.Model,
		Request:    c.info.Facts,
		// Only an openai client chooses between a stream and one JSON body;
		// every other protocol is a stream (CONTRACT §3).
		Stream:         c.info.Stream || !h.proto.ClientChoosesStream,
		IncludeUsage:   c.info.IncludeUsage,
		ReasoningTitle: h.settings.ReasoningTitle,
		Limits:         h.settings.Limits,
		Created:        c.start,
	}
	if c.resume != nil && c.info.ContinueMessage != "" {
		// The approvals of an AI SDK page resume its last message: the
		// stream continues it (CONTRACT.md §13).
		meta.MessageID = c.info.ContinueMessage
	}
	if c.repl != nil {
		c.repl.Set("http.llm_stream.message_id", meta.MessageID)
		c.repl.Set("http.llm_stream.request_id", meta.RequestID)
	}
	if c.resp != nil && c.resp.noGenerate {
		h.answerEmpty(w, c.resp, meta) // responses_store.go
		return nil
	}

	p := h.pool.Get().(*pipeline.Pipeline)
	enc := h.proto.NewEncoder(meta)
	if c.resp != nil {
		enc = c.resp.encoder(enc) // stores the response when it ends
	}
	p.Reset(c.turn.encoder(enc, meta), meta)
	p.Validate(c.check)
	p.SetLoop(c.tools.loop(h))
	p.CaptureReplies(h.TraceContent)
	ctx, cancel := context.WithCancelCause(r.Context())
	sw := newStreamWriter(w, h.writerRoute(), p, meta, r.Context(), cancel)
	sw.route = h.routeLabel(serverOf(r))
	sw.trace = h.newTrace(r, c, sw.route) // tracing.go
	if h.proto.EarlyStart {
		sw.open()
	}
	sw.startTimers()
	defer func() {
		sw.stopTimers()
		cancel(errUpstreamDone)
		h.record(r, meta, c.info.LeftOut, p, sw, c.start)
		h.pool.Put(p)
	}()
	// The route's subscribed resources reach the client while the stream
	// is open (resources.go).
	c.next, c.req = next, r.WithContext(ctx)
	c.updates = h.watchResources(sw, c.tools)
	defer c.updates.stop()
	if c.resume != nil {
		// The answer resumes a parked round: the stream opens at once and
		// begins with its calls (resume.go).
		p.Resume(c.resume.rec.Round, c.resume.answers)
		sw.open()
	}
	return h.turns(sw, r.WithContext(ctx), c, next) // turnloop.go
}

// proxy runs next with sw and ends the client's response. reverse_proxy
// panics with http.ErrAbortHandler when the upstream body fails mid-stream;
// the client's stream is ours, so it gets the protocol's error event and a
// clean end instead of a cut connection. Any other panic, or an abort with
// the client gone, goes on up.
func (h *Handler) proxy(sw *streamWriter, r *http.Request, next caddyhttp.Handler) (err error) {
	defer func() {
		if rec := recover(); rec != nil {
			if rec != http.ErrAbortHandler || !sw.abort() {
				panic(rec)
			}
			err = nil
		}
	}()
	proxyErr := next.ServeHTTP(sw, r)
	sw.finish(proxyErr)
	return nil
}

// serverOf is the Caddy server r arrived on, nil outside one.
func serverOf(r *http.Request) *caddyhttp.Server {
	srv, _ := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
	return srv
}
