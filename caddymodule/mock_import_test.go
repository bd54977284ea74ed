package caddymodule

// The integration tests run llm_stream in front of llm_mock in one Caddy
// instance; the mock registers itself when its package is imported.
import _ "github.com/llmstream/llmstream/caddymodule/llmmock"
