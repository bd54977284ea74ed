package thinkingml

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// rawChannel emits the reply as written (transform.KindRaw), for the gymbro
// protocol. It is the same single scan as the structure: the bytes of a
// held tag candidate are emitted once the candidate resolves, a literal
// <final> / </final> in <think> or <thinking> is replaced by its escape
// (CONTRACT.md §4, specs/000 §1 "兼容性"), and no event ends mid-rune.
//
// Every input byte in [off, off+len(hold)) is unemitted and held in hold,
// which covers the bytes of earlier chunks; those of the chunk being
// scanned are read from Parser.chunk.
type rawChannel struct {
	off  int64
	hold []byte
	// stopped is set by a fatal error: nothing more is emitted.
	stopped bool
}

var (
	escapedFinal    = []byte("&lt;final&gt;")
	escapedFinalEnd = []byte("&lt;/final&gt;")
)

// flush emits the unemitted bytes before offset upTo.
func (r *rawChannel) flush(p *Parser, upTo int64) {
	if r.stopped || upTo <= r.off {
		return
	}
	n := upTo - r.off
	if len(r.hold) > 0 {
		k := int(min(n, int64(len(r.hold))))
		p.emitRaw(r.hold[:k])
		r.hold = r.hold[:copy(r.hold, r.hold[k:])]
		r.off += int64(k)
		n -= int64(k)
	}
	if n > 0 {
		s := r.off - p.base
		p.emitRaw(p.chunk[s : s+n])
		r.off += n
	}
}

// skip forgets the unemitted bytes before offset upTo (a tag whose escape
// was emitted instead). Bytes before it must have been flushed.
func (r *rawChannel) skip(upTo int64) {
	if n := upTo - r.off; n > 0 {
		k := int(min(n, int64(len(r.hold))))
		r.hold = r.hold[:copy(r.hold, r.hold[k:])]
		r.off = upTo
	}
}

// escape emits esc in place of the tag at [tagOff, end).
func (r *rawChannel) escape(p *Parser, tagOff, end int64, esc []byte) {
	r.flush(p, tagOff)
	if !r.stopped {
		p.emitRaw(esc)
	}
	r.skip(end)
}

// endScan emits what the scan of p.chunk resolved and holds the rest: a
// tag candidate and a UTF-8 sequence cut by the chunk's end.
func (r *rawChannel) endScan(p *Parser) {
	if r.stopped {
		return
	}
	end := p.base + int64(len(p.chunk))
	upTo := end
	if len(p.pend) > 0 {
		upTo = p.pendOff
	} else {
		upTo -= int64(r.incompleteTail(p, end))
	}
	r.flush(p, upTo)
	from := max(r.off, p.base) - p.base
	r.hold = append(r.hold, p.chunk[from:]...)
}

// incompleteTail returns how many bytes at the end of the unemitted input
// before end start a UTF-8 sequence that is cut off.
func (r *rawChannel) incompleteTail(p *Parser, end int64) int {
	var tail [3]byte
	n := 0
	for pos := end - 1; pos >= r.off && n < len(tail); pos-- {
		var c byte
		if pos >= p.base {
			c = p.chunk[pos-p.base]
		} else {
			c = r.hold[pos-r.off]
		}
		n++
		tail[len(tail)-n] = c
	}
	return parsekit.IncompleteSuffix(tail[len(tail)-n:])
}

// emitRaw emits b as a KindRaw event.
func (p *Parser) emitRaw(b []byte) {
	if len(b) > 0 {
		p.emit(transform.Event{Kind: transform.KindRaw, Text: b})
	}
}
