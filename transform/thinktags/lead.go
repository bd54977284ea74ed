package thinktags

// leadStep is what one byte of the lead is.
type leadStep uint8

const (
	leadHeld  leadStep = iota // held: a blank or part of a tag
	leadTag                   // the last byte of a tag, held
	leadOther                 // not part of the lead: it decides
)

// lead reads the start of the content, p from reply offset base: blanks
// and a tag are held until the tag completes or a byte shows there is
// none. It returns the bytes it did not handle.
func (t *Parser) lead(p []byte, base int64) []byte {
	for i, c := range p {
		switch t.leadByte(c) {
		case leadTag:
			t.tagDone(base + int64(i) + 1 - int64(t.n))
			return p[i+1:]
		case leadOther:
			t.noTag(base + int64(i) - int64(t.n))
			return p[i:]
		}
	}
	return nil
}

// leadByte holds c if it may belong to the lead.
func (t *Parser) leadByte(c byte) leadStep {
	if t.tag == 0 {
		switch {
		case isBlank(c) && t.n < maxLeadBlank:
		case c == '<':
			t.tag = 1
		default:
			return leadOther
		}
		t.held[t.n] = c
		t.n++
		return leadHeld
	}
	if t.tag == 1 && c == '/' {
		t.closer = true
	}
	want := openTag
	if t.closer {
		want = closeTag
	}
	if c != want[t.tag] {
		return leadOther
	}
	t.held[t.n] = c
	t.n++
	t.tag++
	if t.tag == len(want) {
		return leadTag
	}
	return leadHeld
}

// tagDone handles a complete leading tag, held from reply offset start
// with the blanks before it.
func (t *Parser) tagDone(start int64) {
	held := t.held[:t.n]
	switch {
	case t.closer:
		// An orphan </think>: the prefilled reasoning was empty, or the
		// provider echoed the tag after native reasoning (OA05).
		t.consume(held)
		t.st = stAfter
	case t.owns:
		// thinkingml reads its own <think> block.
		t.pass(held, start)
	default:
		t.consume(held)
		t.opener = true
		t.st = stReason
	}
	t.n = 0
}

// noTag decides a lead, held from reply offset start, that holds no
// complete tag: reasoning if the reply is prefilled, else the format's.
func (t *Parser) noTag(start int64) {
	// The reasoning scan reads the held bytes from a copy: it may hold
	// bytes of its own.
	held := t.replay[:copy(t.replay[:], t.held[:t.n])]
	t.n = 0
	if t.prefilled && !t.native {
		t.st = stReason
		t.run(held, start)
		return
	}
	t.pass(held, start)
}

// leadEnd ends a content that was all lead.
func (t *Parser) leadEnd() {
	if t.n > 0 {
		t.noTag(t.off - int64(t.n))
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }
