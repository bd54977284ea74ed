package caddymodule_test

// The default Caddyfile mounts the playground, so the tests that adapt it
// need its module registered. It imports caddymodule, so it is imported
// from the external test package: the same test binary, no import cycle.
import _ "github.com/llmstream/llmstream/caddymodule/playground"
