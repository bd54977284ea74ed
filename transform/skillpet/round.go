package skillpet

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
)

// AppendRestart appends round_start {round: attempt} (specs/002 §3.2: a
// new round, sent from the second on, after which the client moves the
// text and thinking so far into the message's parts), thinking_done first
// when thinking is open: the reply so far failed its validation and the
// next attempt follows (transform.Restarter).
func (e *Encoder) AppendRestart(dst []byte, attempt int, _ string) []byte {
	if e.done {
		return dst
	}
	dst = e.endThinking(dst)
	dst = append(dst, "event: round_start\ndata: {\"round\":"...)
	dst = strconv.AppendInt(dst, int64(attempt), 10)
	return append(dst, "}\n\n"...)
}

var _ transform.Restarter = (*Encoder)(nil)
