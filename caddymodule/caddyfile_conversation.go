package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/llmstream/llmstream/caddymodule/internal/cfargs"
	"github.com/llmstream/llmstream/config"
)

// parseConversation reads llm_stream's conversation option, with or
// without a block (CONTRACT.md §9):
//
//	conversation {
//		store             file [<dir>] | redis <url>
//		key_prefix        <prefix>
//		scope             <placeholder>
//		agent_id          <id>
//		agent_name        <name>
//		agent_avatar      <url>
//		agent_description <text>
//		user_avatar       <url>
//		thinking          on | default_off | off
//		queued_send       <n>
//		clear_url         <url>
//		history_messages  <n>
//		history_bytes     <size>
//		ttl               <duration>
//		lease             <duration>
//		compaction_key    <secret>                  # responses routes
//	}
func parseConversation(d *caddyfile.Dispenser) (*config.Conversation, error) {
	if d.NextArg() {
		return nil, d.Errf("conversation: options go in a block")
	}
	c := new(config.Conversation)
	seen := map[string]bool{}
	for nesting := d.Nesting(); d.NextBlock(nesting); {
		name := d.Val()
		if seen[name] {
			return nil, d.Errf("conversation: %s: specified more than once", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "store":
			err = parseStore(d, c)
		case "key_prefix":
			err = cfargs.One(d, &c.KeyPrefix)
		case "scope":
			err = cfargs.One(d, &c.Scope)
		case "compaction_key":
			err = cfargs.One(d, &c.CompactionKey)
		case "agent_id":
			err = cfargs.One(d, &c.AgentID)
		case "agent_name":
			err = cfargs.One(d, &c.AgentName)
		case "agent_avatar":
			err = cfargs.One(d, &c.AgentAvatar)
		case "agent_description":
			err = cfargs.One(d, &c.AgentDescription)
		case "user_avatar":
			err = cfargs.One(d, &c.UserAvatar)
		case "thinking":
			err = cfargs.One(d, &c.Thinking)
		case "queued_send":
			err = cfargs.Int(d, &c.QueuedSend)
		case "clear_url":
			err = cfargs.One(d, &c.ClearURL)
		case "history_messages":
			err = cfargs.Int(d, &c.HistoryMessages)
		case "history_bytes":
			err = cfargs.Size(d, &c.HistoryBytes)
		case "ttl":
			c.TTL, err = durationArg(d)
		case "lease":
			c.Lease, err = durationArg(d)
		default:
			return nil, d.Errf("unrecognized conversation option %q", name)
		}
		if err != nil {
			return nil, err
		}
	}
	return c, nil
}

// parseStore reads `store file [<dir>]` or `store redis <url>`.
func parseStore(d *caddyfile.Dispenser, c *config.Conversation) error {
	if !d.NextArg() {
		return d.Errf("store: missing value (file [<dir>] or redis <url>)")
	}
	c.Store = d.Val()
	args := d.RemainingArgs()
	switch {
	case c.Store == config.StoreFile && len(args) <= 1:
		if len(args) == 1 {
			c.Dir = args[0]
		}
	case c.Store == config.StoreRedis && len(args) == 1:
		c.RedisURL = args[0]
	case c.Store == config.StoreFile:
		return d.Errf("store file: one directory at most")
	case c.Store == config.StoreRedis:
		return d.Errf("store redis: want one URL")
	default:
		return d.Errf("store: unknown store %q (want file or redis)", c.Store)
	}
	return nil
}
