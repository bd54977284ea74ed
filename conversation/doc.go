// Package conversation keeps the skillpet chat's conversations (specs/002
// §2, §4; CONTRACT.md §9): what a turn stores, in the storage format the
// @skillpet/chat component's parseHistoryMessages restores, and how the
// stored history becomes the messages of the next upstream request.
//
// A conversation is an append-only list of Records, keyed by the hash of
// its scope (whose conversations: by default the Authorization header) and
// of its agent and projectId (Key). A turn appends the user's message when
// its stream starts and, when the stream ends, the assistant's reply as one
// "_pub_asst" record (the visible text, the tool calls, the resource parts
// in order) followed by one "_pub_tool" record per ask_user form shown
// ("[ask_user] " and the questions, §4.4). Capture observes a skillpet
// encoder to collect that reply; Messages turns a history into messages a
// strict OpenAI-compatible server accepts (every tool call answered by a
// tool message), within a Budget.
//
// The package is pure Go with no Caddy import and does no IO itself: the
// Store interface is implemented by the filestore and redisstore packages,
// and the Caddy glue (caddymodule) drives them.
package conversation
