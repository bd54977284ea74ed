package caddymodule

import (
	"context"
	"errors"
	"io"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/protocol"
)

// streamWriter sits between reverse_proxy and the client. When the upstream
// answers a chat request with a 2xx status, it feeds the body to the
// pipeline as it arrives and writes the route's protocol instead, flushing
// after every write (CADDY.md §2.4); a refusal becomes the protocol's error
// or the HTTP status the contract names (CONTRACT §6, writer_end.go).
//
// The proxy calls Write and Flush from one goroutine, but the heartbeat and
// idle timers (keepalive) fire on others, so every method that touches the
// stream holds mu.
type streamWriter struct {
	*caddyhttp.ResponseWriterWrapper
	p         *pipeline.Pipeline
	proto     *protocol.Protocol
	idle      time.Duration // idle_timeout, named in its refusal
	logger    *zap.Logger
	stream    bool   // the client gets an event stream (not one JSON body)
	requestID string // echoed in X-Request-Id
	cancel    context.CancelCauseFunc
	// client is the client's request context, which ends when the client
	// leaves; the upstream request runs under a child of it.
	client context.Context
	// route is the route's name for metrics; trace its spans, nil when
	// the request is not traced (tracing.go).
	route string
	trace *turnTrace

	// upstream holds the headers the proxy copies from the upstream's
	// response. They are kept apart from ours: once our stream is open the
	// client's header map also holds what encode added (Content-Encoding),
	// which must not be mistaken for the upstream's.
	upstream http.Header

	mu        sync.Mutex
	keep      *keepalive // the idle and heartbeat timers; their callbacks hold mu
	mode      writerMode
	committed bool   // our status line and headers went out
	out       []byte // the encoder's output, reused
	errStatus int    // a refused upstream's status
	errBody   []byte // … and the start of its body
	// errRefusal is why a 2xx body cannot be used (Code is "" when it can).
	errRefusal protocol.Refusal
	// reshape: the refusal being collected is to be passed through in the
	// protocol's own error shape (Protocol.ReshapeRefusal).
	reshape  bool
	gone     bool // a write to the client failed: it left
	timedOut bool // the idle timer fired
}

type writerMode uint8

const (
	modeWaiting     writerMode = iota // the upstream has not answered
	modeStreaming                     // a 2xx reply is being re-encoded
	modeRefused                       // a non-2xx reply is being collected
	modePassthrough                   // a refusal passed through as is (the row's PassRefusals)
)

// maxErrBody bounds what is kept of a refused upstream's body to find its
// message in.
const maxErrBody = 64 << 10

// errUpstreamDone is the cause given when the stream ended before the
// upstream's reply did: the upstream request is cancelled, not left running.
var errUpstreamDone = errors.New("llm_stream: the client stream ended")

var errClientGone = errors.New("llm_stream: the client connection is gone")

// doneGrace is how long an upstream may hold its connection open after the
// reply completed ([DONE]) before it is cancelled: the client's response
// cannot end while the proxy still reads the upstream body.
const doneGrace = time.Second

// writerRoute is what a stream's writer needs of its route: the protocol,
// the timers' settings and clock, and the log for what the client is not
// told.
type writerRoute struct {
	proto           *protocol.Protocol
	idle, heartbeat time.Duration
	clock           clock // nil is the system's
	logger          *zap.Logger
}

// newStreamWriter returns the writer of one request's response to w. The
// upstream request runs under a context that cancel ends; client is the
// client's own request context.
func newStreamWriter(w http.ResponseWriter, route writerRoute, p *pipeline.Pipeline, meta transform.Meta, client context.Context, cancel context.CancelCauseFunc) *streamWriter {
	sw := &streamWriter{
		ResponseWriterWrapper: &caddyhttp.ResponseWriterWrapper{ResponseWriter: w},
		upstream:              make(http.Header),
		p:                     p,
		proto:                 route.proto,
		idle:                  route.idle,
		logger:                route.logger,
		stream:                meta.Stream,
		requestID:             meta.RequestID,
		cancel:                cancel,
		client:                client,
	}
	var beat time.Duration
	if sw.stream { // one JSON body has nothing to keep alive
		beat = route.heartbeat
	}
	sw.keep = newKeepalive(&sw.mu, route.clock, route.idle, beat)
	sw.keep.ended, sw.keep.onIdle, sw.keep.onRelease, sw.keep.onBeat = p.Ended, sw.idleTimeout, sw.release, sw.heartbeat
	sw.keep.replyDone = sw.replyDone
	return sw
}

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
		// not an upstream answer: passed through, a client of a protocol
		// that passes refusals would get 499 instead of its 504.
		return
	}
	sw.keep.upstreamActive()
	h := sw.upstream
	switch {
	case status >= 200 && status <= 299 && identityEncoded(h):
		sw.mode = modeStreaming
		sw.out = sw.p.Start(sw.out[:0], h.Get("Content-Type"), h.Get("X-Request-Id"))
		if sw.stream {
			// One JSON body (a client that asked for no stream, where the
			// row's ClientChoosesStream lets it)
			// commits at the end, when its status is known: a reply that
			// breaks off must still be able to answer 502.
			sw.commit(http.StatusOK)
		}
		sw.send()
	case status >= 200 && status <= 299:
		// Compressed despite our Accept-Encoding: identity; there is no
		// text to parse.
		sw.mode, sw.errStatus = modeRefused, status
		sw.errRefusal = protocol.CompressedRefusal(status, h.Get("Content-Encoding"))
	case sw.proto.PassesRefusal(sw.committed) && sw.proto.ReshapeRefusal != nil:
		// Passed through with its status and headers, but in the
		// protocol's error shape: its body is collected first.
		sw.mode, sw.errStatus, sw.reshape = modeRefused, status, true
	case sw.proto.PassesRefusal(sw.committed):
		sw.mode = modePassthrough
		// Only to record the outcome for the log and metrics, which would
		// otherwise count the refusal as client_gone; the output is unused.
		sw.p.Fail(nil, transform.CodeProviderError, protocol.UpstreamMessage(status, nil))
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
	// Taken when Write returns, so that a client slow to read is not
	// mistaken for a silent upstream.
	defer sw.keep.upstreamActive()
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
		if n := min(len(p), maxErrBody-len(sw.errBody)); n > 0 && sw.errRefusal.Code == "" {
			sw.errBody = append(sw.errBody, p[:n]...)
		}
		return len(p), nil
	}
	if sw.gone {
		return 0, errClientGone
	}
	if sw.replyDone() {
		return len(p), nil // the reply is over; cancelling the upstream ends this
	}
	sw.out = sw.p.Feed(sw.out[:0], p)
	sw.send()
	switch {
	case sw.p.Failed():
		// The upstream may still be generating (and billing) a reply no one
		// will read.
		sw.cancel(errUpstreamDone)
	case sw.replyDone():
		// Complete at [DONE] (or refused by validation, with a retry
		// due): the upstream normally closes at once, and cancelling it
		// now would make the proxy log an aborted response. One that holds
		// its connection open is let go after doneGrace.
		sw.keep.armIdle(doneGrace)
	}
	if sw.gone {
		return 0, errClientGone
	}
	return len(p), nil
}

// send writes and flushes the encoder's output. Without a stream (a client
// that asked for one JSON body) nothing goes out before the end.
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
	sw.keep.wrote()
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
// protocols that report refusals in-stream (the row's EarlyStart): the
// headers go out at once and heartbeats cover the wait.
func (sw *streamWriter) open() {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.out = sw.p.Begin(sw.out[:0])
	sw.commit(http.StatusOK)
	sw.send()
}

// startTimers arms the idle timeout and the heartbeat.
func (sw *streamWriter) startTimers() { sw.keep.start() }

// stopTimers disarms both timers. After it returns neither callback touches
// the stream again, so the pipeline can go back to its pool.
func (sw *streamWriter) stopTimers() { sw.keep.stop() }

// Interface guards.
var (
	_ http.ResponseWriter                       = (*streamWriter)(nil)
	_ io.ReaderFrom                             = (*streamWriter)(nil)
	_ interface{ FlushError() error }           = (*streamWriter)(nil)
	_ interface{ Unwrap() http.ResponseWriter } = (*streamWriter)(nil)
)
