package upstream

// DecodeCompletion decodes a non-streamed chat.completion body into the
// same Chunk shape as a streamed chunk, so that the router handles both
// alike: choices[0].message gives Content, Reasoning and ToolCalls, each
// tool call whole in one fragment whose Index is its position in the array.
// The result aliases body. A body that is not a JSON object wraps
// ErrMalformed; [DONE] is not a completion.
//
// It decodes once per request, so it uses a decoder of its own instead of
// asking the caller for one.
func DecodeCompletion(body []byte) (*Chunk, error) {
	d := new(ChunkDecoder)
	d.reset()
	return &d.chunk, d.decode(body, "message")
}
