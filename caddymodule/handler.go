// Package caddymodule is the llm_stream Caddy module: the handler that
// shapes chat requests and re-encodes the streamed replies, its Caddyfile
// directive, the response writer wrapper, logs and metrics. The llm_mock
// fake upstream is its own module, in caddymodule/llmmock. Everything that
// can be tested without a server lives in transform/ and config/.
package caddymodule

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/request"
)

func init() {
	caddy.RegisterModule(Handler{})
}

// Handler is the llm_stream middleware. It rewrites a chat-completions
// request (system prompt, tools, tool_choice, model, forced streaming),
// hands it to the next handler (reverse_proxy), and re-encodes the streamed
// reply into the route's protocol, parsing the model's text incrementally as
// it arrives. It never opens upstream connections itself.
//
// Its configuration is config.Route, whose fields are this module's JSON
// config.
type Handler struct {
	config.Route

	settings *config.Settings
	proto    *pipeline.Protocol
	pool     *sync.Pool // *pipeline.Pipeline
	logger   *zap.Logger
	metrics  *metrics
	clock    clock              // the stream timers' clock; nil is the system's (tests set one)
	conv     *conversationRoute // the conversation block; nil without one (conversation.go)
	resp     *responsesRoute    // a responses route's stored responses, WebSocket mode and compaction (responses_*.go)
}

// CaddyModule returns the Caddy module information.
func (Handler) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_stream",
		New: func() caddy.Module { return new(Handler) },
	}
}

// Provision loads and checks the route's files and settings. File paths are
// relative to Caddy's working directory.
func (h *Handler) Provision(ctx caddy.Context) error {
	h.logger = ctx.Logger()
	settings, err := h.Route.Load("")
	if err != nil {
		return err
	}
	// Load resolved the protocol and request format rows.
	h.settings, h.proto = settings, settings.Proto
	cfg := pipeline.Config{Format: format.Name(settings.Format), Parser: settings.ParserOptions()}
	if _, err := pipeline.New(cfg); err != nil {
		return fmt.Errorf("format: %w", err)
	}
	h.pool = &sync.Pool{New: func() any {
		p, _ := pipeline.New(cfg) // the config was checked above
		return p
	}}
	h.metrics, err = registerMetrics(ctx.GetMetricsRegistry())
	if err != nil {
		return err
	}
	return h.provisionConversation(ctx)
}

// Validate checks the settings Provision resolved.
func (h *Handler) Validate() error {
	if h.settings == nil {
		return errors.New("llm_stream: not provisioned")
	}
	return nil
}

// ServeHTTP shapes the request, proxies it through next, and re-encodes the
// reply. Requests other than POST pass through untouched (a GET /v1/models
// behind the same matcher).
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	// A conversation route answers init, clear and the rest itself, and
	// streams only POST …/stream (conversation.go).
	if h.conv != nil && h.conv.serveEndpoint(w, r) {
		return nil
	}
	// A responses route answers GET / DELETE …/{id} and the WebSocket
	// upgrade itself (responses_store.go, responses_ws.go).
	if h.resp != nil && h.resp.serveEndpoint(h, w, r, next) {
		return nil
	}
	if r.Method != http.MethodPost {
		return next.ServeHTTP(w, r)
	}
	start := time.Now()
	rid := requestID(r)
	body, rerr := h.readBody(r)
	if rerr != nil {
		h.reject(w, rid, rerr)
		return nil
	}
	// A responses route puts a previous_response_id chain before the
	// input and opens compaction items (responses_store.go).
	var rt *respTurn
	if h.resp != nil {
		if body, rt, rerr = h.resp.prepare(r, rid, body); rerr != nil {
			h.reject(w, rid, rerr)
			return nil
		}
	}
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	prompt := h.settings.Prompt
	if repl != nil && prompt != "" {
		// ReplaceKnown leaves unknown {…} alone, so JSON and code samples in
		// a prompt survive (the request_body directive does the same).
		prompt = repl.ReplaceKnown(prompt, "")
	}
	shaped, info, err := h.settings.Shaper.Rewrite(body, prompt)
	if err != nil {
		var re *request.Error
		if !errors.As(err, &re) {
			re = &request.Error{Status: http.StatusBadRequest, Code: request.CodeInvalidBody, Message: err.Error()}
		}
		h.reject(w, rid, re)
		return nil
	}
	// A request the format answers itself (anthropic's count_tokens)
	// never reaches the upstream; the others get its headers.
	if ep := h.settings.Request.Endpoint(clientPath(r)); ep != nil {
		status, out := ep.Answer(shaped, info)
		_ = writeJSON(w, status, rid, out)
		return nil
	}
	if rt != nil {
		rt.facts(&info)
	}
	if f := h.settings.Request; f != nil && f.UpstreamHeader != nil {
		f.UpstreamHeader(r.Header)
	}
	// A conversation turn puts the stored history before the new message
	// and holds the conversation until the reply is stored
	// (conversation_turn.go).
	turn, shaped, refuse := h.beginTurn(r, rid, body, shaped, &info)
	if refuse != nil {
		refuse(w)
		return nil
	}
	defer turn.end()
	setBody(r, shaped)
	check, rerr := h.validation(shaped, repl)
	if rerr != nil {
		h.reject(w, rid, rerr)
		return nil
	}

	meta := transform.Meta{
		MessageID:  newID("msg_"),
		RequestID:  rid,
		Provider:   h.settings.Provider,
		EndpointID: h.settings.EndpointID,
		Model:      info.Model,
		Request:    info.Facts,
		// Only an openai client chooses between a stream and one JSON body;
		// every other protocol is a stream (CONTRACT §3).
		Stream:         info.Stream || !h.proto.ClientChoosesStream,
		ReasoningTitle: h.settings.ReasoningTitle,
		Limits:         h.settings.Limits,
		Created:        start,
	}
	if repl != nil {
		repl.Set("http.llm_stream.message_id", meta.MessageID)
		repl.Set("http.llm_stream.request_id", meta.RequestID)
	}
	if rt != nil && rt.noGenerate {
		h.answerEmpty(w, rt, meta)
		return nil
	}

	p := h.pool.Get().(*pipeline.Pipeline)
	enc := h.proto.NewEncoder(meta)
	if rt != nil {
		enc = rt.encoder(enc)
	}
	p.Reset(turn.encoder(enc, meta), meta)
	p.Validate(check)
	ctx, cancel := context.WithCancelCause(r.Context())
	sw := newStreamWriter(w, h, p, meta, r.Context(), cancel)
	if h.proto.EarlyStart {
		sw.open()
	}
	sw.startTimers()
	defer func() {
		sw.stopTimers()
		cancel(errUpstreamDone)
		h.record(r, meta, info.LeftOut, p, sw, start)
		h.pool.Put(p)
	}()
	return h.attempts(sw, r.WithContext(ctx), shaped, next)
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

// readBody reads the request body, bounded by max_request_body.
func (h *Handler) readBody(r *http.Request) ([]byte, *request.Error) {
	limit := h.settings.MaxRequestBody
	if r.ContentLength > limit {
		return nil, request.TooLarge(limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	_ = r.Body.Close()
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe): // a request_body max_size ahead of us
		return nil, request.TooLarge(mbe.Limit)
	case err != nil:
		return nil, &request.Error{Status: http.StatusBadRequest, Code: "unreadable_body", Message: "reading the request body: " + err.Error()}
	case int64(len(body)) > limit:
		return nil, request.TooLarge(limit)
	}
	return body, nil
}

// clientPath is the path the client requested, before any rewrite aimed
// the request at the upstream's chat path.
func clientPath(r *http.Request) string {
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.URL != nil {
		return orig.URL.Path
	}
	return r.URL.Path
}

// setBody replaces the request body with the shaped one. ContentLength
// decides how the proxy frames the body, so it and the header must match
// the new length (CADDY.md §2.3, caddy#5829).
func setBody(r *http.Request, body []byte) {
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	r.Header.Set("Content-Type", "application/json")
	r.TransferEncoding = nil
	// The reply must arrive uncompressed for us to parse it; the client's
	// own Accept-Encoding is served by encode, which wraps this handler.
	r.Header.Set("Accept-Encoding", "identity")
}

// reject answers a request that cannot be shaped: it never reaches the
// upstream (CONTRACT §3).
func (h *Handler) reject(w http.ResponseWriter, rid string, re *request.Error) {
	h.metrics.rejected(re.Code)
	if c := h.logger.Check(zapcore.DebugLevel, "request rejected"); c != nil {
		c.Write(zap.String("request_id", rid), zap.Int("status", re.Status), zap.String("code", re.Code))
	}
	_ = writeJSON(w, re.Status, rid, h.settings.Request.ErrorBody(nil, re))
}

// writeJSON answers with one JSON body: a request refused before the
// upstream, or an upstream failure answered with a status.
func writeJSON(w http.ResponseWriter, status int, requestID string, body []byte) error {
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	h.Set("X-Request-Id", requestID)
	w.WriteHeader(status)
	_, err := w.Write(body)
	return err
}

// requestID is the client's X-Request-Id, or a new one: every response
// echoes it (CONTRACT §5) and every event carries it. A client's value is
// kept only if it is a plausible id, since it is echoed into headers, events
// and logs.
func requestID(r *http.Request) string {
	if id := r.Header.Get("X-Request-Id"); id != "" && len(id) <= 128 && printableASCII(id) {
		return id
	}
	return newID("req_")
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x21 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// newID returns prefix and 24 random hex digits.
func newID(prefix string) string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Handler)(nil)
	_ caddy.Validator             = (*Handler)(nil)
	_ caddy.CleanerUpper          = (*Handler)(nil)
	_ caddyhttp.MiddlewareHandler = (*Handler)(nil)
)
