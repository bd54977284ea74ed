package jsonstream

// numberState is the position inside a number, after the JSON grammar
// (RFC 8259 §6).
type numberState uint8

const (
	numStart numberState = iota // before the first byte
	numMinus                    // after '-'
	numZero                     // after a leading '0'
	numInt                      // in the integer digits
	numDot                      // after '.'
	numFrac                     // in the fraction digits
	numE                        // after 'e' or 'E'
	numESign                    // after the exponent's sign
	numExp                      // in the exponent digits
)

// complete reports whether a number may end in state s.
func (s numberState) complete() bool {
	return s == numZero || s == numInt || s == numFrac || s == numExp
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// next returns the state after byte c, and false if c cannot continue the
// number.
func (s numberState) next(c byte) (numberState, bool) {
	switch s {
	case numStart:
		switch {
		case c == '-':
			return numMinus, true
		case c == '0':
			return numZero, true
		case isDigit(c):
			return numInt, true
		}
	case numMinus:
		switch {
		case c == '0':
			return numZero, true
		case isDigit(c):
			return numInt, true
		}
	case numZero, numInt, numFrac:
		switch {
		case isDigit(c) && s != numZero:
			return s, true
		case c == '.' && s != numFrac:
			return numDot, true
		case c == 'e' || c == 'E':
			return numE, true
		}
	case numDot:
		if isDigit(c) {
			return numFrac, true
		}
	case numE:
		switch {
		case c == '+' || c == '-':
			return numESign, true
		case isDigit(c):
			return numExp, true
		}
	case numESign, numExp:
		if isDigit(c) {
			return numExp, true
		}
	}
	return s, false
}

// stepNumber scans number bytes from i. A number is reported only once the
// byte after it shows it complete (JO12: no partial numbers).
func (t *Tokenizer) stepNumber(p []byte, i int) int {
	start := i
	for ; i < len(p); i++ {
		s, ok := t.num.next(p[i])
		if !ok {
			break
		}
		t.num = s
	}
	t.scalarAppend(p[start:i])
	if i == len(p) {
		return i
	}
	if !t.num.complete() {
		t.invalid(p, i, CodeBadNumber, "malformed number", t.off(i))
		return i
	}
	text := t.scalar
	if t.scalarX {
		text = nil
		t.violation(p, i, CodeBadNumber, detailBytes("number longer than the key limit"), t.curOff)
	}
	return t.endValue(p, i, t.curNode, t.curIdx, TypeNumber, text)
}

// scalarAppend keeps the bytes of a watched number, up to MaxKeyBytes.
func (t *Tokenizer) scalarAppend(b []byte) {
	if path, _ := t.watched(t.curNode); path < 0 || t.scalarX {
		return
	}
	if len(t.scalar)+len(b) > t.lim.MaxKeyBytes {
		t.scalarX = true
		return
	}
	t.scalar = append(t.scalar, b...)
}

// The literals, and their text as reported by TokenEnd (read-only).
var (
	litTrue  = []byte("true")
	litFalse = []byte("false")
	litNull  = []byte("null")
)

func literalOf(c byte) string {
	switch c {
	case 't':
		return "true"
	case 'f':
		return "false"
	}
	return "null"
}

// stepLiteral matches the bytes of true, false or null from i (JO13).
func (t *Tokenizer) stepLiteral(p []byte, i int) int {
	for ; i < len(p); i++ {
		if p[i] != t.lit[t.litPos] {
			t.invalid(p, i, CodeBadLiteral, "misspelt true, false or null", t.off(i))
			return i
		}
		t.litPos++
		if t.litPos < len(t.lit) {
			continue
		}
		text, typ := litNull, TypeNull
		switch t.lit[0] {
		case 't':
			text, typ = litTrue, TypeBool
		case 'f':
			text, typ = litFalse, TypeBool
		}
		return t.endValue(p, i+1, t.curNode, t.curIdx, typ, text)
	}
	return i
}
