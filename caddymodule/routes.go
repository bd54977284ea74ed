package caddymodule

import (
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
)

// What an llm_stream route shows of itself outside its streams: its name
// for metrics and traces, and its facts for the playground (CONTRACT.md
// §15). Both come from the config, never from a request: a route does not
// know the path that leads to it when it is provisioned, so it finds
// itself in its server's routes the first time it serves.

// RouteView is an llm_stream route as the playground lists it. It holds
// no secret: no prompt, no header, no tool server's command or URL, only
// what a client needs to speak to the route and what the operator named.
type RouteView struct {
	// Name is the route's name (its name option, else its Path).
	Name string `json:"name"`
	// Path is the first path of the innermost path matcher leading to the
	// route in the config ("/gymbro", "/skillpet/*"); "" when none does.
	Path string `json:"path"`
	// Protocol is what the route streams; RequestFormat the body it reads
	// ("openai" for a chat-completions body); Format what it parses.
	Protocol      string `json:"protocol"`
	RequestFormat string `json:"request_format"`
	Format        string `json:"format"`
	// Model is the model the route sets, "" when the client's is used.
	Model string `json:"model,omitempty"`
	// Conversation says the route keeps conversations (skillpet's
	// backend: POST <path>/stream).
	Conversation bool `json:"conversation,omitempty"`
	// ToolServers are the names of the route's tool servers, whose tools
	// the gateway runs.
	ToolServers []string `json:"tool_servers,omitempty"`
	// Validate says the route validates replies (and may retry them).
	Validate bool `json:"validate,omitempty"`
}

// ServerRoutes returns the llm_stream routes of srv, in config order.
func ServerRoutes(srv *caddyhttp.Server) []RouteView {
	var out []RouteView
	walkRoutes(srv.Routes, "", func(path string, h *Handler) bool {
		out = append(out, h.view(path))
		return true
	})
	return out
}

// view is the route's RouteView, reached by path.
func (h *Handler) view(path string) RouteView {
	s := h.settings
	v := RouteView{Name: h.Name, Path: path, Protocol: s.Protocol, RequestFormat: s.RequestFormat, Format: s.Format,
		Model: s.Model, Conversation: s.Conversation != nil, Validate: s.Validate != nil}
	if v.Name == "" {
		v.Name = path
	}
	if ts := s.ToolServers; ts != nil {
		for _, m := range ts.MCP {
			v.ToolServers = append(v.ToolServers, m.Name)
		}
	}
	return v
}

// walkRoutes calls visit for every llm_stream handler in routes and the
// subroutes they hold (handle, route, handle_path), with the path that
// leads to it; visit returns false to stop.
func walkRoutes(routes caddyhttp.RouteList, path string, visit func(path string, h *Handler) bool) bool {
	for i := range routes {
		rt := &routes[i]
		p := path
		for _, set := range rt.MatcherSets {
			for _, m := range set {
				switch mp := m.(type) {
				case *caddyhttp.MatchPath:
					if len(*mp) > 0 {
						p = (*mp)[0]
					}
				case caddyhttp.MatchPath:
					if len(mp) > 0 {
						p = mp[0]
					}
				}
			}
		}
		for _, mh := range rt.Handlers {
			switch x := mh.(type) {
			case *Handler:
				if !visit(p, x) {
					return false
				}
			case *caddyhttp.Subroute:
				if !walkRoutes(x.Routes, p, visit) {
					return false
				}
			}
		}
	}
	return true
}

// routeLabel returns the route's name for metrics and traces: its name
// option, else the config path that leads to it in the server r arrived
// on, found once.
func (h *Handler) routeLabel(srv *caddyhttp.Server) string {
	if h.Name != "" {
		return h.Name
	}
	rp := h.path
	if rp == nil { // not provisioned: a unit test's handler
		return ""
	}
	rp.once.Do(func() {
		if srv == nil {
			return
		}
		walkRoutes(srv.Routes, "", func(path string, x *Handler) bool {
			if x == h {
				rp.path = labelText(path)
				return false
			}
			return true
		})
	})
	return rp.path
}

// routePath is a route's config path, found once.
type routePath struct {
	once sync.Once
	path string
}
