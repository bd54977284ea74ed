package jsonstream

import "github.com/llmstream/llmstream/transform/parsekit"

// capture is the state of a raw capture (Mode Raw, JO17).
type capture struct {
	on    bool
	path  int32
	idx   int
	depth int // len(stack) when the captured value began
	start int // where the unflushed span starts in the current p
	carry parsekit.RuneCarry
}

// flushCapture reports the captured bytes p[cap.start:end]; hold keeps back
// a rune the next Feed completes.
func (t *Tokenizer) flushCapture(p []byte, end int, hold bool) {
	if !t.cap.on || end <= t.cap.start {
		return
	}
	out := p[t.cap.start:end]
	if hold {
		out = t.cap.carry.Hold(out)
	}
	t.cap.start = end
	t.emitData(TokenRaw, t.cap.path, t.cap.idx, out)
}
