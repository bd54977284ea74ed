package parsekit

import "github.com/llmstream/llmstream/transform"

// RawEcho emits a reply's bytes as transform.KindRaw events as they are fed, for the
// protocols that forward the raw reply (gymbro content_delta). Every
// parser owes one transform.KindRaw per input byte, in order, and no event may end
// mid-rune (PARSING.md §5.2), so a UTF-8 sequence cut by a chunk's end is
// held until the next chunk completes it. The zero value is ready to use.
//
// The ThinkingML parser does not use it: its raw channel escapes literal
// <final> tags and so follows the tag scan instead.
type RawEcho struct {
	carry RuneCarry
}

// Feed emits p as transform.KindRaw events: first the sequence the previous Feed
// held, once p's first bytes complete it, then p up to a sequence cut off
// at its end, which it holds. It emits no empty event. The events' Text
// aliases p or the RawEcho and is valid until emit returns.
func (r *RawEcho) Feed(p []byte, emit transform.Emit) {
	out, rest := r.carry.Resume(p)
	if len(out) > 0 {
		emit(transform.Event{Kind: transform.KindRaw, Text: out})
	}
	if r.carry.Pending() {
		return // p ended before the held sequence did: it stays held
	}
	if rest = r.carry.Hold(rest); len(rest) > 0 {
		emit(transform.Event{Kind: transform.KindRaw, Text: rest})
	}
}

// Held returns how many bytes (0 to 3) are held: the start of a UTF-8
// sequence the input has not completed yet. A parser that reports a reply
// cut mid-rune uses it for the violation's offset.
func (r *RawEcho) Held() int { return r.carry.n }

// Close emits the held bytes, which the reply ended without completing,
// as they are: invalid UTF-8 is the encoders' to replace, not the
// parsers' to drop.
func (r *RawEcho) Close(emit transform.Emit) {
	if out := r.carry.Flush(); len(out) > 0 {
		emit(transform.Event{Kind: transform.KindRaw, Text: out})
	}
}

// Reset forgets held bytes, for a new reply.
func (r *RawEcho) Reset() { r.carry.Reset() }
