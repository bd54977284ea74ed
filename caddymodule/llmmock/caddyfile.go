package llmmock

import (
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
	"github.com/caddyserver/caddy/v2/caddyconfig/httpcaddyfile"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/llmstream/llmstream/caddymodule/internal/cfargs"
)

func init() {
	httpcaddyfile.RegisterHandlerDirective("llm_mock", parseMockCaddyfile)
	// A responder, ordered like respond.
	httpcaddyfile.RegisterDirectiveOrder("llm_mock", httpcaddyfile.Before, "respond")
}

func parseMockCaddyfile(h httpcaddyfile.Helper) (caddyhttp.MiddlewareHandler, error) {
	m := new(Mock)
	err := m.UnmarshalCaddyfile(h.Dispenser)
	return m, err
}

// UnmarshalCaddyfile sets up the fake upstream from Caddyfile tokens:
//
//	llm_mock [<matcher>] {
//		reply_file      <file>      # repeatable: replies rotate
//		reply_text      <text>      # repeatable
//		reasoning_file  <file>
//		tool_calls_file <file>      # repeatable: rotate with the replies
//		replay_file     <file>      # repeatable: a recorded upstream body, served as it is
//		chunk_size      <bytes>
//		random_chunks               # deltas of 1 to chunk_size bytes
//		record                      # keep request bodies: GET …/llm_mock/requests
//		interval        <duration>
//		model           <name>
//		truncate_after  <bytes>
//		call_offered_tool           # a request offering tools gets a call of the first
//		by_round                    # pick the reply by the request's agent-loop round, not in rotation
//		fault <kind> [every <n>] [burst <n>] [after <bytes>] [delay <duration>] [status <code>]
//		                            # repeatable: reset, stall, garbage, slow_start, status (fault.go)
//	}
func (m *Mock) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		name := d.Val()
		if seen[name] && name != "reply_file" && name != "reply_text" && name != "tool_calls_file" && name != "replay_file" && name != "fault" {
			return d.Errf("%s: specified more than once", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "reply_file":
			var f string
			if err = cfargs.One(d, &f); err == nil {
				m.ReplyFiles = append(m.ReplyFiles, f)
			}
		case "reply_text":
			var t string
			if err = cfargs.One(d, &t); err == nil {
				m.ReplyTexts = append(m.ReplyTexts, t)
			}
		case "reasoning_file":
			err = cfargs.One(d, &m.ReasoningFile)
		case "tool_calls_file":
			var f string
			if err = cfargs.One(d, &f); err == nil {
				m.ToolCallsFiles = append(m.ToolCallsFiles, f)
			}
		case "chunk_size":
			err = cfargs.Int(d, &m.ChunkSize)
			if err == nil && m.ChunkSize == 0 {
				err = d.Errf("chunk_size: must be at least 1")
			}
		case "interval":
			var dur time.Duration
			if dur, err = cfargs.Duration(d); err == nil {
				cd := caddy.Duration(dur)
				m.Interval = &cd
			}
		case "replay_file":
			var f string
			if err = cfargs.One(d, &f); err == nil {
				m.ReplayFiles = append(m.ReplayFiles, f)
			}
		case "record":
			if d.NextArg() {
				return d.ArgErr()
			}
			m.Record = true
		case "random_chunks":
			if d.NextArg() {
				return d.ArgErr()
			}
			m.RandomChunks = true
		case "call_offered_tool":
			if d.NextArg() {
				return d.ArgErr()
			}
			m.CallOfferedTool = true
		case "by_round":
			if d.NextArg() {
				return d.ArgErr()
			}
			m.ByRound = true
		case "fault":
			var f Fault
			if f, err = parseFault(d); err == nil {
				m.Faults = append(m.Faults, f)
			}
		case "model":
			err = cfargs.One(d, &m.Model)
		case "truncate_after":
			err = cfargs.Int(d, &m.TruncateAfter)
		default:
			return d.Errf("unrecognized llm_mock option %q", name)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// parseFault reads `fault <kind> [every <n>] [burst <n>] [after <bytes>]
// [delay <duration>] [status <code>]`.
func parseFault(d *caddyfile.Dispenser) (Fault, error) {
	var f Fault
	if !d.NextArg() {
		return f, d.Errf("fault: missing kind")
	}
	f.Kind = d.Val()
	for d.NextArg() {
		key := d.Val()
		if !d.NextArg() {
			return f, d.Errf("fault %s: %s needs a value", f.Kind, key)
		}
		val := d.Val()
		var err error
		switch key {
		case "every":
			f.Every, err = strconv.Atoi(val)
		case "burst":
			f.Burst, err = strconv.Atoi(val)
		case "after":
			f.After, err = strconv.Atoi(val)
		case "status":
			f.Status, err = strconv.Atoi(val)
		case "delay":
			var dur time.Duration
			dur, err = caddy.ParseDuration(val)
			f.Delay = caddy.Duration(dur)
		default:
			return f, d.Errf("fault %s: unknown setting %q (every, burst, after, delay, status)", f.Kind, key)
		}
		if err != nil {
			return f, d.Errf("fault %s: %s: %v", f.Kind, key, err)
		}
	}
	if err := f.check(); err != nil {
		return f, d.Err(err.Error())
	}
	return f, nil
}

// Interface guard.
var _ caddyfile.Unmarshaler = (*Mock)(nil)
