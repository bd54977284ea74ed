package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/coder/websocket"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// WebSocket mode (CONTRACT.md §14; Open Responses, x-openresponses-websocket;
// what Codex CLI uses with supports_websockets = true): GET /v1/responses
// with an Upgrade: websocket is accepted, and each text frame
// {"type":"response.create", …a response body…} runs one response through
// the same path as POST /v1/responses, its response.* events sent as one
// frame each. One response at a time per socket: a frame sent while one
// runs waits for it. A failure before the response exists (a refused
// request, an upstream that answered with an error status) is one error
// frame {"type":"error","status":…,"error":{type,code,message,param}}
// (WebSocketErrorEvent); a failure after is response.failed, which ends the
// turn as the other terminal events do. The socket's last response is kept
// in memory, so previous_response_id continues from it even with store
// false; a continuation that fails forgets it (the spec's eviction).
//
// The upstream is still reached through the next handler (reverse_proxy),
// one request per response.create, with the upgrade request's headers
// (Authorization included: it is the scope) minus the upgrade's own.

// wsSession is one socket's state: its last response.
type wsSession struct {
	mu     sync.Mutex
	lastID string
	// last is the last response's context as items: the chain before it,
	// its input and its output, within the history budget.
	last []json.RawMessage
}

type wsSessionKey struct{}

// wsSessionOf returns the WebSocket session a request is a turn of, nil
// over HTTP.
func wsSessionOf(ctx context.Context) *wsSession {
	s, _ := ctx.Value(wsSessionKey{}).(*wsSession)
	return s
}

// lookup returns the items of the socket's last response if it is id.
func (s *wsSession) lookup(id string) ([]json.RawMessage, bool) {
	if s == nil {
		return nil, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastID == "" || s.lastID != id {
		return nil, false
	}
	return s.last, true
}

// remember makes id the socket's last response.
func (s *wsSession) remember(id string, items []json.RawMessage) {
	s.mu.Lock()
	s.lastID, s.last = id, items
	s.mu.Unlock()
}

// evict forgets id if it is the last response.
func (s *wsSession) evict(id string) {
	s.mu.Lock()
	if s.lastID == id {
		s.lastID, s.last = "", nil
	}
	s.mu.Unlock()
}

// isWebSocketUpgrade reports whether r asks to upgrade to a WebSocket.
func isWebSocketUpgrade(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket") &&
		strings.Contains(strings.ToLower(r.Header.Get("Connection")), "upgrade")
}

// maxQueued bounds the response.create frames read ahead while a response
// runs; the socket is not read further until one is taken.
const maxQueued = 8

// serveWebSocket runs a WebSocket session until the client closes it.
func (h *Handler) serveWebSocket(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) {
	conn, err := websocket.Accept(w, r, &websocket.AcceptOptions{
		// Non-browser clients (Codex, SDKs) send no Origin; a browser page
		// of another origin is refused (Accept's default check), as a
		// cross-site page must not drive a user's credentials.
		CompressionMode: websocket.CompressionDisabled,
	})
	if err != nil {
		return // Accept answered the client
	}
	conn.SetReadLimit(h.settings.MaxRequestBody)
	sess := &wsSession{}
	ctx, cancel := context.WithCancel(context.WithValue(r.Context(), wsSessionKey{}, sess))
	defer cancel()
	frames := make(chan []byte, maxQueued)
	var closeErr error
	go func() {
		// The reader: frames into the queue; a close or an error ends the
		// session and cancels the running response (its upstream request).
		defer close(frames)
		defer cancel()
		for {
			_, data, err := conn.Read(ctx)
			if err != nil {
				closeErr = err
				return
			}
			select {
			case frames <- data:
			case <-ctx.Done():
				return
			}
		}
	}()
	for data := range frames {
		h.wsTurn(ctx, conn, r, sess, data, next)
	}
	if st := websocket.CloseStatus(closeErr); st == -1 && closeErr != nil && !errors.Is(closeErr, context.Canceled) {
		h.logger.Debug("websocket ended", zap.Error(closeErr))
	}
	_ = conn.Close(websocket.StatusNormalClosure, "")
}

// wsTurn runs one frame: a response.create as a POST through ServeHTTP,
// anything else an error frame.
func (h *Handler) wsTurn(ctx context.Context, conn *websocket.Conn, up *http.Request, sess *wsSession, data []byte, next caddyhttp.Handler) {
	body, prev, ferr := wsFrameBody(data)
	if ferr != nil {
		wsError(ctx, conn, http.StatusBadRequest, ferr.code, ferr.param, ferr.msg)
		return
	}

	r := up.Clone(ctx)
	r.Method = http.MethodPost
	for _, k := range []string{"Upgrade", "Connection", "Sec-Websocket-Key", "Sec-Websocket-Version",
		"Sec-Websocket-Extensions", "Sec-Websocket-Protocol", "Origin"} {
		r.Header.Del(k)
	}
	r.Header.Del("X-Request-Id") // one id per response, not per socket
	r.Header.Set("Content-Type", "application/json")
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	tw := &wsTurnWriter{conn: conn, ctx: ctx, header: make(http.Header)}
	if err := h.ServeHTTP(tw, r, next); err != nil {
		status := http.StatusBadGateway
		var he caddyhttp.HandlerError
		if errors.As(err, &he) && he.StatusCode != 0 {
			status = he.StatusCode
		}
		tw.WriteHeader(status)
	}
	tw.finish()
	if tw.failed && prev != "" {
		sess.evict(prev)
	}
}

// frameError is why a frame is not a response.create.
type frameError struct{ code, param, msg string }

// wsFrameBody reads a client frame: a response.create becomes the body
// of a streamed POST /v1/responses, and the previous_response_id it
// names; anything else is a frameError. HTTP-only members (the spec: MUST
// NOT be sent) are dropped rather than refused, and the turn always
// streams. It never panics, whatever the client sent.
func wsFrameBody(data []byte) ([]byte, string, *frameError) {
	var frame map[string]json.RawMessage
	if json.Unmarshal(data, &frame) != nil || frame == nil {
		return nil, "", &frameError{"invalid_json", "", "a frame must be a JSON object: {\"type\":\"response.create\", …}"}
	}
	if typ := stringValue(frame["type"]); typ != "response.create" {
		return nil, "", &frameError{"invalid_request_error", "type", "unknown event type " + strconv.Quote(printableID(typ)) + ": send response.create"}
	}
	delete(frame, "type")
	delete(frame, "stream_options")
	delete(frame, "background")
	frame["stream"] = json.RawMessage("true")
	body, err := json.Marshal(frame)
	if err != nil {
		return nil, "", &frameError{"invalid_json", "", "the frame could not be read: " + err.Error()}
	}
	return body, stringValue(frame["previous_response_id"]), nil
}

// stringValue returns a raw JSON string's value, "" for anything else.
func stringValue(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

// wsError sends one WebSocketErrorEvent frame.
func wsError(ctx context.Context, conn *websocket.Conn, status int, code, param, msg string) {
	out := []byte(`{"type":"error","status":`)
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, `,"error":{"type":"invalid_request_error","code":`...)
	out = jsonout.AppendStringS(out, code)
	out = append(out, `,"message":`...)
	out = jsonout.AppendStringS(out, msg)
	out = append(out, `,"param":`...)
	if param != "" {
		out = jsonout.AppendStringS(out, param)
	} else {
		out = append(out, "null"...)
	}
	_ = conn.Write(ctx, websocket.MessageText, append(out, "}}"...))
}

// wsTurnWriter is the ResponseWriter of one WebSocket turn: an event
// stream becomes one text frame per event (comments and [DONE] dropped),
// any other answer (a refusal with its status and JSON error body) one
// error frame.
type wsTurnWriter struct {
	conn   *websocket.Conn
	ctx    context.Context
	header http.Header
	status int
	buf    []byte
	// stream: the answer is an event stream; gone: a frame could not be
	// sent; failed: the turn failed (an error status or response.failed).
	stream, gone, failed bool
}

func (tw *wsTurnWriter) Header() http.Header { return tw.header }

func (tw *wsTurnWriter) WriteHeader(status int) {
	if tw.status != 0 || status >= 100 && status <= 199 {
		return
	}
	tw.status = status
	tw.stream = status/100 == 2 && strings.HasPrefix(tw.header.Get("Content-Type"), "text/event-stream")
	if status/100 != 2 {
		tw.failed = true
	}
}

func (tw *wsTurnWriter) Write(p []byte) (int, error) {
	if tw.status == 0 {
		tw.WriteHeader(http.StatusOK)
	}
	if tw.gone {
		return 0, errClientGone
	}
	tw.buf = append(tw.buf, p...)
	if tw.stream {
		tw.sendEvents()
	}
	if tw.gone {
		return 0, errClientGone
	}
	return len(p), nil
}

// FlushError sends the complete events written so far.
func (tw *wsTurnWriter) FlushError() error {
	if tw.stream {
		tw.sendEvents()
	}
	if tw.gone {
		return errClientGone
	}
	return nil
}

// sendEvents sends each complete SSE event of buf as a frame.
func (tw *wsTurnWriter) sendEvents() {
	for !tw.gone {
		end := bytes.Index(tw.buf, []byte("\n\n"))
		if end < 0 {
			return
		}
		block := tw.buf[:end]
		for line := range bytes.SplitSeq(block, []byte("\n")) {
			data, ok := bytes.CutPrefix(line, []byte("data: "))
			if !ok || string(data) == "[DONE]" {
				continue
			}
			if bytes.HasPrefix(data, []byte(`{"type":"response.failed"`)) {
				tw.failed = true
			}
			if err := tw.conn.Write(tw.ctx, websocket.MessageText, data); err != nil {
				tw.gone = true
			}
		}
		tw.buf = tw.buf[end+2:]
	}
}

// finish sends what a turn that did not stream answered: its error body as
// an error frame.
func (tw *wsTurnWriter) finish() {
	if tw.stream || tw.gone {
		return
	}
	status := tw.status
	if status == 0 {
		status = http.StatusBadGateway
	}
	var body struct {
		Error json.RawMessage `json:"error"`
	}
	_ = json.Unmarshal(tw.buf, &body)
	if kindOfRaw(body.Error) != '{' {
		// An error body of another shape (a plain string, a proxy's
		// page): the status alone says what happened.
		wsError(tw.ctx, tw.conn, status, "upstream_error", "", strings.TrimSpace(http.StatusText(status)))
		tw.failed = true
		return
	}
	out := []byte(`{"type":"error","status":`)
	out = strconv.AppendInt(out, int64(status), 10)
	out = append(out, `,"error":`...)
	if c, ok := jsonout.AppendCompact(out, body.Error); ok {
		out = c
	} else {
		out = append(out, body.Error...)
	}
	_ = tw.conn.Write(tw.ctx, websocket.MessageText, append(out, '}'))
	tw.failed = true
}

// kindOfRaw returns the first byte of a raw JSON value, 0 for none.
func kindOfRaw(raw json.RawMessage) byte {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return 0
	}
	return raw[0]
}

var _ http.ResponseWriter = (*wsTurnWriter)(nil)
