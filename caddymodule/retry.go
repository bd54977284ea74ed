package caddymodule

import (
	"context"
	"net/http"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llmstream/llmstream/transform/request"
)

// attempts proxies the request through next, and again for each retry
// the reply's validation asks for (specs/004 §7.3.2): the same request
// with the failed turn appended (request.AppendRetry), on the same client
// stream. The upstream is called at most retries + 1 times; a client that
// leaves cancels the retry too. body is the request r carries.
func (h *Handler) attempts(sw *streamWriter, r *http.Request, body []byte, next caddyhttp.Handler) error {
	for {
		if err := h.proxy(sw, r, next); err != nil {
			return err
		}
		turn, reason, due := sw.retryDue()
		if !due {
			return nil
		}
		retry, err := request.AppendRetry(make([]byte, 0, len(body)+len(turn.Content)+512), body, turn)
		if err != nil {
			return err // body is ours, valid; an error is a bug, logged by Caddy
		}
		ctx, cancel := context.WithCancelCause(sw.client)
		defer cancel(errUpstreamDone)
		if !sw.nextAttempt(cancel) {
			return nil // the client left: no retry
		}
		h.metrics.retried(reason)
		if c := h.logger.Check(zapcore.DebugLevel, "reply retried"); c != nil {
			c.Write(zap.String("request_id", sw.requestID), zap.Int("attempt", sw.p.Attempt()), zap.String("reason", reason))
		}
		body = retry
		r = r.WithContext(ctx)
		setBody(r, body)
	}
}
