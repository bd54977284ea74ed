package caddymodule

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/protocol"
)

// The writer's failure table (CONTRACT §6, docs/operations.md "Failure behaviour"),
// in the style of Caddy's encode/sse_test.go: the handler is provisioned
// and served with a scripted next that plays reverse_proxy's part, and
// httptest records what reaches the client. Every case runs for every row
// of pipeline's protocol table (and, for a protocol whose client chooses,
// for a client that asked for one JSON body), on a fake clock: no Caddy
// instance, no port, no sleep.
//
// What each protocol answers is stated from its row: a protocol that
// opens its stream early (EarlyStart) ends it with its error event; one
// that does not answers a failure before the upstream streamed with an
// HTTP status and its RefusalBody; one that passes refusals on
// (PassRefusals) gives the client the upstream's own refusal. The encoder
// is tapped, so the test knows the events it was given and the bytes it
// wrote without decoding any protocol: those bytes must be exactly what
// the client got.

// writerVariant is one protocol row, as one kind of client uses it.
type writerVariant struct {
	name   string
	proto  *protocol.Protocol
	stream bool // the client gets an event stream (not one JSON body)
}

// writerVariants iterates the protocol table.
func writerVariants() []writerVariant {
	var vs []writerVariant
	for _, pr := range protocol.Protocols() {
		vs = append(vs, writerVariant{name: pr.Name, proto: pr, stream: true})
		if pr.ClientChoosesStream {
			vs = append(vs, writerVariant{name: pr.Name + "_json", proto: pr})
		}
	}
	return vs
}

// request is the chat request every case sends.
func (v writerVariant) request() string {
	return `{"model":"client-model","messages":[{"role":"user","content":"hi"}],"stream":` + strconv.FormatBool(v.stream) + `}`
}

// writerCase is one way a request ends, played by script.
type writerCase struct {
	name string
	// idle and beat are the route's idle_timeout and heartbeat (0: off);
	// maxReply its max_reply.
	idle, beat time.Duration
	maxReply   int64
	// brokenClient makes every write to the client fail.
	brokenClient bool
	script       func(px *proxyPlay) error

	// code is the error code the request ends with, "" for a completed
	// reply; msg is in its message.
	code, msg string
	// status is the HTTP status when the client gets one JSON body: a
	// refusal's, or that of a one-body reply that failed.
	status int
	// refusal: the upstream never streamed a usable reply, so a protocol
	// whose stream is not open yet answers with status and RefusalBody;
	// passed: it is the upstream's own non-2xx answer, which a
	// PassRefusals protocol passes through as it is.
	refusal, passed bool
	// writerRefusesOneBody: a one-body client gets the writer's
	// RefusalBody, not the encoder's failed completion (the proxy aborted
	// before the body was complete).
	writerRefusesOneBody bool
	// answer is the answer text a stream client got before the end.
	answer string
	// gone: the client left; nothing ends the stream, which is recorded as
	// client_gone.
	gone bool
	// cut: ServeHTTP lets the proxy's http.ErrAbortHandler go on up, so
	// the connection is cut; cutPassed: only when the refusal was passed
	// through.
	cut, cutPassed bool
	// cause is why the upstream request was cancelled, when the script
	// waited for it to be (stall).
	cause error
	// check, if set, checks more.
	check func(t *testing.T, v writerVariant, res writerResult)
}

// proxyPlay is what a script has to play reverse_proxy with: the writer,
// the upstream request, the fake clock, and the client's hang-up.
type proxyPlay struct {
	t        *testing.T
	w        http.ResponseWriter
	r        *http.Request
	clock    *fakeClock
	leave    context.CancelFunc
	answered bool // a final status went to the writer
	status   int
	header   http.Header // the upstream's headers, as the script set them
	sent     strings.Builder
	cause    error // why the upstream request ended, when stall saw it
}

// head answers status with the header pairs kv.
func (px *proxyPlay) head(status int, kv ...string) {
	for i := 0; i+1 < len(kv); i += 2 {
		px.w.Header().Set(kv[i], kv[i+1])
		px.header.Set(kv[i], kv[i+1])
	}
	px.w.WriteHeader(status)
	if status >= 200 {
		px.answered, px.status = true, status
	}
}

// sse answers 200 with an event stream.
func (px *proxyPlay) sse() {
	px.head(http.StatusOK, "Content-Type", "text/event-stream", "X-Request-Id", "up-42")
}

// body writes and flushes each piece, as reverse_proxy does with
// flush_interval -1. A failed write aborts, as the proxy does.
func (px *proxyPlay) body(pieces ...string) {
	for _, p := range pieces {
		px.sent.WriteString(p)
		if _, err := px.w.Write([]byte(p)); err != nil {
			px.abort()
		}
		//nolint:bodyclose // not a response body
		_ = http.NewResponseController(px.w).Flush()
	}
}

// silence lets d pass without the upstream sending anything.
func (px *proxyPlay) silence(d time.Duration) { px.clock.advance(d) }

// abort is reverse_proxy giving up mid-body (reverseproxy.go, caddy#5951):
// a last flush, then http.ErrAbortHandler.
func (px *proxyPlay) abort() {
	//nolint:bodyclose // not a response body
	_ = http.NewResponseController(px.w).Flush()
	panic(http.ErrAbortHandler)
}

// stall waits for the upstream request to be cancelled, and then does
// what reverse_proxy does: mid-body it aborts; before the upstream
// answered it records 499 (caddy#7396) and returns.
func (px *proxyPlay) stall() error {
	select {
	case <-px.r.Context().Done():
		px.cause = context.Cause(px.r.Context())
	case <-time.After(10 * time.Second):
		px.t.Error("the upstream request was never cancelled")
	}
	if px.answered {
		px.abort()
	}
	px.w.WriteHeader(499)
	return nil
}

// wantLive fails the test if the upstream request was cancelled.
func (px *proxyPlay) wantLive() {
	if err := px.r.Context().Err(); err != nil {
		px.t.Errorf("the upstream request was cancelled too early: %v", context.Cause(px.r.Context()))
	}
}

// tappedHandler provisions a Handler for route with an observed logger, a
// fake clock and an encoderTap around its protocol's encoder, so that a
// test drives it without a Caddy instance and sees what it did.
func tappedHandler(t *testing.T, route config.Route) (*Handler, *observer.ObservedLogs, *fakeClock, *encoderTap) {
	t.Helper()
	h := &Handler{Route: route}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
	t.Cleanup(cancel)
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.DebugLevel)
	h.logger = zap.New(core)
	clock := newFakeClock()
	h.clock = clock
	tap := &encoderTap{}
	tapped := *h.proto
	inner := h.proto.NewEncoder
	tapped.NewEncoder = func(m transform.Meta) transform.Encoder {
		tap.inner = inner(m)
		return tap
	}
	h.proto = &tapped
	return h, logs, clock, tap
}

// encoderTap wraps a protocol's encoder and keeps what the pipeline gave
// it and every byte it wrote.
type encoderTap struct {
	inner    transform.Encoder
	out      []byte
	answer   strings.Builder
	beats    int
	terminal []transform.Event
}

func (e *encoderTap) keep(dst []byte, n int) []byte {
	e.out = append(e.out, dst[n:]...)
	return dst
}

func (e *encoderTap) Begin(dst []byte) []byte { return e.keep(e.inner.Begin(dst), len(dst)) }

func (e *encoderTap) AppendEvent(dst []byte, ev transform.Event) []byte {
	switch ev.Kind {
	case transform.KindAnswerDelta:
		e.answer.Write(ev.Text)
	case transform.KindFinish, transform.KindError:
		e.terminal = append(e.terminal, ev.Clone())
	}
	return e.keep(e.inner.AppendEvent(dst, ev), len(dst))
}

func (e *encoderTap) AppendHeartbeat(dst []byte, now time.Time) []byte {
	out := e.inner.AppendHeartbeat(dst, now)
	if len(out) > len(dst) {
		e.beats++
	}
	return e.keep(out, len(dst))
}

// Status passes on the encoder's status, which the writer reads through
// the pipeline for one JSON body.
func (e *encoderTap) Status() int {
	if s, ok := e.inner.(interface{ Status() int }); ok {
		return s.Status()
	}
	return http.StatusOK
}

// writerResult is what came of one case.
type writerResult struct {
	resp    *http.Response
	body    string
	tap     *encoderTap
	play    *proxyPlay
	cut     bool // ServeHTTP panicked with http.ErrAbortHandler
	outcome string
	logs    *observer.ObservedLogs
}

// failingWriter is a client connection that is gone.
type failingWriter struct{ *httptest.ResponseRecorder }

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("connection reset by peer") }

// serveWriterCase provisions a route for v, serves one request with c's
// script as next, and collects what the client got.
func serveWriterCase(t *testing.T, v writerVariant, c writerCase) writerResult {
	t.Helper()
	hb, it := config.Duration(c.beat), config.Duration(c.idle)
	h, logs, clock, tap := tappedHandler(t, config.Route{
		Protocol: v.proto.Name, Format: "text", Heartbeat: &hb, IdleTimeout: &it,
		Limits: transform.Limits{MaxReplyBytes: c.maxReply},
	})

	rec := httptest.NewRecorder()
	var w http.ResponseWriter = rec
	if c.brokenClient {
		w = failingWriter{rec}
	}
	clientCtx, leave := context.WithCancel(t.Context())
	defer leave()
	r := httptest.NewRequestWithContext(clientCtx, http.MethodPost, "/v1/chat/completions", strings.NewReader(v.request()))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Request-Id", "client-req-1")
	px := &proxyPlay{t: t, clock: clock, leave: leave, header: make(http.Header)}
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		px.w, px.r = w, r
		return c.script(px)
	})

	res := writerResult{tap: tap, play: px, logs: logs}
	func() {
		defer func() {
			if rv := recover(); rv != nil {
				if rv != http.ErrAbortHandler {
					panic(rv)
				}
				res.cut = true
			}
		}()
		if err := h.ServeHTTP(w, r, next); err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	}()
	res.resp = rec.Result()
	res.body = rec.Body.String()
	ended := logs.FilterMessage("stream ended").All()
	if len(ended) != 1 {
		t.Fatalf("%d stream ended logs, want 1", len(ended))
	}
	res.outcome, _ = ended[0].ContextMap()["outcome"].(string)
	return res
}

// answer forms: how the client learns how its request ended.
const (
	formEvent       = "the protocol's terminal event on its stream"
	formOneBody     = "one JSON body from the encoder"
	formRefusal     = "an HTTP status with the protocol's RefusalBody"
	formPassThrough = "the upstream's own refusal"
	formReshaped    = "the upstream's refusal, its body in the protocol's error shape"
	formNone        = "nothing: the client left"
)

// form is how c ends for v, from v's row (CONTRACT §6).
func (c writerCase) form(v writerVariant) string {
	switch {
	case c.gone:
		return formNone
	case c.passed && v.proto.PassRefusals && v.proto.ReshapeRefusal != nil:
		return formReshaped
	case c.passed && v.proto.PassRefusals:
		return formPassThrough
	case v.proto.EarlyStart || v.stream && !c.refusal:
		return formEvent
	case !c.refusal && !c.writerRefusesOneBody:
		return formOneBody
	}
	return formRefusal
}

func TestWriterFailures(t *testing.T) {
	for _, c := range writerCases() {
		for _, v := range writerVariants() {
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				res := serveWriterCase(t, v, c)
				checkWriterCase(t, v, c, res)
				if c.check != nil {
					c.check(t, v, res)
				}
			})
		}
	}
}

// checkWriterCase checks how the request ended against c, for v.
func checkWriterCase(t *testing.T, v writerVariant, c writerCase, res writerResult) {
	t.Helper()
	form := c.form(v)
	hdr := res.resp.Header
	wantCut := c.cut || c.cutPassed && form == formPassThrough
	if res.cut != wantCut {
		t.Errorf("connection cut (http.ErrAbortHandler passed on): %v, want %v", res.cut, wantCut)
	}
	if c.cause != nil && !errors.Is(res.play.cause, c.cause) {
		t.Errorf("the upstream request ended with %v, want %v", res.play.cause, c.cause)
	}
	outcome := c.code
	switch {
	case c.gone:
		outcome = "client_gone"
	case outcome == "":
		outcome = "completed"
	}
	if res.outcome != outcome {
		t.Errorf("recorded as %q, want %q", res.outcome, outcome)
	}
	if form != formNone && hdr.Get("X-Request-Id") != "client-req-1" {
		t.Errorf("X-Request-Id %q, want the client's", hdr.Get("X-Request-Id"))
	}

	// The terminal event the pipeline gave the encoder: exactly one,
	// unless the client left.
	var end transform.Event
	switch n := len(res.tap.terminal); {
	case form == formNone:
		// Its reply may have completed, but no error event was made for
		// a client that is not there.
		for _, ev := range res.tap.terminal {
			if ev.Kind == transform.KindError {
				t.Errorf("the stream of a client that left ended with an error: %s %q", ev.Code, ev.Text)
			}
		}
	case n != 1:
		t.Fatalf("%d terminal events, want 1: %+v", n, res.tap.terminal)
	default:
		end = res.tap.terminal[0]
	}
	if form != formNone {
		wantKind, msg := transform.KindError, c.msg
		if c.code == "" {
			wantKind = transform.KindFinish
		}
		if form == formPassThrough || form == formReshaped {
			msg = "" // only recorded: the client gets the upstream's own body
		}
		if end.Kind != wantKind || wantKind == transform.KindError && (end.Code != c.code || !strings.Contains(string(end.Text), msg)) {
			t.Errorf("ended with %v %q %q, want %v %q with %q", end.Kind, end.Code, end.Text, wantKind, c.code, msg)
		}
	}

	switch form {
	case formEvent:
		wantStatus(t, res, http.StatusOK)
		wantStreamHeaders(t, v, hdr)
		wantTapped(t, res)
		if got := res.tap.answer.String(); got != c.answer {
			t.Errorf("answer %q, want %q", got, c.answer)
		}
	case formOneBody:
		status := c.status
		if c.code == "" {
			status = http.StatusOK
		}
		wantStatus(t, res, status)
		wantJSONHeaders(t, hdr)
		wantTapped(t, res)
	case formRefusal:
		wantStatus(t, res, c.status)
		wantJSONHeaders(t, hdr)
		if want := v.proto.RefusalBody(nil, end.Code, string(end.Text)); res.body != string(want) {
			t.Errorf("body %s, want %s", res.body, want)
		}
	case formPassThrough:
		wantStatus(t, res, res.play.status)
		if res.body != res.play.sent.String() {
			t.Errorf("body %q, want the upstream's %q", res.body, res.play.sent.String())
		}
		for k := range res.play.header {
			if k != "X-Request-Id" && hdr.Get(k) != res.play.header.Get(k) {
				t.Errorf("the upstream's %s: %q was not passed through: %v", k, res.play.header.Get(k), hdr)
			}
		}
	case formReshaped:
		// The status and headers pass through, so that the SDK retries
		// what the upstream said to retry; the body is the protocol's
		// shape around the upstream's message, however much of it came.
		wantStatus(t, res, res.play.status)
		wantJSONHeaders(t, hdr)
		sent := []byte(res.play.sent.String())
		msg := protocol.ErrorMessage(sent)
		if msg == "" {
			msg = protocol.UpstreamMessage(res.play.status, sent)
		}
		if want := v.proto.ReshapeRefusal(nil, res.play.status, msg); res.body != string(want) {
			t.Errorf("body %s, want %s", res.body, want)
		}
		for k := range res.play.header {
			if k != "X-Request-Id" && k != "Content-Type" && k != "Content-Length" && hdr.Get(k) != res.play.header.Get(k) {
				t.Errorf("the upstream's %s: %q was not passed through: %v", k, res.play.header.Get(k), hdr)
			}
		}
	case formNone:
		if !c.brokenClient {
			wantTapped(t, res)
		}
	}
}

func wantStatus(t *testing.T, res writerResult, status int) {
	t.Helper()
	if res.resp.StatusCode != status {
		t.Errorf("status %d, want %d; body %s", res.resp.StatusCode, status, res.body)
	}
}

// wantStreamHeaders checks the headers of an event stream (CONTRACT §5).
func wantStreamHeaders(t *testing.T, v writerVariant, h http.Header) {
	t.Helper()
	want := [][2]string{{"Content-Type", v.proto.ContentType}, {"Cache-Control", "no-cache"}, {"X-Accel-Buffering", "no"}}
	for _, kv := range append(want, v.proto.Header...) {
		if h.Get(kv[0]) != kv[1] {
			t.Errorf("%s %q, want %q", kv[0], h.Get(kv[0]), kv[1])
		}
	}
}

func wantJSONHeaders(t *testing.T, h http.Header) {
	t.Helper()
	if ct := h.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q, want application/json", ct)
	}
}

// wantTapped checks that the client got exactly what the encoder wrote:
// nothing lost, nothing added, no half-written event.
func wantTapped(t *testing.T, res writerResult) {
	t.Helper()
	if res.body != string(res.tap.out) {
		t.Errorf("the client got\n%q\nthe encoder wrote\n%q", res.body, res.tap.out)
	}
}

// The upstream's reply in pieces.
var (
	helloWorld    = []string{roleChunk, content("Hello "), content("world"), finishChunks}
	rateLimitHead = []string{"Content-Type", "application/json", "Retry-After", "7"}
)

// tableIdle and tableBeat are the idle_timeout and heartbeat of the cases
// that set them, on the fake clock.
const (
	tableIdle = 30 * time.Second
	tableBeat = 5 * time.Second
)

func writerCases() []writerCase {
	upstreamDone, deadline := errUpstreamDone, context.DeadlineExceeded
	return []writerCase{
		// The upstream answers.
		{name: "completed", answer: "Hello world", script: func(px *proxyPlay) error {
			px.head(http.StatusOK, "Content-Type", "text/event-stream", "Openai-Processing-Ms", "42")
			px.body(helloWorld...)
			return nil
		}, check: func(t *testing.T, v writerVariant, res writerResult) {
			// The upstream's other headers are passed on when it answered
			// before the client's stream opened.
			if got, want := res.resp.Header.Get("Openai-Processing-Ms") != "", !v.proto.EarlyStart; got != want {
				t.Errorf("upstream header passed on: %v, want %v", got, want)
			}
		}},
		{name: "completed_through_read_from", answer: "Hello world", script: func(px *proxyPlay) error {
			// io.Copy must go through Write, not the wrapped writer's
			// ReadFrom, or the client gets the upstream's SSE untouched.
			// (A strings.Reader would take the WriterTo path instead.)
			px.sse()
			_, err := io.Copy(px.w, struct{ io.Reader }{strings.NewReader(strings.Join(helloWorld, ""))})
			return err
		}},
		{name: "completed_after_interim_1xx", answer: "Hello world", script: func(px *proxyPlay) error {
			px.head(http.StatusEarlyHints, "Link", "</style.css>; rel=preload")
			px.sse()
			px.body(helloWorld...)
			return nil
		}},
		{name: "completed_json_completion", answer: "Hello world", script: func(px *proxyPlay) error {
			px.head(http.StatusOK, "Content-Type", "application/json")
			px.body(`{"id":"c1","object":"chat.completion","model":"up-model","choices":[{"index":0,"message":{"role":"assistant","content":"Hello world"},"finish_reason":"stop"}]}`)
			return nil
		}},
		{name: "holds_connection_after_done", answer: "Hello world", cause: upstreamDone, script: func(px *proxyPlay) error {
			// Complete at [DONE]: the upstream is let go only if it still
			// holds its connection doneGrace later.
			px.sse()
			px.body(helloWorld...)
			px.silence(doneGrace - time.Millisecond)
			px.wantLive()
			px.silence(time.Millisecond)
			return px.stall()
		}},

		// The upstream refuses before streaming.
		{name: "refused_429", code: "provider_error", status: http.StatusBadGateway, refusal: true, passed: true,
			msg: "upstream answered 429 Too Many Requests: Rate limit reached for requests", script: func(px *proxyPlay) error {
				px.head(http.StatusTooManyRequests, rateLimitHead...)
				px.body(rateLimitBody)
				return nil
			}},
		{name: "refused_500_text", code: "provider_error", status: http.StatusBadGateway, refusal: true, passed: true,
			msg: "upstream answered 500 Internal Server Error: internal kaboom", script: func(px *proxyPlay) error {
				px.head(http.StatusInternalServerError, "Content-Type", "text/plain")
				px.body("internal kaboom")
				return nil
			}},
		{name: "refused_503_empty", code: "provider_error", status: http.StatusBadGateway, refusal: true, passed: true,
			msg: "upstream answered 503 Service Unavailable", script: func(px *proxyPlay) error {
				px.head(http.StatusServiceUnavailable)
				return nil
			}},
		{name: "refused_body_cut", code: "provider_error", status: http.StatusBadGateway, refusal: true, passed: true, cutPassed: true,
			msg: `upstream answered 503 Service Unavailable: {"error":{"message":"overloaded, try`, script: func(px *proxyPlay) error {
				px.head(http.StatusServiceUnavailable, "Content-Type", "application/json")
				px.body(`{"error":{"message":"overloaded, try`)
				px.abort()
				return nil
			}},
		{name: "refused_body_stalls", idle: tableIdle, code: "provider_error", status: http.StatusBadGateway, refusal: true, passed: true, cutPassed: true,
			msg: `upstream answered 503 Service Unavailable: {"error":{"message":"overloaded, try`, script: func(px *proxyPlay) error {
				px.head(http.StatusServiceUnavailable, "Content-Type", "application/json")
				px.body(`{"error":{"message":"overloaded, try`)
				px.silence(tableIdle)
				return px.stall()
			}},
		{name: "compressed_2xx", code: "provider_error", status: http.StatusBadGateway, refusal: true,
			msg: "upstream answered 200 with a compressed body (Content-Encoding: gzip) despite Accept-Encoding: identity", script: func(px *proxyPlay) error {
				px.head(http.StatusOK, "Content-Type", "text/event-stream", "Content-Encoding", "gzip")
				px.body("\x1f\x8b\x08\x00 not really gzip")
				return nil
			}},

		// The proxy cannot deliver the request.
		{name: "unreachable", code: "provider_error", status: http.StatusBadGateway, refusal: true,
			msg: "the upstream could not be reached (HTTP 502)", script: func(*proxyPlay) error {
				return caddyhttp.Error(http.StatusBadGateway, errors.New("dial tcp 10.1.2.3:8080: connect: connection refused"))
			}, check: func(t *testing.T, _ writerVariant, res writerResult) {
				// The proxy's error, with its addresses, goes to the log only.
				if strings.Contains(res.body, "10.1.2.3") {
					t.Errorf("the response names the upstream's address: %s", res.body)
				}
				if res.logs.FilterMessage("upstream unreachable").FilterFieldKey("error").Len() != 1 {
					t.Error("the proxy's error was not logged")
				}
			}},
		{name: "unreachable_no_upstream", code: "provider_error", status: http.StatusServiceUnavailable, refusal: true,
			msg: "no upstream is available (HTTP 503)", script: func(*proxyPlay) error {
				return caddyhttp.Error(http.StatusServiceUnavailable, errors.New("no upstreams available"))
			}},
		{name: "unreachable_timeout", code: "provider_error", status: http.StatusGatewayTimeout, refusal: true,
			msg: "the upstream did not answer in time (HTTP 504)", script: func(*proxyPlay) error {
				return caddyhttp.Error(http.StatusGatewayTimeout, errors.New("dial tcp: i/o timeout"))
			}},
		{name: "unreachable_plain_error", code: "provider_error", status: http.StatusBadGateway, refusal: true,
			msg: "the upstream could not be reached (HTTP 502)", script: func(*proxyPlay) error {
				return errors.New("boom")
			}},

		// The upstream falls silent (idle_timeout).
		{name: "idle_before_headers", idle: tableIdle, code: "upstream_timeout", status: http.StatusGatewayTimeout, refusal: true,
			msg: "no upstream byte for 30s", cause: deadline, script: func(px *proxyPlay) error {
				px.silence(tableIdle)
				return px.stall()
			}},
		{name: "idle_after_headers", idle: tableIdle, code: "upstream_timeout", status: http.StatusGatewayTimeout,
			msg: "no upstream byte for 30s", cause: deadline, script: func(px *proxyPlay) error {
				px.sse()
				px.silence(tableIdle)
				return px.stall()
			}},
		{name: "idle_mid_stream", idle: tableIdle, code: "upstream_timeout", status: http.StatusGatewayTimeout, answer: "Hello ",
			msg: "no upstream byte for 30s", cause: deadline, script: func(px *proxyPlay) error {
				px.sse()
				px.body(roleChunk, content("Hello "))
				px.silence(tableIdle)
				return px.stall()
			}},
		{name: "idle_measures_silence", idle: tableIdle, answer: "Hello world", script: func(px *proxyPlay) error {
			// Every upstream byte restarts the silence: 20s pauses never
			// reach a 30s idle_timeout.
			px.silence(20 * time.Second)
			px.sse()
			px.silence(20 * time.Second)
			px.body(roleChunk, content("Hello "))
			px.silence(20 * time.Second)
			px.body(content("world"), finishChunks)
			return nil
		}},

		// The upstream breaks off mid-stream.
		{name: "dropped_mid_stream", code: "upstream_error", status: http.StatusBadGateway, writerRefusesOneBody: true,
			answer: "Hello brave world", msg: protocol.MsgBrokeOff, script: func(px *proxyPlay) error {
				px.sse()
				px.body(roleChunk, content("Hello "), content("brave "), content("world"))
				px.abort()
				return nil
			}},
		{name: "malformed_chunk", code: "upstream_error", status: http.StatusBadGateway, answer: "Hello world",
			msg: "malformed", cause: upstreamDone, script: func(px *proxyPlay) error {
				px.sse()
				px.body(roleChunk, content("Hello "), content("world"), "data: {not json\n\n")
				return px.stall()
			}},
		{name: "in_stream_error", code: "upstream_error", status: http.StatusBadGateway, answer: "Hello ",
			msg: "overloaded", cause: upstreamDone, script: func(px *proxyPlay) error {
				px.sse()
				px.body(roleChunk, content("Hello "), `data: {"error":{"message":"overloaded","type":"server_error"}}`+"\n\n")
				return px.stall()
			}},
		{name: "ended_before_finish", code: "upstream_error", status: http.StatusBadGateway, answer: "Hello ",
			msg: "the stream ended before the reply finished", script: func(px *proxyPlay) error {
				px.sse()
				px.body(roleChunk, content("Hello "))
				return nil
			}},
		{name: "ended_mid_line", code: "upstream_error", status: http.StatusBadGateway, answer: "Hello ",
			msg: "cut off mid-line", script: func(px *proxyPlay) error {
				px.sse()
				px.body(roleChunk, content("Hello "), `data: {"id":"chatcmpl-1","choi`)
				return nil
			}},
		{name: "limit_max_reply", maxReply: int64(len(roleChunk+content("Hello ")) + 10), code: "reply_too_large",
			status: http.StatusBadGateway, answer: "Hello ", msg: "max_reply", cause: upstreamDone, script: func(px *proxyPlay) error {
				px.sse()
				px.body(roleChunk, content("Hello "), content("world, and more"))
				return px.stall()
			}},

		// The client leaves.
		{name: "client_leaves_mid_stream", gone: true, cut: true, cause: context.Canceled, script: func(px *proxyPlay) error {
			px.sse()
			px.body(roleChunk, content("Hello "))
			px.leave()
			return px.stall()
		}},
		{name: "client_leaves_before_answer", gone: true, cause: context.Canceled, script: func(px *proxyPlay) error {
			px.leave()
			return px.stall()
		}},
		{name: "client_connection_broken", brokenClient: true, gone: true, cut: true, script: func(px *proxyPlay) error {
			px.sse()
			px.body(helloWorld...)
			return nil
		}},
		{name: "abort_from_another_handler", gone: true, cut: true, script: func(px *proxyPlay) error {
			// An abort before any upstream answered is not the proxy's
			// mid-body abort: the connection is dropped, as abort means.
			px.abort()
			return nil
		}},

		// Heartbeats fill the silences of an open stream, and only those.
		{name: "heartbeats", beat: tableBeat, answer: "Hello world", script: func(px *proxyPlay) error {
			px.silence(tableBeat) // before the headers: only an early stream is open
			px.sse()
			px.silence(tableBeat)
			px.body(roleChunk, content("Hello "))
			px.silence(tableBeat)
			px.body(content("world"), finishChunks)
			px.silence(3 * tableBeat) // after the end: none
			return nil
		}, check: func(t *testing.T, v writerVariant, res writerResult) {
			want := 0
			switch {
			case v.proto.EarlyStart:
				want = 3
			case v.stream:
				want = 2
			}
			if res.tap.beats != want {
				t.Errorf("%d heartbeats, want %d", res.tap.beats, want)
			}
		}},
		{name: "heartbeats_only_in_silence", beat: tableBeat, answer: "Hello world", script: func(px *proxyPlay) error {
			px.sse()
			px.body(roleChunk)
			for _, piece := range []string{content("Hello "), content("world"), finishChunks} {
				px.silence(tableBeat - time.Second)
				px.body(piece)
			}
			return nil
		}, check: func(t *testing.T, _ writerVariant, res writerResult) {
			if res.tap.beats != 0 {
				t.Errorf("%d heartbeats while the stream was busy", res.tap.beats)
			}
		}},
	}
}
