package caddymodule

import (
	"context"
	"errors"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/protocol"
)

// How a stream ends (CONTRACT §6): the end of a streamed reply, or the
// refusal, timeout or failure that prevented one. The answers themselves
// (status, code, message) are pipeline's refusal policy; these methods
// decide which applies from what the writer saw, and write it.

// finish ends the client's response after the proxy returned: the end of a
// streamed reply, or the refusal or failure that prevented one.
func (sw *streamWriter) finish(proxyErr error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	switch {
	case sw.gone || sw.mode == modePassthrough:
		return
	case sw.p.Ended():
		if !sw.committed { // a single JSON body, complete
			sw.send()
		}
		return
	case sw.p.RetryPending(): // the retry ends it (writer_retry.go)
		return
	case sw.p.ToolsPending(): // the loop goes on (writer_loop.go)
		return
	case sw.clientLeft():
		return
	case sw.timedOut:
		sw.refuse(protocol.IdleRefusal(sw.idle))
	case sw.mode == modeStreaming:
		sw.out = sw.p.Close(sw.out[:0])
		sw.send()
	case sw.mode == modeRefused:
		sw.refuseUpstream()
	default:
		sw.unreachable(proxyErr)
	}
}

// abort ends the stream after the proxy gave up mid-body (it panics with
// http.ErrAbortHandler when the upstream read fails; see reverseproxy.go and
// caddy#5951). Since we own the client's protocol, we end it with its error
// event instead of a cut connection. It reports whether the client can
// still be written to.
func (sw *streamWriter) abort() bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.gone || sw.mode == modeWaiting || sw.mode == modePassthrough || sw.clientLeft() {
		// A refusal passed through is the upstream's body, not our
		// stream: cut short, it is cut short for the client too. Before
		// the upstream answered, the abort is not the proxy's (it only
		// aborts mid-body): another handler's, left alone.
		return false
	}
	switch {
	case sw.replyDone():
	case sw.mode == modeRefused:
		// The upstream refused and its error body broke off: still a
		// refusal (CONTRACT §6), answered as finish would, with what came
		// of the body; skillpet must get its 502, not a stream.
		sw.refuseUpstream()
	case !sw.committed && !sw.stream:
		sw.refuse(protocol.BrokeOffRefusal())
	default:
		r := protocol.BrokeOffRefusal()
		sw.out = sw.p.Fail(sw.out[:0], r.Code, r.Message)
		sw.send()
	}
	return !sw.gone
}

// idleTimeout runs when the upstream was silent for idle_timeout: the
// stream ends with upstream_timeout and the upstream request is cancelled.
func (sw *streamWriter) idleTimeout() {
	sw.timedOut = true
	switch {
	case sw.mode == modePassthrough:
		// The upstream's own refusal stalled mid-body: cancelling it makes
		// the proxy cut the client's response short, as the upstream did.
	case sw.mode == modeRefused:
		// A refusal whose body stalled is still a refusal: answer it now
		// with what came of the body.
		sw.refuseUpstream()
	case sw.committed || sw.mode == modeStreaming:
		r := protocol.IdleRefusal(sw.idle)
		sw.out = sw.p.Fail(sw.out[:0], r.Code, r.Message)
		sw.send()
	}
	sw.cancel(context.DeadlineExceeded)
}

// release lets go of an upstream that holds its connection open after the
// stream ended.
func (sw *streamWriter) release() { sw.cancel(errUpstreamDone) }

// heartbeat keeps a silent stream alive, once it is open.
func (sw *streamWriter) heartbeat() {
	if sw.committed {
		sw.out = sw.p.Heartbeat(sw.out[:0], sw.keep.clock.Now())
		sw.send()
	}
}

// refuseUpstream answers an upstream's refusal (CONTRACT §6) with the
// message its body gave, or why its 2xx body could not be used.
func (sw *streamWriter) refuseUpstream() {
	if sw.reshape {
		sw.passReshaped()
		return
	}
	r := sw.errRefusal
	if r.Code == "" {
		r = protocol.UpstreamRefusal(sw.errStatus, sw.errBody)
	}
	sw.refuse(r)
}

// passReshaped passes an upstream's refusal through with its status and
// headers, its body rewritten in the protocol's error shape around the
// message the upstream gave (Protocol.ReshapeRefusal): the client's SDK
// then retries what the upstream said to retry, and reads the error.
func (sw *streamWriter) passReshaped() {
	full := protocol.UpstreamMessage(sw.errStatus, sw.errBody)
	sw.p.Fail(nil, transform.CodeProviderError, full) // the outcome, for the log and metrics
	msg := protocol.ErrorMessage(sw.errBody)
	if msg == "" {
		msg = full
	}
	sw.committed = true
	copyHeaders(sw.ResponseWriterWrapper.Header(), sw.upstream, "Content-Length", "Content-Encoding", "Content-Type",
		"Transfer-Encoding", "Trailer", "X-Request-Id")
	if writeJSON(sw.ResponseWriterWrapper, sw.errStatus, sw.requestID, sw.proto.ReshapeRefusal(nil, sw.errStatus, msg)) != nil {
		sw.gone = true
	}
}

// unreachable answers a request the proxy could not deliver. The proxy's
// error names internal addresses and Caddy's source lines, so the client
// gets a plain message with the proxy's status and the log gets the rest.
func (sw *streamWriter) unreachable(proxyErr error) {
	var status int
	var he caddyhttp.HandlerError
	if errors.As(proxyErr, &he) {
		status = he.StatusCode
	}
	if proxyErr != nil {
		sw.logger.Warn("upstream unreachable", zap.String("request_id", sw.requestID), zap.Error(proxyErr))
	}
	sw.refuse(protocol.UnreachableRefusal(status))
}

// clientLeft reports whether the client went away, and if so marks the
// writer gone. The proxy stops when the client's request context ends
// (mid-body it aborts, before an answer it records 499), and that is no
// upstream failure: an error event would reach no one, and the stream
// would be logged and counted as upstream_error or provider_error instead
// of client_gone.
func (sw *streamWriter) clientLeft() bool {
	if sw.client == nil || sw.client.Err() == nil {
		return false
	}
	sw.gone = true
	return true
}

// refuse ends a request whose upstream never streamed: in-stream for
// protocols whose stream is open, else with the HTTP status and JSON body
// the protocol names (CONTRACT §6).
func (sw *streamWriter) refuse(r protocol.Refusal) {
	if sw.proto.InStream(sw.stream, sw.committed) {
		sw.out = sw.p.Fail(sw.out[:0], r.Code, r.Message)
		sw.send()
		return
	}
	sw.p.Fail(nil, r.Code, r.Message) // the pipeline records the outcome; the body is ours
	sw.committed = true
	if writeJSON(sw.ResponseWriterWrapper, r.Status, sw.requestID, sw.proto.AppendRefusal(nil, r)) != nil {
		sw.gone = true
	}
}
