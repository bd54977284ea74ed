package aisdk

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// AppendRestart closes the open part and appends data-retry {attempt,
// reason}: the reply so far failed its validation and the next attempt
// follows (transform.Restarter). The UI message stream cannot take parts
// back, so a page that wants only the last attempt drops the parts before
// the last data-retry. The finish reason is the last attempt's.
func (e *Encoder) AppendRestart(dst []byte, attempt int, reason string) []byte {
	if e.done {
		return dst
	}
	dst = e.closePart(dst)
	e.toolCalls = false
	dst = append(dst, `data: {"type":"data-retry","data":{"attempt":`...)
	dst = strconv.AppendInt(dst, int64(attempt), 10)
	dst = append(dst, `,"reason":`...)
	dst = jsonout.AppendStringS(dst, reason)
	return append(dst, "}}\n\n"...)
}

var _ transform.Restarter = (*Encoder)(nil)
