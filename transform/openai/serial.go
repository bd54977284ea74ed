package openai

import "github.com/llmstream/llmstream/transform"

// serialCalls streams tool calls one after another. Some providers
// interleave the fragments of parallel calls (Moonshot: call 0, call 1,
// arguments of 0, of 1, …), which OpenAI's own stream never does, and the
// SDKs' stream helpers take a change of index for the end of a call:
// openai-node's .stream() fires tool_calls.function.arguments.done with the
// arguments so far at every switch. So while one call streams, the others'
// events wait, in order, and follow once it ends (its KindToolCallEnd): a
// waiting call's start and arguments then go out together. An upstream
// that streams calls one at a time holds nothing. What waits is bounded by
// the reply (max_reply).
type serialCalls struct {
	// cur is the call that streams, -1 when none.
	cur int
	// wait holds, by event index, what waits of each call; waiting counts
	// the calls with something in it.
	wait    []waitingCall
	waiting int
}

// waitingCall is what waits of one call: its start, its arguments so far,
// its end.
type waitingCall struct {
	start, end transform.Event // Kind 0 when not waiting
	args       []byte
	held       bool
}

// toolEvent sends a streamed tool event now, or holds it while another
// call streams.
func (e *Encoder) toolEvent(dst []byte, ev transform.Event) []byte {
	s := &e.serial
	i := ev.Index
	if i < 0 || i >= maxToolIndex {
		return dst // not sent at all (toolState)
	}
	if s.cur >= 0 && i != s.cur || s.cur < 0 && s.held(i) {
		s.hold(ev)
		return dst
	}
	if ev.Kind == transform.KindToolCallEnd {
		dst = e.appendToolCallEnd(dst, ev)
		s.cur = -1
		return e.releaseCalls(dst, false)
	}
	s.cur = i
	if ev.Kind == transform.KindToolCallStart {
		return e.appendToolCallStart(dst, ev)
	}
	return e.appendToolArgsDelta(dst, ev)
}

// held reports whether call i has events waiting.
func (s *serialCalls) held(i int) bool { return i < len(s.wait) && s.wait[i].held }

// hold keeps ev until its call's turn; its text is copied.
func (s *serialCalls) hold(ev transform.Event) {
	for len(s.wait) <= ev.Index {
		s.wait = append(s.wait, waitingCall{})
	}
	w := &s.wait[ev.Index]
	if !w.held {
		w.held = true
		s.waiting++
	}
	switch ev.Kind {
	case transform.KindToolCallStart:
		w.start = ev
	case transform.KindToolArgsDelta:
		w.args = append(w.args, ev.Text...)
	case transform.KindToolCallEnd:
		w.end = ev
		w.end.Text = nil // the complete arguments are w.args, or these
		if len(w.args) == 0 {
			w.args = append(w.args, ev.Text...)
		}
	}
}

// releaseCalls sends the waiting calls in index order while no call
// streams: each one's start and arguments, and its end if it came, when
// the next one's turn begins. At the terminal event (all) every waiting
// call goes out, ended or not: nothing follows it.
func (e *Encoder) releaseCalls(dst []byte, all bool) []byte {
	s := &e.serial
	for i := 0; s.waiting > 0 && i < len(s.wait) && (s.cur < 0 || all); i++ {
		w := &s.wait[i]
		if !w.held {
			continue
		}
		if w.start.Kind == transform.KindToolCallStart {
			dst = e.appendToolCallStart(dst, w.start)
		}
		if len(w.args) > 0 {
			args := transform.Event{Kind: transform.KindToolArgsDelta, Index: i, Text: w.args}
			dst = e.appendToolArgsDelta(dst, args)
		}
		s.cur = i
		if w.end.Kind == transform.KindToolCallEnd {
			w.end.Text = w.args
			dst = e.appendToolCallEnd(dst, w.end)
			s.cur = -1
		}
		*w = waitingCall{args: w.args[:0]}
		s.waiting--
	}
	return dst
}
