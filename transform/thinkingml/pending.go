package thinkingml

import "bytes"

// stepPending offers b[i:] to the held tag candidate until it resolves or
// b ends, and returns the index of the first byte not taken.
func (p *Parser) stepPending(b []byte, i int) int {
	for i < len(b) {
		switch p.match(b[i]) {
		case rMore:
			i++
		case rDone:
			p.act()
			return i + 1
		case rFail:
			p.diverge()
			return i
		case rTooLong:
			p.tagTooLong()
			return i // the byte is scanned again, as text or a new '<'
		}
	}
	return i
}

// diverge resolves a candidate that turned out not to be a tag: its bytes
// are text, except that a '<' inside it may start the next candidate
// (TM15 "<<think>"). By construction (see match) only a marker candidate
// holds a second '<', at index 1, and everything after that '<' holds no
// other, so the re-scan touches each held byte at most twice.
func (p *Parser) diverge() {
	for len(p.pend) > 0 && p.st != stDead {
		k := bytes.IndexByte(p.pend[1:], '<') + 1
		if k == 0 {
			k = len(p.pend)
		}
		off := p.pendOff
		p.text(p.pend[:k], off)
		if k == len(p.pend) || p.st == stDead {
			p.pend = p.pend[:0]
			return
		}
		rest := append(p.scratch[:0], p.pend[k:]...)
		p.pend = append(p.pend[:0], '<')
		p.pendOff = off + int64(k)
		p.m = matcher{}
		failed := false
		for j := 1; j < len(rest) && !failed; j++ {
			switch p.match(rest[j]) {
			case rMore:
			case rDone:
				restOff := p.pendOff + int64(j+1)
				p.act()
				if j+1 < len(rest) {
					p.text(rest[j+1:], restOff)
				}
				return
			default:
				failed = true
			}
		}
		if !failed {
			return // a shorter candidate is still held
		}
		// rest holds no other '<': the next round emits all of it as text.
		p.pend = append(p.pend[:0], rest...)
	}
}
