package pipeline

// leadThink drops a <think> or </think> tag that opens the content of a
// reply whose reasoning came natively (reasoning_content): providers such
// as DeepSeek V3.1 behind some gateways echo the tag into content, and a
// prompt that prefilled <think> leaves an orphan </think> (PARSING.md OA04,
// OA05). It runs before the parsers of the formats without tags (text and
// the JSON formats), and before auto's detection for </think> only (a
// <think> block may open a ThinkingML reply; thinkingml's own grammar owns
// both tags). It holds at most a bounded run of leading bytes; any other
// start passes through untouched.
type leadThink struct {
	state leadState
	held  [maxLeadHeld]byte
	n     int // bytes held
	tag   int // bytes of the tag matched
	close bool
	// closerOnly limits the tag to </think> (under auto).
	closerOnly bool
}

type leadState uint8

const (
	leadBefore leadState = iota // blanks before the tag
	leadTag                     // inside the tag
	leadAfter                   // blanks after the tag
	leadDone                    // decided: pass everything through
)

// maxLeadBlank bounds the blanks held on either side of the tag.
const (
	maxLeadBlank = 64
	maxLeadHeld  = 2*maxLeadBlank + len("</think>")
)

// feed passes p on to next, holding a possible leading tag until the first
// byte after it decides: dropped if native reasoning was seen by then, else
// passed on as text.
func (l *leadThink) feed(p []byte, native bool, next func([]byte)) {
	if l.state == leadDone {
		next(p)
		return
	}
	for i, c := range p {
		if l.step(c) {
			continue
		}
		// c decided: it is not part of a leading tag.
		l.release(native, next)
		next(p[i:])
		return
	}
}

// step holds c if it may still belong to the leading tag and its blanks.
func (l *leadThink) step(c byte) bool {
	blank := c == ' ' || c == '\t' || c == '\r' || c == '\n'
	switch l.state {
	case leadBefore:
		if blank && l.n < maxLeadBlank {
			break
		}
		if c != '<' {
			return false
		}
		l.state, l.tag = leadTag, 1
	case leadTag:
		const open, closing = "<think>", "</think>"
		if l.tag == 1 && c == '/' {
			l.close = true
		} else if l.tag == 1 && l.closerOnly {
			return false
		}
		want := open
		if l.close {
			want = closing
		}
		if c != want[l.tag] {
			return false
		}
		l.tag++
		if l.tag == len(want) {
			l.state = leadAfter
		}
	case leadAfter:
		if !blank || l.n >= maxLeadHeld {
			return false
		}
	}
	l.held[l.n] = c
	l.n++
	return true
}

// release ends the hold: the held bytes are a complete tag with its blanks,
// dropped when reasoning came natively, or anything else, passed on.
func (l *leadThink) release(native bool, next func([]byte)) {
	drop := l.state == leadAfter && native
	if l.n > 0 && !drop {
		next(l.held[:l.n])
	}
	l.state, l.n = leadDone, 0
}

// flush ends the content: whatever is held is released.
func (l *leadThink) flush(native bool, next func([]byte)) {
	if l.state != leadDone {
		l.release(native, next)
	}
}

func (l *leadThink) reset() { *l = leadThink{closerOnly: l.closerOnly} }
