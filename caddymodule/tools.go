package caddymodule

import (
	"context"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/request"
)

// The route's tool servers (CONTRACT.md §12): started at provision,
// stopped at cleanup, and asked per request which tools they offer. The
// loop that runs the calls is turnloop.go.

// provisionTools starts the route's tool servers in the background: a
// server that is down now is retried, and offers its tools once it
// answers (a warning, not a provision error).
func (h *Handler) provisionTools() error {
	cfg := h.settings.ToolServers
	if cfg == nil {
		return nil
	}
	set, err := toolserver.New(cfg, h.logger.Named("tools"))
	if err != nil {
		return err
	}
	set.Start()
	h.servers = set
	h.serversStarted = time.Now()
	return nil
}

// startupGrace is how long after provision a request waits for the tool
// servers to come up: a request sent right after Caddy starts (or
// reloads) gets the tools of servers that connect within it, instead of
// none; a server down for longer is not waited for again.
const startupGrace = 5 * time.Second

// cleanupTools stops the route's tool servers: stdio servers are stopped
// and reaped, sessions closed (a config reload).
func (h *Handler) cleanupTools() error {
	if h.servers == nil {
		return nil
	}
	return h.servers.Close()
}

// offer is what a request is offered of the route's tool servers.
type offer struct {
	tools    []request.ServerTool
	byName   map[string]transform.Tool
	approve  map[string]bool // tools the route marks approve (CONTRACT.md §13)
	resolver toolserver.Resolver
}

// offerTools returns the tools the route's servers offer this request,
// nil when the route has none or none is up. search says the user turned
// search on (skillpet enableSearch; a request format without the toggle
// always does): the tools a server block marks search are offered only
// then. Header values that take
// request placeholders are resolved with the request's replacer, never
// with anything else the request says (CONTRACT.md §12: servers come from
// config only).
func (h *Handler) offerTools(ctx context.Context, repl *caddy.Replacer, search bool) *offer {
	if h.servers == nil {
		return nil
	}
	if wait := startupGrace - time.Since(h.serversStarted); wait > 0 {
		wctx, cancel := context.WithTimeout(ctx, wait)
		_ = h.servers.WaitReady(wctx) // a server not up by then is not offered
		cancel()
	}
	var resolve toolserver.Resolver
	if repl != nil {
		resolve = func(s string) string { return repl.ReplaceKnown(s, "") }
	}
	tools := h.servers.Tools(ctx, resolve)
	agents := len(h.settings.ToolServers.Agents) > 0
	if len(tools) == 0 && !agents {
		return nil
	}
	o := &offer{resolver: resolve, byName: make(map[string]transform.Tool, len(tools)), approve: map[string]bool{}}
	for _, t := range tools {
		if t.Search && !search {
			continue // offered only when the user turned search on (CONTRACT.md §13)
		}
		o.tools = append(o.tools, request.ServerTool{Name: t.Name, Server: t.Server, JSON: toolJSON(t)})
		o.byName[t.Name] = transform.Tool{Label: t.Label, Server: t.Server, Event: t.Event, Image: t.Image}
		if t.Approve {
			o.approve[t.Name] = true
		}
	}
	if agents {
		// The route's sub-agents, consulted through one tool (agents.go).
		o.tools = append(o.tools, request.ServerTool{Name: config.ConsultTool, Server: "agents", JSON: h.agentTool()})
		o.byName[config.ConsultTool] = transform.Tool{Label: "咨询", Server: "agents"}
	}
	return o
}

// toolJSON is the OpenAI tool object of t.
func toolJSON(t toolserver.Tool) []byte {
	b := []byte(`{"type":"function","function":{"name":`)
	b = jsonout.AppendStringS(b, t.Name)
	if t.Description != "" {
		b = append(b, `,"description":`...)
		b = jsonout.AppendStringS(b, t.Description)
	}
	b = append(b, `,"parameters":`...)
	b = jsonout.AppendOrString(b, t.InputSchema)
	return append(b, "}}"...)
}

// loop is the pipeline's agent loop for the offered tools; nil without.
func (o *offer) loop(h *Handler) *pipeline.Loop {
	if o == nil {
		return nil
	}
	cfg := h.settings.ToolServers
	return &pipeline.Loop{
		Server: func(name string) (transform.Tool, bool) {
			t, ok := o.byName[name]
			return t, ok
		},
		MaxRounds:      cfg.Rounds(),
		MaxResultBytes: cfg.ResultBytes(),
		Describe:       h.describeConsult,
	}
}

// shapeTools adds the offered tools to the shaped request body: a client
// tool of the same name is a 400 naming it.
func (h *Handler) shapeTools(o *offer, shaped []byte) ([]byte, *request.Error) {
	if o == nil {
		return shaped, nil
	}
	out, e := request.AppendServerTools(make([]byte, 0, len(shaped)+1024), shaped, o.tools, h.settings.ToolNames)
	if e != nil {
		return nil, e
	}
	return out, nil
}
