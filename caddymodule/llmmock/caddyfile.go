package llmmock

import (
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
//	}
func (m *Mock) UnmarshalCaddyfile(d *caddyfile.Dispenser) error {
	d.Next() // the directive name
	if d.NextArg() {
		return d.ArgErr()
	}
	seen := map[string]bool{}
	for d.NextBlock(0) {
		name := d.Val()
		if seen[name] && name != "reply_file" && name != "reply_text" && name != "tool_calls_file" && name != "replay_file" {
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

// Interface guard.
var _ caddyfile.Unmarshaler = (*Mock)(nil)
