package openai

// The agent loop (CONTRACT.md §12) shows nothing of itself in a chat
// completion: the calls to tools the gateway runs, their progress and
// results are not the client's to see or to run, so they are not sent,
// and the rounds' answers continue in the one message, a paragraph break
// between two rounds' answers (appendContent). The calls the client runs
// keep their tool_calls indices contiguous from 0 on the wire, since the
// SDKs assemble calls by index: the pipeline numbers server and client
// calls in one index space, and the client calls are renumbered around the
// server ones. The finish reason is the last round's.

// wireIndex returns the index on the wire of the client's tool call at
// pipeline index i, numbering the calls in the order they first appear;
// -1 for an index outside [0, maxToolIndex), which is not sent at all.
func (e *Encoder) wireIndex(i int) int {
	if i < 0 || i >= maxToolIndex {
		return -1
	}
	for len(e.wire) <= i {
		e.wire = append(e.wire, 0)
	}
	if e.wire[i] == 0 {
		e.nWire++
		e.wire[i] = e.nWire
	}
	return int(e.wire[i] - 1)
}
