package caddymodule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/transform/agent"
)

// Files the tools produce (CONTRACT.md §13: a result that carries a file,
// an MCP resource link or embedded resource, becomes data-file-ready; an
// image becomes image_generation): a part the client can fetch by its
// http(s) URI is shown with it; any other (an embedded resource, an
// image's bytes, a link to a resource only its server can read) is kept
// in the route's park store and served by llmstream under the route, at
// <the path the client used>?llmstream_file=<id>: an unguessable id (128
// random bits), kept for the park block's file lifetime, and tied to the
// scope of the request that made it: a request of another scope gets 404.
// A request with no scope value (a browser's <img>, which sends no
// Authorization header) is served: the id is its capability.

// fileParam is the query parameter that names a served file.
const fileParam = "llmstream_file"

// fileTTL is how long a served file is kept: the files of a conversation's
// history must outlive its turn.
const fileTTL = 7 * 24 * time.Hour

// maxServedFiles bounds the files one call's result publishes.
const maxServedFiles = 16

// storedFile is a served file in the park store.
type storedFile struct {
	Scope string `json:"scope"` // the digest of the scope value that made it
	Name  string `json:"name,omitempty"`
	Type  string `json:"type,omitempty"`
	Data  []byte `json:"data"`
}

// fileKey is a served file's key in the park store.
func fileKey(id string) conversation.ParkKey { return conversation.NewParkKey("llmstream files", id) }

// scopeDigest is the digest a file keeps of the scope value.
func scopeDigest(scope string) string {
	sum := sha256.Sum256([]byte("llmstream file scope\x00" + scope))
	return hex.EncodeToString(sum[:])
}

// files is what a stream needs to publish files: where, and whose.
type files struct {
	h     *Handler
	base  string // the path the client used
	scope string // the request's scope value
	tools *offer
}

// newFiles readies a stream to publish its tools' files; nil when the
// route has no store to keep them in.
func (h *Handler) newFiles(r *http.Request, tools *offer) *files {
	if h.parks == nil || h.parks.store == nil || h.servers == nil {
		return nil
	}
	scope := ""
	if h.conv != nil {
		scope = h.conv.scope(r)
	} else {
		scope = h.parks.parkScope(r)
	}
	return &files{h: h, base: clientPath(r), scope: scope, tools: tools}
}

// publish gives the parts of call's result that the client can see (a
// resource, an image) a URL: their http(s) URI, or the URL of a copy the
// gateway serves.
func (f *files) publish(ctx context.Context, tool string, res *agent.Result) {
	n := 0
	for i := range res.Parts {
		p := &res.Parts[i]
		if p.Kind != agent.PartResourceLink && p.Kind != agent.PartResource && p.Kind != agent.PartImage {
			continue
		}
		if _, ok := agent.JSONResource(*p); ok {
			continue // structured data, shown as itself (a resource part)
		}
		if u, err := url.Parse(p.URI); err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" {
			p.URL = p.URI
			continue
		}
		if f == nil || n >= maxServedFiles {
			continue
		}
		data, typ := p.Data, p.MIMEType
		switch {
		case p.Kind == agent.PartResource && data == nil:
			data = []byte(p.Text)
		case p.Kind == agent.PartResourceLink:
			var err error
			var resolve func(string) string
			if f.tools != nil {
				resolve = f.tools.resolver
			}
			mt, b, err := f.h.servers.ReadResource(ctx, tool, p.URI, resolve)
			if err != nil {
				continue
			}
			data = b
			if typ == "" {
				typ = mt
			}
		}
		if data == nil {
			continue
		}
		if id, err := f.keep(ctx, p, typ, data); err == nil {
			p.URL = f.base + "?" + fileParam + "=" + id
			n++
		} else {
			f.h.logger.Warn("a tool's file could not be kept", zap.Error(err))
		}
	}
}

// keep stores a file and returns its id.
func (f *files) keep(ctx context.Context, p *agent.Part, typ string, data []byte) (string, error) {
	id := newID("f")
	name := p.Name
	if name == "" && p.URI != "" {
		name = path.Base(p.URI)
	}
	b, err := json.Marshal(storedFile{Scope: scopeDigest(f.scope), Name: name, Type: typ, Data: data})
	if err != nil {
		return "", err
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), storeTimeout)
	defer cancel()
	return id, f.h.parks.store.Park(ctx, fileKey(id), b, time.Now().Add(fileTTL))
}

// serveFile answers GET <route>?llmstream_file=<id>: the file, to a
// request of the scope that made it (or of none).
func (h *Handler) serveFile(w http.ResponseWriter, r *http.Request, id string) {
	rid := requestID(r)
	notFound := func() {
		_ = writeJSON(w, http.StatusNotFound, rid, []byte(`{"error":"NOT_FOUND","message":"no such file here (it is unknown, another user's, or expired)"}`))
	}
	if h.parks == nil || h.parks.store == nil || len(id) > 64 {
		notFound()
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), storeTimeout)
	defer cancel()
	data, err := h.parks.store.Peek(ctx, fileKey(id))
	if err != nil {
		notFound()
		return
	}
	var f storedFile
	if json.Unmarshal(data, &f) != nil {
		notFound()
		return
	}
	scope := ""
	if h.conv != nil {
		scope = h.conv.scope(r)
	} else {
		scope = h.parks.parkScope(r)
	}
	if scope != "" && scopeDigest(scope) != f.Scope {
		notFound()
		return
	}
	hd := w.Header()
	typ := f.Type
	if mt, _, err := mime.ParseMediaType(typ); err != nil || typ == "" {
		typ = "application/octet-stream"
	} else {
		typ = mt
	}
	hd.Set("Content-Type", typ)
	hd.Set("Content-Length", strconv.Itoa(len(f.Data)))
	hd.Set("X-Content-Type-Options", "nosniff")
	// A tool's file is data, never a page of this origin's: no script
	// runs in it, whatever its type says.
	hd.Set("Content-Security-Policy", "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'; sandbox")
	hd.Set("Cache-Control", "private, max-age=3600")
	disp := "attachment"
	if strings.HasPrefix(typ, "image/") && typ != "image/svg+xml" || typ == "application/pdf" || typ == "text/plain" {
		disp = "inline"
	}
	if f.Name != "" {
		disp = mime.FormatMediaType(disp, map[string]string{"filename": f.Name})
	}
	hd.Set("Content-Disposition", disp)
	hd.Set("X-Request-Id", rid)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(f.Data)
	}
}

// fileRequest returns the file id a GET names, "" for none. The query is
// the one the client sent, before any rewrite.
func fileRequest(r *http.Request) string {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return ""
	}
	u := r.URL
	if orig, ok := r.Context().Value(caddyhttp.OriginalRequestCtxKey).(http.Request); ok && orig.URL != nil {
		u = orig.URL
	}
	return u.Query().Get(fileParam)
}
