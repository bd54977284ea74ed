// Package llmstream registers llmstream's Caddy modules
// (http.handlers.llm_stream, http.handlers.llm_stream_playground and
// http.handlers.llm_mock). Import it for its side effect when building
// Caddy, as xcaddy does with --with github.com/llmstream/llmstream:
//
//	import _ "github.com/llmstream/llmstream"
package llmstream

import (
	// The modules register themselves in their package's init.
	_ "github.com/llmstream/llmstream/caddymodule"
	_ "github.com/llmstream/llmstream/caddymodule/llmmock"
	// The playground page (llm_stream_playground), off unless mounted.
	_ "github.com/llmstream/llmstream/caddymodule/playground"
	// `caddy llmstream-demo-mcp`: the demo MCP server over stdio.
	_ "github.com/llmstream/llmstream/toolserver/democmd"
)
