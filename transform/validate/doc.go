// Package validate holds the checks that act on a reply (CONTRACT.md §10):
// the terminal-state rules of specs/004 §7.3.1 for a FinalResult, with the
// evidence a proxy has of the agent loop (the request's messages since the
// last user message), and the check of each tool call against the
// request's tools and their JSON Schemas (specs/003 工具调用验证). A check
// that fails is a Failure, hard or soft (specs/004 §7.3.2); what happens
// then (a violation, a retry with a correction, the error
// validation_failed) is the pipeline's and the HTTP layer's business.
//
// Like the rest of transform/, the package knows nothing of Caddy or HTTP
// handlers.
package validate
