package parsekit

import "unicode/utf8"

// RuneCarry keeps the first bytes of a UTF-8 sequence cut at the end of one
// chunk until the next chunk completes it, so that emitted text never ends
// mid-rune (PARSING.md §5.2: only emission boundaries need rune alignment).
// ASCII never occurs inside a multibyte sequence, so parsers match tags and
// JSON syntax on raw bytes and need the carry only where they emit text.
type RuneCarry struct {
	buf [utf8.UTFMax]byte
	n   int
}

// Pending reports whether bytes are held.
func (c *RuneCarry) Pending() bool { return c.n > 0 }

// Hold returns p without its trailing incomplete UTF-8 sequence, which it
// keeps. It must be called with nothing held.
func (c *RuneCarry) Hold(p []byte) []byte {
	k := IncompleteSuffix(p)
	if k == 0 {
		return p
	}
	c.n = copy(c.buf[:], p[len(p)-k:])
	return p[:len(p)-k]
}

// Resume completes the held sequence from the start of p. It returns the
// bytes to emit (nil when p ended before the sequence did, in which case
// they stay held) and the rest of p. A sequence broken by a byte that is not
// a continuation byte is returned as it is: invalid UTF-8 is the encoders'
// to replace, not the parsers' to drop. The returned bytes alias c and are
// valid until the next call.
func (c *RuneCarry) Resume(p []byte) (out, rest []byte) {
	if c.n == 0 {
		return nil, p
	}
	need := seqLen(c.buf[0])
	i := 0
	for c.n < need && i < len(p) && p[i]&0xC0 == 0x80 {
		c.buf[c.n] = p[i]
		c.n++
		i++
	}
	if c.n < need && i == len(p) {
		return nil, p[i:]
	}
	out = c.buf[:c.n]
	c.n = 0
	return out, p[i:]
}

// Flush returns the held bytes, which the input ended without completing,
// and forgets them. The result aliases c.
func (c *RuneCarry) Flush() []byte {
	out := c.buf[:c.n]
	c.n = 0
	return out
}

// Reset forgets held bytes.
func (c *RuneCarry) Reset() { c.n = 0 }

// IncompleteSuffix returns how many bytes (0 to 3) at the end of p are the
// start of a UTF-8 sequence that p cuts off.
func IncompleteSuffix(p []byte) int {
	for k := 1; k <= utf8.UTFMax-1 && k <= len(p); k++ {
		b := p[len(p)-k]
		if b&0xC0 == 0x80 {
			continue // a continuation byte: look further back
		}
		if b < utf8.RuneSelf {
			return 0
		}
		if seqLen(b) > k {
			return k
		}
		return 0
	}
	return 0
}

// seqLen returns the length of the UTF-8 sequence that lead byte b starts,
// or 1 for a byte that starts none.
func seqLen(b byte) int {
	switch {
	case b&0xE0 == 0xC0:
		return 2
	case b&0xF0 == 0xE0:
		return 3
	case b&0xF8 == 0xF0:
		return 4
	}
	return 1
}
