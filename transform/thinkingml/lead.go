package thinkingml

import "github.com/llmstream/llmstream/transform"

// leadStep is how far leadScan got.
type leadStep uint8

const (
	lSpace  leadStep = iota // leading whitespace
	lMarker                 // matching marker
	lTrail                  // marker complete, trailing whitespace
)

// leadScan holds the start of the reply while it may still be exactly
// <<ParsingError>> modulo surrounding whitespace (specs/000 §2), which must
// give a model_parsing_error and no other event, not even raw text. It
// holds at most maxSpace bytes of whitespace on either side of the marker.
type leadScan struct {
	step   leadStep
	n      int // whitespace bytes seen in the current run, or marker bytes matched
	replay []byte
}

// scan takes bytes of b while the reply may still be the marker. It
// returns the index of the first byte that settles it is not, with
// resolved set, or len(b).
func (l *leadScan) scan(b []byte) (int, bool) {
	for i, c := range b {
		switch l.step {
		case lSpace:
			switch {
			case isSpace(c) && l.n < maxSpace:
				l.n++
			case c == '<':
				l.step, l.n = lMarker, 1
			default:
				return i, true
			}
		case lMarker:
			if c != marker[l.n] {
				return i, true
			}
			l.n++
			if l.n == len(marker) {
				l.step, l.n = lTrail, 0
			}
		case lTrail:
			if !isSpace(c) || l.n == maxSpace {
				return i, true
			}
			l.n++
		}
	}
	return len(b), false
}

// resolveLead ends the lead once the reply is known not to be the marker:
// it enters the first real state and scans the held bytes plus head, the
// bytes of the current chunk that the lead took, as ordinary input.
func (p *Parser) resolveLead(head []byte) {
	p.lead.replay = append(append(p.lead.replay[:0], p.raw.hold...), head...)
	p.raw.hold = p.raw.hold[:0]
	p.st = stTop
	p.scan(p.lead.replay, 0)
}

// leadClose ends a reply that was all lead. It reports whether the reply
// was the marker, in which case the only event is the error.
func (p *Parser) leadClose() bool {
	if p.lead.step == lTrail {
		p.emit(transform.Event{
			Kind: transform.KindError, Code: transform.CodeModelParsingError,
			Text: []byte("the model reported <<ParsingError>>: it could not follow the ThinkingML format"),
		})
		return true
	}
	p.resolveLead(nil)
	return false
}
