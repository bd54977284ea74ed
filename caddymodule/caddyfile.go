package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/llmstream/llmstream/caddymodule/internal/cfargs"
	"github.com/llmstream/llmstream/config"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("llm_stream", parseCaddyfile)
	// Right after encode: encode then compresses what we write, and we still
	// come before handle and route, so we wrap a reverse_proxy nested in them
	// (CADDY.md §2.6; "before reverse_proxy" would not, P13).
	httpcaddyfile.RegisterDirectiveOrder("llm_stream", httpcaddyfile.After, "encode")
}

func parseCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Handler)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

// UnmarshalCaddyfile sets up the handler from Caddyfile tokens:
//
//	llm_stream [<matcher>] {
//		request_format     openai | <a protocol with a body of its own>
//		system_prompt      <file>           # repeatable
//		system_prompt_text <text>
//		system_prompt_mode prepend | append | replace
//		tools              <file>           # repeatable
//		tools              { mcp <name> { … } … }  # see parseTools
//		tool               ask_user         # repeatable
//		tool_choice        auto | none | required | <function name>
//		model              <name>
//		max_request_body   <size>
//		format             auto | <a row of the format table, transform/format>
//		protocol           <a row of the protocol table, transform/protocol>
//		heartbeat          <duration>
//		idle_timeout       <duration>
//		provider           <name>
//		name               <route name>     # metrics, traces, playground
//		trace_content                       # prompt and reply text in trace spans
//		endpoint_id        <int>
//		reasoning_title    <text>
//		fallback_text      <text>
//		think_tags         auto | prefilled | off
//		think_prefilled    <pattern>...    # repeatable
//		text_tools         off | hermes
//		max_sse_line       <size>
//		max_reply          <size>
//		max_tag            <size>
//		max_block          <size>
//		max_key            <size>
//		max_depth          <int>
//		max_tool_calls     <int>
//		validate           [{ … }]     # see parseValidate
//		conversation       { … }       # see parseConversation
//	}
//
// The values of request_format, format and protocol are the tables' rows,
// which config checks names against (docs/configuration.md lists them).
// Settings are checked when the config is provisioned, so that `caddy
// validate` and `caddy adapt --validate` name the bad one.
func (h *Handler) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	r := &h.Route
	seen := map[string]bool{}
	for d.NextBlock(0) {
		name := d.Val()
		repeatable := name == "system_prompt" || name == "tools" || name == "tool" || name == "think_prefilled"
		if seen[name] && !repeatable {
			return d.Errf("%s: specified more than once", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "request_format":
			err = cfargs.One(d, &r.RequestFormat)
		case "system_prompt":
			var f string
			if err = cfargs.One(d, &f); err == nil {
				r.SystemPrompt = append(r.SystemPrompt, f)
			}
		case "system_prompt_text":
			err = cfargs.One(d, &r.SystemPromptText)
		case "system_prompt_mode":
			err = cfargs.One(d, &r.SystemPromptMode)
		case "tools":
			err = parseTools(d, r) // a file, or the MCP server block
		case "tool":
			var t string
			if err = cfargs.One(d, &t); err == nil {
				r.Tool = append(r.Tool, t)
			}
		case "tool_choice":
			err = cfargs.One(d, &r.ToolChoice)
		case "model":
			err = cfargs.One(d, &r.Model)
		case "max_request_body":
			err = cfargs.Size(d, &r.MaxRequestBody)
		case "format":
			err = cfargs.One(d, &r.Format)
		case "protocol":
			err = cfargs.One(d, &r.Protocol)
		case "heartbeat":
			r.Heartbeat, err = durationArg(d)
		case "idle_timeout":
			r.IdleTimeout, err = durationArg(d)
		case "provider":
			err = cfargs.One(d, &r.Provider)
		case "name":
			err = cfargs.One(d, &r.Name)
		case "trace_content":
			if d.NextArg() {
				return d.ArgErr()
			}
			r.TraceContent = true
		case "endpoint_id":
			err = cfargs.Int(d, &r.EndpointID)
		case "reasoning_title":
			err = cfargs.One(d, &r.ReasoningTitle)
		case "fallback_text":
			err = cfargs.One(d, &r.FallbackText)
		case "think_tags":
			err = cfargs.One(d, &r.ThinkTags)
		case "think_prefilled":
			args := d.RemainingArgs()
			if len(args) == 0 {
				return d.Errf("think_prefilled: expected at least one model name pattern")
			}
			r.ThinkPrefilled = append(r.ThinkPrefilled, args...)
		case "text_tools":
			err = cfargs.One(d, &r.TextTools)
		case "max_sse_line":
			err = cfargs.SizeInt(d, &r.Limits.MaxSSELineBytes)
		case "max_reply":
			err = cfargs.Size(d, &r.Limits.MaxReplyBytes)
		case "max_tag":
			err = cfargs.SizeInt(d, &r.Limits.MaxTagBytes)
		case "max_block":
			err = cfargs.SizeInt(d, &r.Limits.MaxBlockBytes)
		case "max_key":
			err = cfargs.SizeInt(d, &r.Limits.MaxKeyBytes)
		case "max_depth":
			err = cfargs.Int(d, &r.Limits.MaxDepth)
		case "max_tool_calls":
			err = cfargs.Int(d, &r.Limits.MaxToolCalls)
		case "validate":
			r.Validate, err = parseValidate(d)
		case "conversation":
			r.Conversation, err = parseConversation(d)
		default:
			return d.Errf("unrecognized llm_stream option %q", name)
		}
		if err != nil {
			return err
		}
	}
	// Check the whole route now, not only when the config is provisioned,
	// so that `caddy adapt` already names a bad setting, a missing file or
	// an undefined tool (CONTRACT §3). Provision loads it again.
	if _, err := r.Load(""); err != nil {
		return d.Errf("llm_stream: %v", err)
	}
	return nil
}

// durationArg reads a duration such as 15s or 2m into a config.Duration;
// 0 is allowed (heartbeat 0 disables heartbeats).
func durationArg(d *caddyfile.Dispenser) (*config.Duration, error) {
	dur, err := cfargs.Duration(d)
	if err != nil {
		return nil, err
	}
	cd := config.Duration(dur)
	return &cd, nil
}

// Interface guard.
var _ caddyfile.Unmarshaler = (*Handler)(nil)
