// Package upstream decodes an OpenAI-compatible chat-completions reply: the
// JSON of each streamed chat.completion.chunk (ChunkDecoder.Decode), a
// non-streamed chat.completion body (DecodeCompletion), and the
// tool-call deltas spread across chunks (ToolCalls). It is the second layer
// of the upstream decoding, between the SSE framer (transform/sse) and the
// channel router (PARSING.md §5.1).
//
// Only choices[0] is read: llmstream asks the upstream for one choice (n=1),
// and its client protocols carry one answer.
package upstream
