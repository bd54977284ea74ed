package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/llmstream/llmstream/caddymodule/internal/cfargs"
	"github.com/llmstream/llmstream/config"
)

// parseTools reads llm_stream's tools option in either form: `tools
// <file>` (a file of tool definitions, repeatable) or the block of the MCP
// servers llmstream runs (CONTRACT.md §12):
//
//	tools {
//		mcp <name> {
//			command <program> [<args>...]
//			env     <KEY> <value>          # repeatable
//			url     <http(s)://…>
//			header  <Name> <value>         # repeatable
//			builtin demo
//			allow   <tool>...              # repeatable
//			label   <tool> <text>          # repeatable
//			approve <tool>...              # repeatable
//			event   <tool> <kind>          # repeatable: quiz-complete, interactive-content, pptx-outline
//			image   <tool> [<mode>]        # repeatable: display (default), single_select, multi_select
//			search  <tool>...              # repeatable: offered only with enableSearch
//			subscribe <uri> [<key>]        # repeatable: resource updates to the client
//			prefix  <text>
//			timeout <duration>
//		}
//		max_rounds       <n>
//		max_result_bytes <size>
//		agent <id> {
//			name               <text>
//			label              <text>
//			avatar             <url>
//			description        <text>
//			system_prompt      <file>     # repeatable
//			system_prompt_text <text>
//			tools              <tool>...  # repeatable
//			model              <model>
//			max_rounds         <n>
//		}
//		park {
//			ttl   <duration>
//			store file [<dir>] | redis <url>
//			key_prefix <prefix>
//			scope <placeholder>
//		}
//	}
func parseTools(d *caddyfile.Dispenser, r *config.Route) error {
	if d.NextArg() {
		f := d.Val()
		if d.NextArg() {
			return d.Errf("tools: one file per line (got %q and more)", f)
		}
		r.Tools = append(r.Tools, f)
		return nil
	}
	// Neither a file nor a block on the same line.
	line := d.Line()
	if !d.Next() {
		return d.Errf("tools: missing value (a file, or a block of mcp servers)")
	}
	open := d.Val() == "{" && d.Line() == line
	d.Prev()
	if !open {
		return d.Errf("tools: missing value (a file, or a block of mcp servers)")
	}
	if r.ToolServers != nil {
		return d.Errf("tools: the server block is specified more than once")
	}
	ts := new(config.ToolServers)
	r.ToolServers = ts
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		if name != "mcp" && name != "agent" && seen[name] {
			return d.Errf("tools: %s: specified more than once", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "mcp":
			var m config.MCPServer
			if m, err = parseMCP(d); err == nil {
				ts.MCP = append(ts.MCP, m)
			}
		case "max_rounds":
			err = cfargs.Int(d, &ts.MaxRounds)
		case "max_result_bytes":
			err = cfargs.Size(d, &ts.MaxResultBytes)
		case "park":
			ts.Park, err = parkBlock(d)
		case "agent":
			var a config.Agent
			if a, err = agentBlock(d); err == nil {
				ts.Agents = append(ts.Agents, a)
			}
		default:
			return d.Errf("unrecognized tools option %q (want mcp, agent, max_rounds, max_result_bytes or park)", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseMCP reads one `mcp <name> { … }` block.
func parseMCP(d *caddyfile.Dispenser) (config.MCPServer, error) {
	var m config.MCPServer
	if !d.NextArg() {
		return m, d.Errf("mcp: missing server name (mcp <name> { … })")
	}
	m.Name = d.Val()
	if d.NextArg() {
		return m, d.Errf("mcp %s: options go in a block", m.Name)
	}
	seen := map[string]bool{}
	transport := ""
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		repeatable := opt == "env" || opt == "header" || opt == "allow" || opt == "label" || opt == "approve" ||
			opt == "event" || opt == "image" || opt == "search" || opt == "subscribe"
		if seen[opt] && !repeatable {
			return m, d.Errf("mcp %s: %s: specified more than once", m.Name, opt)
		}
		seen[opt] = true
		switch opt {
		case "command", "url", "builtin":
			if transport != "" {
				return m, d.Errf("mcp %s: %s: a server has one of command, url or builtin (%s already given)", m.Name, opt, transport)
			}
			transport = opt
		}
		var err error
		switch opt {
		case "command":
			m.Command = d.RemainingArgs()
			if len(m.Command) == 0 {
				return m, d.Errf("mcp %s: command: missing program", m.Name)
			}
		case "url":
			err = cfargs.One(d, &m.URL)
		case "builtin":
			err = cfargs.One(d, &m.Builtin)
		case "env":
			err = pair(d, m.Name, "env", &m.Env)
		case "header":
			err = pair(d, m.Name, "header", &m.Headers)
		case "label":
			err = pair(d, m.Name, "label", &m.Labels)
		case "allow", "approve", "search":
			names := d.RemainingArgs()
			if len(names) == 0 {
				return m, d.Errf("mcp %s: %s: missing tool name", m.Name, opt)
			}
			switch opt {
			case "allow":
				m.Allow = append(m.Allow, names...)
			case "approve":
				m.Approve = append(m.Approve, names...)
			default:
				m.Search = append(m.Search, names...)
			}
		case "event":
			err = pair(d, m.Name, "event", &m.Events)
		case "image":
			args := d.RemainingArgs()
			if len(args) < 1 || len(args) > 2 {
				return m, d.Errf("mcp %s: image: want a tool and an optional mode (display, single_select, multi_select)", m.Name)
			}
			if m.Images == nil {
				m.Images = map[string]string{}
			}
			if _, dup := m.Images[args[0]]; dup {
				return m, d.Errf("mcp %s: image %s: specified more than once", m.Name, args[0])
			}
			mode := "display"
			if len(args) == 2 {
				mode = args[1]
			}
			m.Images[args[0]] = mode
		case "subscribe":
			args := d.RemainingArgs()
			if len(args) < 1 || len(args) > 2 {
				return m, d.Errf("mcp %s: subscribe: want a resource URI and an optional key", m.Name)
			}
			sub := config.Subscription{URI: args[0]}
			if len(args) == 2 {
				sub.Key = args[1]
			}
			m.Subscribe = append(m.Subscribe, sub)
		case "prefix":
			err = cfargs.One(d, &m.Prefix)
		case "timeout":
			m.Timeout, err = durationArg(d)
		default:
			return m, d.Errf("mcp %s: unrecognized option %q (want command, env, url, header, builtin, allow, label, approve, event, image, search, subscribe, prefix or timeout)", m.Name, opt)
		}
		if err != nil {
			return m, err
		}
	}
	return m, nil
}

// pair reads `<option> <key> <value>` into a map; a key given twice is an
// error.
func pair(d *caddyfile.Dispenser, server, opt string, dst *map[string]string) error {
	args := d.RemainingArgs()
	if len(args) != 2 {
		return d.Errf("mcp %s: %s: want a name and a value (quote a value that has spaces), got %d values", server, opt, len(args))
	}
	if *dst == nil {
		*dst = map[string]string{}
	}
	if _, dup := (*dst)[args[0]]; dup {
		return d.Errf("mcp %s: %s %s: specified more than once", server, opt, args[0])
	}
	(*dst)[args[0]] = args[1]
	return nil
}

// parkBlock reads the tools block's park block (CONTRACT.md §13).
func parkBlock(d *caddyfile.Dispenser) (*config.Park, error) {
	if d.NextArg() {
		return nil, d.ArgErr()
	}
	p := new(config.Park)
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] {
			return nil, d.Errf("park: %s: specified more than once", opt)
		}
		seen[opt] = true
		var err error
		switch opt {
		case "ttl":
			p.TTL, err = durationArg(d)
		case "store":
			args := d.RemainingArgs()
			switch {
			case len(args) == 0:
				return nil, d.Errf("park: store: want file [<dir>] or redis <url>")
			case args[0] == config.StoreFile && len(args) <= 2:
				p.Store = args[0]
				if len(args) == 2 {
					p.Dir = args[1]
				}
			case args[0] == config.StoreRedis && len(args) == 2:
				p.Store, p.RedisURL = args[0], args[1]
			default:
				return nil, d.Errf("park: store: want file [<dir>] or redis <url>, got %q", args)
			}
		case "key_prefix":
			err = cfargs.One(d, &p.KeyPrefix)
		case "scope":
			err = cfargs.One(d, &p.Scope)
		default:
			return nil, d.Errf("park: unrecognized option %q (want ttl, store, key_prefix or scope)", opt)
		}
		if err != nil {
			return nil, err
		}
	}
	return p, nil
}

// agentBlock reads one `agent <id> { … }` block (CONTRACT.md §13).
func agentBlock(d *caddyfile.Dispenser) (config.Agent, error) {
	var a config.Agent
	if !d.NextArg() {
		return a, d.Errf("agent: missing id (agent <id> { … })")
	}
	a.ID = d.Val()
	if d.NextArg() {
		return a, d.Errf("agent %s: options go in a block", a.ID)
	}
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		opt := d.Val()
		if seen[opt] && opt != "system_prompt" && opt != "tools" {
			return a, d.Errf("agent %s: %s: specified more than once", a.ID, opt)
		}
		seen[opt] = true
		var err error
		switch opt {
		case "name":
			err = cfargs.One(d, &a.Name)
		case "label":
			err = cfargs.One(d, &a.Label)
		case "avatar":
			err = cfargs.One(d, &a.Avatar)
		case "description":
			err = cfargs.One(d, &a.Description)
		case "system_prompt":
			var f string
			if err = cfargs.One(d, &f); err == nil {
				a.SystemPrompt = append(a.SystemPrompt, f)
			}
		case "system_prompt_text":
			err = cfargs.One(d, &a.SystemPromptText)
		case "tools":
			names := d.RemainingArgs()
			if len(names) == 0 {
				return a, d.Errf("agent %s: tools: missing tool name", a.ID)
			}
			a.Tools = append(a.Tools, names...)
		case "model":
			err = cfargs.One(d, &a.Model)
		case "max_rounds":
			err = cfargs.Int(d, &a.MaxRounds)
		default:
			return a, d.Errf("agent %s: unrecognized option %q (want name, label, avatar, description, system_prompt, system_prompt_text, tools, model or max_rounds)", a.ID, opt)
		}
		if err != nil {
			return a, err
		}
	}
	return a, nil
}
