package caddymodule

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/request"
)

// chat is one chat request, shaped and ready for the upstream.
type chat struct {
	start time.Time
	rid   string
	repl  *caddy.Replacer // nil outside a Caddy server
	// body is the request sent upstream, as r carries it; the checks
	// borrow it.
	body  []byte
	info  request.Info
	turn  *turn                // the conversation turn; nil without one
	check *pipeline.Validation // the reply's checks; nil for none
	tools *offer               // the route's tool servers' tools; nil for none (tools.go)
	resp  *respTurn            // a responses route's response; nil on other routes (responses_store.go)
	// park is where the turn parks a round whose calls wait for the
	// user; nil when the route cannot (park.go). resume is the parked
	// round the request resumes, nil for a new turn (resume.go).
	park    *parking
	resume  *resumed
	files   *files      // where the tools' files are kept for the client (files.go)
	updates *updatePump // the route's resource updates to this stream (resources.go)
	// next and req are the route's upstream handler and the request, for
	// the rounds of the sub-agents the turn consults (agents.go).
	next caddyhttp.Handler
	req  *http.Request
}

// shape reads and shapes a chat request (CONTRACT §3): the route's
// prompt, tools and format, the tools its servers offer (CONTRACT §12),
// the conversation's history, the reply's checks. A request that never reaches the upstream is answered here, and
// shape returns nil: a body it refuses (4xx), an endpoint its request
// format answers itself (anthropic's count_tokens), a turn the
// conversation store refuses.
func (h *Handler) shape(w http.ResponseWriter, r *http.Request) *chat {
	c := &chat{start: time.Now(), rid: requestID(r)}
	body, rerr := h.readBody(r)
	if rerr != nil {
		h.reject(w, c.rid, rerr)
		return nil
	}
	// A responses route puts a previous_response_id chain before the
	// input and opens compaction items (responses_store.go).
	if h.resp != nil {
		if body, c.resp, rerr = h.resp.prepare(r, c.rid, body); rerr != nil {
			h.reject(w, c.rid, rerr)
			return nil
		}
	}
	c.repl, _ = r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	prompt := h.settings.Prompt
	if c.repl != nil && prompt != "" {
		// ReplaceKnown leaves unknown {…} alone, so JSON and code samples in
		// a prompt survive (the request_body directive does the same).
		prompt = c.repl.ReplaceKnown(prompt, "")
	}
	shaped, info, err := h.settings.Shaper.Rewrite(body, prompt)
	if err != nil {
		var re *request.Error
		if !errors.As(err, &re) {
			re = &request.Error{Status: http.StatusBadRequest, Code: request.CodeInvalidBody, Message: err.Error()}
		}
		h.reject(w, c.rid, re)
		return nil
	}
	// Approvals an AI SDK page sends back resume the round that asked
	// (CONTRACT.md §13, resume.go): its request, not this one, goes on.
	if len(info.Approvals) > 0 && h.parks != nil && h.parks.ids {
		res, ref := h.resumeApprovals(r, info.Approvals)
		if ref != nil {
			h.reject(w, c.rid, &request.Error{Status: ref.status, Code: ref.code, Message: ref.message})
			return nil
		}
		c.resume, shaped = res, res.rec.Body
	}
	// The tools the route's servers offer go beside the client's and the
	// route's (CONTRACT.md §12).
	c.tools = h.offerTools(r.Context(), c.repl, searchOn(info))
	if c.resume != nil {
		// The round's request already offered them.
		return h.shaped(w, r, c, shaped, info)
	}
	if shaped, rerr = h.shapeTools(c.tools, shaped); rerr != nil {
		h.reject(w, c.rid, rerr)
		return nil
	}
	// A request the format answers itself (anthropic's count_tokens)
	// never reaches the upstream; the others get its headers.
	if ep := h.settings.Request.Endpoint(clientPath(r)); ep != nil {
		status, out := ep.Answer(shaped, info)
		_ = writeJSON(w, status, c.rid, out)
		return nil
	}
	if c.resp != nil {
		c.resp.facts(&info)
	}
	if f := h.settings.Request; f != nil && f.HeaderFacts != nil {
		// What the format's own headers tell its encoder, read before
		// UpstreamHeader drops them (anthropic-beta's MCP opt-in).
		info.Facts = f.HeaderFacts(r.Header, info.Facts)
	}
	if f := h.settings.Request; f != nil && f.UpstreamHeader != nil {
		f.UpstreamHeader(r.Header)
	}
	// A conversation turn puts the stored history before the new message
	// and holds the conversation until the reply is stored
	// (conversation_turn.go).
	turn, shaped, refuse := h.beginTurn(r, c.rid, body, shaped, &info)
	if refuse != nil {
		refuse(w)
		return nil
	}
	if turn != nil && turn.resume != nil {
		// The message answers a form a parked round waits on.
		c.resume, shaped = turn.resume, turn.resume.rec.Body
	}
	c.turn = turn
	return h.shaped(w, r, c, shaped, info)
}

// shaped finishes a chat whose upstream body is shaped: the stream's
// parking, the body set on the request, the reply's checks.
func (h *Handler) shaped(w http.ResponseWriter, r *http.Request, c *chat, shaped []byte, info request.Info) *chat {
	turn := c.turn
	c.park = h.newParking(r, turn)
	c.files = h.newFiles(r, c.tools)
	h.logResume(c.rid, c.resume)
	setBody(r, shaped)
	check, rerr := h.validation(shaped, c.repl)
	if rerr != nil {
		h.reject(w, c.rid, rerr)
		turn.end()
		return nil
	}
	c.body, c.info, c.turn, c.check = shaped, info, turn, check
	return c
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

// searchOn reports whether a request turned search on: skillpet's
// enableSearch; a request format without the toggle always does.
func searchOn(info request.Info) bool {
	if f, ok := info.Facts.(request.SkillpetFacts); ok {
		return f.Search
	}
	return true
}
