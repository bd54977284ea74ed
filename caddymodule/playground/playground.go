// Package playground is the llm_stream_playground Caddy module: one page,
// embedded in the binary, that lists the llm_stream routes of the server
// it is mounted on, sends a prompt to any of them in that route's own
// request shape, and shows what comes back as it arrives (CONTRACT.md
// §15): reasoning and phases, the answer rendered as Markdown, tool
// activity per round, serp queries, clarify, artifacts, violations, the
// raw events, and timings.
//
// It is off unless a config mounts it:
//
//	redir /playground /playground/
//	handle /playground/* {
//		llm_stream_playground
//	}
//
// The page is plain HTML, CSS and JavaScript committed in assets/: no
// build step, no third-party code. It reaches only its own origin (a
// Content-Security-Policy says so), and what it learns of the routes is
// caddymodule.RouteView: names, paths, protocols, request formats, the
// configured model and the tool servers' names, never a prompt, a header
// or a key.
package playground

import (
	"embed"
	"encoding/json"
	"net/http"
	"path"
	"strings"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/llmstream/llmstream/caddymodule"
)

//go:embed assets
var assets embed.FS

func init() {
	caddy.RegisterModule(Playground{})
	httpcaddyfile.RegisterHandlerDirective("llm_stream_playground", parseCaddyfile)
	httpcaddyfile.RegisterDirectiveOrder("llm_stream_playground", httpcaddyfile.Before, "respond")
}

// Playground serves the page. It has no options.
type Playground struct{}

// CaddyModule returns the Caddy module information.
func (Playground) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_stream_playground",
		New: func() caddy.Module { return new(Playground) },
	}
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	h.Next() // the directive name
	if h.NextArg() || h.NextBlock(0) {
		return nil, h.Err("llm_stream_playground takes no options")
	}
	return new(Playground), nil
}

// Route is a route as the page gets it: the route's view, and Endpoint,
// the path the page posts to ("" when the config's path cannot be posted
// to as it is, such as a wildcard that is not a conversation's).
type Route struct {
	caddymodule.RouteView
	Endpoint string `json:"endpoint"`
}

// csp keeps the page to its own origin: its scripts, styles and requests.
const csp = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// ServeHTTP serves the page, its files and routes.json; anything but GET
// and HEAD passes to next. The request's last path element names the
// file, so the page works under any prefix (handle or handle_path).
func (Playground) ServeHTTP(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return next.ServeHTTP(w, r)
	}
	h := w.Header()
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-cache")
	name := path.Base(r.URL.Path)
	if name == "routes.json" {
		srv, _ := r.Context().Value(caddyhttp.ServerCtxKey).(*caddyhttp.Server)
		h.Set("Content-Type", "application/json")
		return json.NewEncoder(w).Encode(routes(srv))
	}
	file, ctype := "index.html", "text/html; charset=utf-8"
	switch path.Ext(name) {
	case ".js":
		file, ctype = name, "text/javascript; charset=utf-8"
	case ".css":
		file, ctype = name, "text/css; charset=utf-8"
	}
	b, err := assets.ReadFile("assets/" + file)
	if err != nil {
		return caddyhttp.Error(http.StatusNotFound, err)
	}
	h.Set("Content-Type", ctype)
	_, err = w.Write(b)
	return err
}

// routes lists the llm_stream routes of srv with the path the page posts
// to; [] outside a server.
func routes(srv *caddyhttp.Server) []Route {
	out := []Route{}
	if srv == nil {
		return out
	}
	for _, v := range caddymodule.ServerRoutes(srv) {
		out = append(out, Route{RouteView: v, Endpoint: endpoint(v)})
	}
	return out
}

// endpoint is the path a chat request to the route is posted to: its
// config path, or a conversation's …/stream (specs/002 §2.3); "" when the
// path is a pattern the page cannot fill in.
func endpoint(v caddymodule.RouteView) string {
	p := v.Path
	if v.Conversation && strings.HasSuffix(p, "/*") {
		p = strings.TrimSuffix(p, "*") + "stream"
	}
	if p == "" || strings.ContainsAny(p, "*%{") {
		return ""
	}
	return p
}

// Interface guard.
var _ caddyhttp.MiddlewareHandler = (*Playground)(nil)
