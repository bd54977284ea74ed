package format

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// TextParser parses a plain-text reply: every byte is the answer (CONTRACT §4,
// format text). The answer opens at the first byte, so a reply with no text
// (a tool-call-only turn) has no answer section at all.
type TextParser struct {
	raw    parsekit.RawEcho
	opened bool
	n      int64 // bytes fed, for violation offsets
}

// CodeInvalidUTF8 reports a reply that ended inside a UTF-8 sequence
// (PARSING.md TM34); the cut bytes are still delivered.
const CodeInvalidUTF8 = "invalid_utf8"

// NewText returns a parser for plain-text replies.
func NewText() *TextParser { return new(TextParser) }

// Feed emits p as raw and answer text, holding back a UTF-8 sequence cut at
// its end until the next Feed completes it.
func (t *TextParser) Feed(p []byte, emit transform.Emit) {
	if len(p) == 0 {
		return
	}
	t.n += int64(len(p))
	if !t.opened {
		t.opened = true
		emit(transform.Event{Kind: transform.KindAnswerStart})
	}
	t.raw.Feed(p, func(ev transform.Event) { echoAnswer(ev, emit) })
}

// echoAnswer emits the raw event ev and its text again as answer text: the
// raw echo cuts the text on rune boundaries, and the answer is cut alike.
func echoAnswer(ev transform.Event, emit transform.Emit) {
	emit(ev)
	emit(transform.Event{Kind: transform.KindAnswerDelta, Text: ev.Text})
}

// Close flushes a cut UTF-8 sequence as it is, reporting it, and closes
// the answer.
func (t *TextParser) Close(emit transform.Emit) {
	if held := t.raw.Held(); held > 0 {
		emit(transform.Event{Kind: transform.KindViolation, Code: CodeInvalidUTF8, Offset: t.n - int64(held)})
		t.raw.Close(func(ev transform.Event) { echoAnswer(ev, emit) })
	}
	if t.opened {
		emit(transform.Event{Kind: transform.KindAnswerEnd})
	}
}

// Reset readies t for a new reply.
func (t *TextParser) Reset() { *t = TextParser{} }
