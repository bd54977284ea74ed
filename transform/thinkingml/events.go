package thinkingml

import "github.com/llmstream/llmstream/transform"

// emitKind emits an event that carries nothing but its kind.
func (p *Parser) emitKind(k transform.Kind) {
	p.emit(transform.Event{Kind: k})
}

// violation reports code at offset off with detail text (borrowed).
func (p *Parser) violation(code string, off int64, text []byte) {
	p.emit(transform.Event{Kind: transform.KindViolation, Code: code, Offset: off, Text: text})
}

// delta emits text b of kind k (phase deltas carry the phase id).
func (p *Parser) delta(k transform.Kind, b []byte) {
	if len(b) == 0 {
		return
	}
	ev := transform.Event{Kind: k, Text: b}
	switch k {
	case transform.KindPhaseDelta:
		ev.Index = p.cur.phase
	case transform.KindAnswerDelta:
		p.cur.answered = true
	}
	p.emit(ev)
}

// phaseStart emits the start of phase id titled title.
func (p *Parser) phaseStart(id int, title []byte) {
	p.cur.phase = id
	p.emit(transform.Event{Kind: transform.KindPhaseStart, Index: id, Text: title})
}

// phaseEnd closes the open phase.
func (p *Parser) phaseEnd() {
	p.emit(transform.Event{Kind: transform.KindPhaseEnd, Index: p.cur.phase})
}

// reasoningTitle is the title of a phase that has none.
func (p *Parser) reasoningTitle() []byte {
	return p.rtitle
}

// skip reports span as consumed without being text (test hook).
func (p *Parser) skip(span []byte) {
	if p.skipped != nil && len(span) > 0 {
		p.skipped(span)
	}
}
