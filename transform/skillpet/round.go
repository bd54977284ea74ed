package skillpet

import "github.com/llmstream/llmstream/transform"

// AppendRestart appends round_start (specs/002 §3.2: a new round, sent
// from the second on, after which the client moves the text and thinking
// so far into the message's parts), thinking_done first when thinking is
// open: the reply so far failed its validation and the next attempt
// follows (transform.Restarter). The round counts the stream's rounds,
// the agent loop's and the retries' alike (appendRound), which for a
// stream without tool rounds is attempt.
func (e *Encoder) AppendRestart(dst []byte, _ int, _ string) []byte {
	if e.done {
		return dst
	}
	return e.appendRound(dst)
}

var _ transform.Restarter = (*Encoder)(nil)
