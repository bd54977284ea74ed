package caddymodule

import (
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"

	"github.com/llmstream/llmstream/caddymodule/internal/cfargs"
	"github.com/llmstream/llmstream/config"
)

// parseValidate reads the validate option (CONTRACT.md §10), alone or
// with a block:
//
//	validate {
//		retries        <n>
//		artifact_tools <name>...
//		expected_mode  answer | artifact | clarify | <placeholder>
//		show_retries
//	}
func parseValidate(d *caddyfile.Dispenser) (*config.Validate, error) {
	if d.NextArg() {
		return nil, d.Errf("validate: unexpected argument %q (settings go in a block)", d.Val())
	}
	v := &config.Validate{}
	seen := map[string]bool{}
	for nest := d.Nesting(); d.NextBlock(nest); {
		name := d.Val()
		if seen[name] {
			return nil, d.Errf("validate: %s: specified more than once", name)
		}
		seen[name] = true
		var err error
		switch name {
		case "retries":
			n := 0
			if err = cfargs.Int(d, &n); err == nil {
				v.Retries = &n
			}
		case "artifact_tools":
			v.ArtifactTools = d.RemainingArgs()
			if len(v.ArtifactTools) == 0 {
				err = d.Errf("artifact_tools: missing value")
			}
		case "expected_mode":
			err = cfargs.One(d, &v.ExpectedMode)
		case "show_retries":
			if d.NextArg() {
				err = d.Errf("show_retries: unexpected argument %q", d.Val())
			}
			v.ShowRetries = true
		default:
			return nil, d.Errf("unrecognized validate option %q", name)
		}
		if err != nil {
			return nil, err
		}
	}
	return v, nil
}
