// Package upstream decodes an OpenAI-compatible chat-completions reply: the
// JSON of each streamed chat.completion.chunk (ChunkDecoder.Decode), a
// non-streamed chat.completion body (DecodeCompletion), and the
// tool-call deltas spread across chunks (ToolCalls). It is the second layer
// of the upstream decoding, between the SSE framer (transform/sse) and the
// channel router (PARSING.md §5.1).
//
// It decodes the variants real providers send (CONTRACT.md §7): content as
// a string or as typed parts (content.go), reasoning under either alias or
// as thinking parts, tool-call fragments with or without index and id
// (ToolCalls), usage at the top level, in the choice or in x_groq. Only
// choice 0 is the answer: llmstream asks the upstream for one choice
// (n=1), and its client protocols carry one answer; any other choice is
// skipped and named (Chunk.StrayChoice), never mixed in.
package upstream
