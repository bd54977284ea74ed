package pipeline

import "time"

// What the pipeline tells of each upstream reply, for the trace span of
// the upstream call it answered (CONTRACT.md §15): a turn of the agent
// loop, or a retry, is several replies on one client stream, and each
// gets a span of its own. It is read once per reply, never per delta.

// Reply describes the upstream reply under way, or the one that just
// ended: its slices are borrowed until the next reply starts.
type Reply struct {
	// Model is the model the upstream reported (the stream's first).
	Model string
	// FinishReason is the reply's finish reason, "" if none came.
	FinishReason string
	// Usage is the reply's own usage object as the upstream sent it (the
	// last one), nil if none; Pipeline.Usage sums the turn's.
	Usage []byte
	// FirstEvent is when the reply's first content event was encoded
	// (its time to first token), zero if none was.
	FirstEvent time.Time
	// Text is the reply's content as the model wrote it, when
	// CaptureReplies is on; nil otherwise.
	Text []byte
	// ErrorCode is the code of the error that ended the stream, "" if
	// none did (yet).
	ErrorCode string
}

// Reply returns the current upstream reply's record.
func (p *Pipeline) Reply() Reply {
	r := Reply{Model: p.sum.Model, FinishReason: p.finish, FirstEvent: p.replyFirst, ErrorCode: p.sum.ErrorCode}
	if len(p.up.usage) > 0 {
		r.Usage = p.up.usage
	}
	if p.capture {
		r.Text = p.captured
	}
	return r
}

// Usage returns the turn's usage: every reply's usage object summed over
// the agent loop's rounds (as KindUsage carries it), nil when the
// upstream sent none. The slice is borrowed until the next stream.
func (p *Pipeline) Usage() []byte {
	if u := p.summedUsage(); len(u) > 0 {
		return u
	}
	return nil
}

// CaptureReplies makes Reply keep each reply's text, for a route whose
// traces carry content (trace_content). Call it after Reset; off unless
// called, and the hot path then only tests a flag.
func (p *Pipeline) CaptureReplies(on bool) { p.capture = on }

// captureContent keeps the reply's content when capture is on.
func (p *Pipeline) captureContent(b []byte) {
	if p.capture {
		p.captured = append(p.captured, b...)
	}
}

// resetReplyRecord readies the record for the next reply.
func (p *Pipeline) resetReplyRecord() {
	p.replyFirst = time.Time{}
	if cap(p.captured) > maxKeptBody {
		p.captured = nil
	}
	p.captured = p.captured[:0]
}
