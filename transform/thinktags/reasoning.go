package thinktags

import (
	"bytes"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// reasoning reads reasoning text, p from reply offset base, up to
// </think>: it holds back only a suffix that may still be the start of
// </think> (PARSING.md §5.3), and an incomplete UTF-8 sequence at the end
// of p. Blanks before the first reasoning byte are skipped, so that a block
// of nothing but blanks sends no events. It returns the bytes after
// </think>, or the rest of an echoed block's content.
func (t *Parser) reasoning(p []byte, base int64) []byte {
	i := 0
	if t.carry.Pending() {
		out, rest := t.carry.Resume(p)
		i = len(p) - len(rest)
		t.consume(p[:i])
		t.reason(out)
	}
	for i < len(p) {
		if t.closing > 0 {
			c := p[i]
			if c == closeTag[t.closing] {
				t.closing++
				i++
				if t.closing == len(closeTag) {
					t.closed()
					return p[i:]
				}
				continue
			}
			// Not </think>: the held bytes are text, and since '<' is only
			// the first byte of </think>, none of them starts it again.
			held := closeTagBytes[:t.closing]
			t.closing = 0
			at := base + int64(i) - int64(len(held))
			if !t.opened && !t.begin(at) {
				t.pass(held, at)
				return p[i:]
			}
			t.text(held)
			continue
		}
		if !t.opened {
			k := i
			for k < len(p) && isBlank(p[k]) {
				k++
			}
			t.consume(p[i:k])
			if i = k; i == len(p) {
				break
			}
			if p[i] != '<' && !t.begin(base+int64(i)) {
				t.pass(nil, base+int64(i))
				return p[i:]
			}
		}
		j := bytes.IndexByte(p[i:], '<')
		if j < 0 {
			t.consume(p[i:])
			t.reason(t.carry.Hold(p[i:]))
			return nil
		}
		t.text(p[i : i+j])
		t.closing = 1
		i += j + 1
	}
	return nil
}

// begin opens the reasoning at its first byte, at reply offset off. It
// reports false, opening nothing, for an echoed <think>: the content is
// then the format's.
func (t *Parser) begin(off int64) bool {
	if t.echo {
		return false
	}
	t.opened = true
	t.reasonOff = off
	t.emit(transform.Event{Kind: transform.KindReasoningStart})
	return true
}

// closed ends the reasoning at </think>; an empty block sends nothing.
func (t *Parser) closed() {
	t.consume(closeTagBytes)
	t.closing = 0
	if t.opened {
		t.emit(transform.Event{Kind: transform.KindReasoningEnd})
	}
	t.copy, t.cut = t.copy[:0], false
	t.st = stAfter
}

// text sends b, consumed from the content, as reasoning.
func (t *Parser) text(b []byte) {
	t.consume(b)
	t.reason(b)
}

// reason sends b as reasoning and keeps it in the copy, up to the bound.
func (t *Parser) reason(b []byte) {
	if len(b) == 0 {
		return
	}
	t.emit(transform.Event{Kind: transform.KindReasoningDelta, Text: b})
	if t.cut {
		return
	}
	if room := t.max - len(t.copy); len(b) > room {
		// Cut on a rune boundary, wherever the reply was split.
		t.copy = append(t.copy, b[:room]...)
		t.copy = t.copy[:len(t.copy)-parsekit.IncompleteSuffix(t.copy)]
		t.cut = true
		return
	}
	t.copy = append(t.copy, b...)
}

// after skips the blanks between </think> and the answer, p from reply
// offset base, and hands the rest to the format parser.
func (t *Parser) after(p []byte, base int64) []byte {
	k := 0
	for k < len(p) && isBlank(p[k]) {
		k++
	}
	t.consume(p[:k])
	if k == len(p) {
		return nil
	}
	t.pass(nil, base+int64(k))
	return p[k:]
}
