package caddymodule

import (
	"os"
	"testing"

	caddycmd "github.com/caddyserver/caddy/v2/cmd"
)

// childConfigEnv, when set, makes the test binary run as Caddy on the
// Caddyfile it names (see TestMain).
const childConfigEnv = "LLMSTREAM_TEST_CADDY_CONFIG"

// TestMain lets the test binary be Caddy itself, with this package's
// modules and the standard ones: with childConfigEnv set it runs `caddy
// run` on that Caddyfile instead of the tests. The tests that need whole
// Caddy processes of their own (several instances, one killed) start it
// so, with no build step. With misbehaveEnv set it is an MCP server whose
// tools misbehave on demand (the loop's failure matrix).
func TestMain(m *testing.M) {
	if mode := os.Getenv(misbehaveEnv); mode != "" {
		serveMisbehaving(mode)
		return
	}
	if cfg := os.Getenv(childConfigEnv); cfg != "" {
		os.Args = []string{"caddy", "run", "--config", cfg, "--adapter", "caddyfile"}
		caddycmd.Main()
		return
	}
	os.Exit(m.Run())
}
