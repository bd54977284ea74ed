package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/pipeline"
)

// streamWriter sits between reverse_proxy and the client. When the upstream
// answers a chat request with a 2xx status, it feeds the body to the
// pipeline as it arrives and writes the route's protocol instead, flushing
// after every write (CADDY.md §2.4); a refusal becomes the protocol's error
// or the HTTP status the contract names (CONTRACT §6).
//
// The proxy calls Write and Flush from one goroutine, but the heartbeat and
// idle timers fire on others, so every method that touches the stream holds
// mu.
type streamWriter struct {
	*caddyhttp.ResponseWriterWrapper
	h         *Handler
	p         *pipeline.Pipeline
	proto     *pipeline.Protocol
	stream    bool   // the client gets an event stream (not one JSON body)
	requestID string // echoed in X-Request-Id
	cancel    context.CancelCauseFunc
	// client is the client's request context, which ends when the client
	// leaves; the upstream request runs under a child of it.
	client context.Context

	// upstream holds the headers the proxy copies from the upstream's
	// response. They are kept apart from ours: once our stream is open the
	// client's header map also holds what encode added (Content-Encoding),
	// which must not be mistaken for the upstream's.
	upstream http.Header

	mu        sync.Mutex
	mode      writerMode
	committed bool      // our status line and headers went out
	out       []byte    // the encoder's output, reused
	errStatus int       // a refused upstream's status
	errBody   []byte    // … and the start of its body
	errMsg    string    // … or why a 2xx body cannot be used
	gone      bool      // a write to the client failed: it left
	timedOut  bool      // the idle timer fired
	closed    bool      // the request is over: timers must not touch the stream
	lastWrite time.Time // our last write to the client (heartbeats)
	// lastUpstream is when the upstream last sent something (headers or
	// body), for the idle timeout. It is taken when Write returns, so that
	// a client slow to read is not mistaken for a silent upstream.
	lastUpstream time.Time

	idle, beat *time.Timer
}

type writerMode uint8

const (
	modeWaiting     writerMode = iota // the upstream has not answered
	modeStreaming                     // a 2xx reply is being re-encoded
	modeRefused                       // a non-2xx reply is being collected
	modePassthrough                   // an openai route passes a refusal through as is
)

// maxErrBody bounds what is kept of a refused upstream's body to find its
// message in.
const maxErrBody = 64 << 10

// errUpstreamDone is the cause given when the stream ended before the
// upstream's reply did: the upstream request is cancelled, not left running.
var errUpstreamDone = errors.New("llm_stream: the client stream ended")

// doneGrace is how long an upstream may hold its connection open after the
// reply completed ([DONE]) before it is cancelled: the client's response
// cannot end while the proxy still reads the upstream body.
const doneGrace = time.Second

// Header returns the upstream's headers, as the proxy sets them.
func (sw *streamWriter) Header() http.Header { return sw.upstream }

// WriteHeader intercepts the upstream's status.
func (sw *streamWriter) WriteHeader(status int) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.writeHeader(status)
}

func (sw *streamWriter) writeHeader(status int) {
	if sw.mode != modeWaiting || status >= 100 && status <= 199 {
		// A 1xx is interim: the client gets our own response, not the
		// upstream's hints. A second call is the proxy recording 499 after
		// a cancellation the stream already reported.
		return
	}
	if sw.p.Ended() || sw.timedOut || sw.clientLeft() {
		// The idle timer ended the stream before the upstream answered, or
		// the client left. Either cancelled the upstream request, so this
		// is the proxy recording 499 for that (reverseproxy.go, caddy#7396),
		// not an upstream answer: passed through, an openai client would
		// get 499 instead of its 504.
		return
	}
	sw.lastUpstream = time.Now()
	h := sw.upstream
	switch {
	case status >= 200 && status <= 299 && identityEncoded(h):
		sw.mode = modeStreaming
		sw.out = sw.p.Start(sw.out[:0], h.Get("Content-Type"), h.Get("X-Request-Id"))
		if sw.stream {
			// One JSON body (an openai client that asked for no stream)
			// commits at the end, when its status is known: a reply that
			// breaks off must still be able to answer 502.
			sw.commit(http.StatusOK)
		}
		sw.send()
	case status >= 200 && status <= 299:
		// Compressed despite our Accept-Encoding: identity; there is no
		// text to parse.
		sw.mode, sw.errStatus = modeRefused, status
		sw.errMsg = "upstream answered " + strconv.Itoa(status) + " with a compressed body (Content-Encoding: " +
			h.Get("Content-Encoding") + ") despite Accept-Encoding: identity"
	case sw.proto.PassRefusals && !sw.committed:
		sw.mode = modePassthrough
		// Only to record the outcome for the log and metrics, which would
		// otherwise count the refusal as client_gone; the output is unused.
		sw.p.Fail(nil, transform.CodeProviderError, upstreamMessage(status, nil))
		copyHeaders(sw.ResponseWriterWrapper.Header(), h, "X-Request-Id")
		sw.ResponseWriterWrapper.Header().Set("X-Request-Id", sw.requestID)
		sw.ResponseWriterWrapper.WriteHeader(status)
	default:
		sw.mode, sw.errStatus = modeRefused, status
	}
}

// copyHeaders adds src's headers to dst, except the keys named in skip.
func copyHeaders(dst, src http.Header, skip ...string) {
	for k, vs := range src {
		if slices.Contains(skip, k) {
			continue
		}
		dst[k] = append(dst[k], vs...)
	}
}

// identityEncoded reports whether the body is not compressed.
func identityEncoded(h http.Header) bool {
	ce := h.Get("Content-Encoding")
	return ce == "" || ce == "identity"
}

// Write takes the next bytes of the upstream body. It always reports all of
// p written unless the client is gone: the proxy treats a short count as
// io.ErrShortWrite (CADDY.md P6).
func (sw *streamWriter) Write(p []byte) (int, error) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	defer sw.upstreamActive()
	if sw.mode == modeWaiting {
		sw.writeHeader(http.StatusOK)
		if sw.mode == modeWaiting {
			return len(p), nil // the stream ended before the upstream answered
		}
	}
	switch sw.mode {
	case modePassthrough:
		return sw.ResponseWriterWrapper.Write(p)
	case modeRefused:
		if n := min(len(p), maxErrBody-len(sw.errBody)); n > 0 && sw.errMsg == "" {
			sw.errBody = append(sw.errBody, p[:n]...)
		}
		return len(p), nil
	}
	if sw.gone {
		return 0, errClientGone
	}
	if sw.p.Ended() {
		return len(p), nil // the stream is over; cancelling the upstream ends this
	}
	sw.out = sw.p.Feed(sw.out[:0], p)
	sw.send()
	switch {
	case sw.p.Failed():
		// The upstream may still be generating (and billing) a reply no one
		// will read.
		sw.cancel(errUpstreamDone)
	case sw.p.Ended():
		// Complete at [DONE]: the upstream normally closes at once, and
		// cancelling it now would make the proxy log an aborted response.
		// One that holds its connection open is let go after doneGrace.
		sw.armIdle(doneGrace)
	}
	if sw.gone {
		return 0, errClientGone
	}
	return len(p), nil
}

var errClientGone = errors.New("llm_stream: the client connection is gone")

// upstreamActive records that the upstream just sent something.
func (sw *streamWriter) upstreamActive() { sw.lastUpstream = time.Now() }

// armIdle (re)arms the idle timer to fire after d.
func (sw *streamWriter) armIdle(d time.Duration) {
	if sw.idle == nil {
		sw.idle = time.AfterFunc(d, sw.idleTimeout)
		return
	}
	sw.idle.Reset(d)
}

// send writes and flushes the encoder's output. Without a stream (an openai
// client that asked for one JSON body) nothing goes out before the end.
func (sw *streamWriter) send() {
	if len(sw.out) == 0 || sw.gone || !sw.stream && !sw.p.Ended() {
		return
	}
	if !sw.committed {
		sw.commit(sw.p.Status())
	}
	if _, err := sw.ResponseWriterWrapper.Write(sw.out); err != nil {
		sw.gone = true
		return
	}
	sw.lastWrite = time.Now()
	sw.flush()
}

// commit writes our status line and headers, once. For an event stream it
// happens when the stream opens (CONTRACT §5 headers); for a single JSON
// body, when the body is complete and its status known.
func (sw *streamWriter) commit(status int) {
	if sw.committed {
		return
	}
	sw.committed = true
	h := sw.ResponseWriterWrapper.Header()
	// The upstream's other headers (rate limits, processing time) are
	// passed on when it answered before our stream opened; its framing,
	// encoding and validators describe its body, not ours.
	copyHeaders(h, sw.upstream, "Content-Length", "Content-Encoding", "Content-Type", "Transfer-Encoding",
		"Trailer", "Etag", "Last-Modified", "Accept-Ranges", "X-Request-Id")
	h.Set("X-Request-Id", sw.requestID)
	if sw.stream {
		h.Set("Content-Type", sw.proto.ContentType)
		h.Set("Cache-Control", "no-cache")
		h.Set("X-Accel-Buffering", "no")
		for _, kv := range sw.proto.Header {
			h.Set(kv[0], kv[1])
		}
	} else {
		h.Set("Content-Type", "application/json")
	}
	sw.ResponseWriterWrapper.WriteHeader(status)
	if sw.stream {
		// net/http holds headers until the first body write; a protocol
		// with nothing to say yet (skillpet) must still open the stream,
		// or the client waits for headers as long as the model thinks.
		sw.flush()
	}
}

// flush pushes what was written to the client.
func (sw *streamWriter) flush() {
	//nolint:bodyclose // not a response body
	if err := http.NewResponseController(sw.ResponseWriterWrapper).Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		sw.gone = true
	}
}

// FlushError is what http.ResponseController finds first. The stream is
// flushed after every write already; flushing an uncommitted response would
// send the upstream's status and headers instead of ours.
func (sw *streamWriter) FlushError() error {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.mode == modePassthrough {
		//nolint:bodyclose // not a response body
		return http.NewResponseController(sw.ResponseWriterWrapper).Flush()
	}
	return nil
}

// ReadFrom makes io.Copy go through Write: the embedded wrapper's ReadFrom
// would hand the upstream body to the client untouched (CADDY.md P5).
func (sw *streamWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(writerOnly{sw}, r)
}

type writerOnly struct{ io.Writer }

// open starts the client's stream before the upstream answers, for
// protocols that report refusals in-stream (gymbro, jsonseq, aisdk): the
// headers go out at once and heartbeats cover the wait.
func (sw *streamWriter) open() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.out = sw.p.Begin(sw.out[:0])
	sw.commit(http.StatusOK)
	sw.send()
}

// startTimers arms the idle timeout and the heartbeat. It holds mu because
// a short timer can fire before AfterFunc's result is stored, and the
// heartbeat re-arms itself through sw.beat (a data race, or a nil timer).
func (sw *streamWriter) startTimers() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if d := sw.h.settings.IdleTimeout; d > 0 {
		sw.armIdle(d)
	}
	if d := sw.h.settings.Heartbeat; d > 0 && sw.stream {
		sw.beat = time.AfterFunc(d, sw.heartbeat)
	}
}

// stopTimers disarms both timers. After it returns neither callback touches
// the stream again, so the pipeline can go back to its pool: a callback
// already running waits for mu and then finds the writer closed.
func (sw *streamWriter) stopTimers() {
	sw.mu.Lock()
	sw.closed = true
	sw.mu.Unlock()
	if sw.idle != nil {
		sw.idle.Stop()
	}
	if sw.beat != nil {
		sw.beat.Stop()
	}
}

// idleTimeout fires when the upstream may have been silent for
// idle_timeout. If it was not (it sent something since the timer was
// armed), the timer is re-armed for the rest; otherwise the stream ends with
// upstream_timeout and the upstream request is cancelled. After a completed
// stream it lets go of an upstream that holds its connection open.
func (sw *streamWriter) idleTimeout() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.closed {
		return
	}
	if sw.p.Ended() {
		sw.cancel(errUpstreamDone)
		return
	}
	d := sw.h.settings.IdleTimeout
	if wait := d - time.Since(sw.lastUpstream); wait > 0 {
		sw.idle.Reset(wait)
		return
	}
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
		sw.out = sw.p.Fail(sw.out[:0], transform.CodeUpstreamTimeout, sw.idleMessage())
		sw.send()
	}
	sw.cancel(context.DeadlineExceeded)
}

// idleMessage is the error message of an idle timeout.
func (sw *streamWriter) idleMessage() string {
	return "no upstream byte for " + sw.h.settings.IdleTimeout.String()
}

// heartbeat keeps a silent stream alive: it writes a keep-alive when
// nothing was written for a heartbeat interval, then re-arms itself.
func (sw *streamWriter) heartbeat() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.closed || sw.p.Ended() {
		return
	}
	d := sw.h.settings.Heartbeat
	if wait := d - time.Since(sw.lastWrite); sw.committed && wait > 0 {
		sw.beat.Reset(wait)
		return
	}
	if sw.committed {
		sw.out = sw.p.Heartbeat(sw.out[:0], time.Now())
		sw.send()
	}
	sw.beat.Reset(d)
}

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
	case sw.clientLeft():
		return
	case sw.timedOut:
		sw.refuse(http.StatusGatewayTimeout, transform.CodeUpstreamTimeout, sw.idleMessage())
	case sw.mode == modeStreaming:
		sw.out = sw.p.Close(sw.out[:0])
		sw.send()
	case sw.mode == modeRefused:
		sw.refuseUpstream()
	default:
		sw.unreachable(proxyErr)
	}
}

// refuseUpstream answers an upstream's refusal (CONTRACT §6) with the
// message its body gave, or why its 2xx body could not be used.
func (sw *streamWriter) refuseUpstream() {
	msg := sw.errMsg
	if msg == "" {
		msg = upstreamMessage(sw.errStatus, sw.errBody)
	}
	sw.refuse(http.StatusBadGateway, transform.CodeProviderError, msg)
}

// unreachable answers a request the proxy could not deliver. The proxy's
// error names internal addresses and Caddy's source lines, so the client
// gets a plain message with the proxy's status and the log gets the rest.
func (sw *streamWriter) unreachable(proxyErr error) {
	status, msg := http.StatusBadGateway, "the upstream could not be reached"
	var he caddyhttp.HandlerError
	if errors.As(proxyErr, &he) && he.StatusCode >= 500 {
		status = he.StatusCode
	}
	switch status {
	case http.StatusServiceUnavailable:
		msg = "no upstream is available"
	case http.StatusGatewayTimeout:
		msg = "the upstream did not answer in time"
	}
	if proxyErr != nil {
		sw.h.logger.Warn("upstream unreachable", zap.String("request_id", sw.requestID), zap.Error(proxyErr))
	}
	sw.refuse(status, transform.CodeProviderError, msg+" (HTTP "+strconv.Itoa(status)+")")
}

// msgBrokeOff is the error message for an upstream body that failed
// mid-reply.
const msgBrokeOff = "upstream: the connection broke off mid-reply"

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
	case sw.p.Ended():
	case sw.mode == modeRefused:
		// The upstream refused and its error body broke off: still a
		// refusal (CONTRACT §6), answered as finish would, with what came
		// of the body; skillpet must get its 502, not a stream.
		sw.refuseUpstream()
	case !sw.committed && !sw.stream:
		sw.refuse(http.StatusBadGateway, transform.CodeUpstreamError, msgBrokeOff)
	default:
		sw.out = sw.p.Fail(sw.out[:0], transform.CodeUpstreamError, msgBrokeOff)
		sw.send()
	}
	return !sw.gone
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
func (sw *streamWriter) refuse(status int, code, msg string) {
	if sw.committed || sw.stream && sw.proto.EarlyStart {
		sw.out = sw.p.Fail(sw.out[:0], code, msg)
		sw.send()
		return
	}
	sw.p.Fail(nil, code, msg) // the pipeline records the outcome; the body is ours
	sw.committed = true
	if writeJSON(sw.ResponseWriterWrapper, status, sw.requestID, sw.proto.RefusalBody(nil, code, msg)) != nil {
		sw.gone = true
	}
}

// upstreamMessage finds the message in a refused upstream's body: an
// OpenAI-style {"error":{"message":…}}, {"error":"…"} or {"message":…}, or
// the start of the body as text.
func upstreamMessage(status int, body []byte) string {
	prefix := "upstream answered " + strconv.Itoa(status)
	if t := http.StatusText(status); t != "" {
		prefix += " " + t
	}
	if msg := errorMessage(body); msg != "" {
		return prefix + ": " + msg
	}
	if mt, _, _ := mime.ParseMediaType(http.DetectContentType(body)); mt == "text/plain" && len(body) > 0 {
		return prefix + ": " + string(body[:min(len(body), 512)])
	}
	return prefix
}

// Interface guards.
var (
	_ http.ResponseWriter = (*streamWriter)(nil)
	_ io.ReaderFrom       = (*streamWriter)(nil)
)

// errorMessage extracts the message of a JSON error body, "" if there is
// none.
func errorMessage(body []byte) string {
	if !json.Valid(body) { // non-recursive, unlike gjson.Valid
		return ""
	}
	for _, path := range []string{"error.message", "error", "message", "detail"} {
		if v := gjson.GetBytes(body, path); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return ""
}
