package thinkingml

import "unicode/utf8"

// matchMode is the lexical sub-state of a held tag candidate
// (PARSING.md §5.3: Lt | TagName | Attrs | …).
type matchMode uint8

const (
	mLt        matchMode = iota // pend is "<"
	mSlash                      // pend is "</"
	mName                       // reading the tag name
	mSelfClose                  // "<name/", expecting ">"
	mMarker                     // "<<", matching marker
	mComment                    // "<!", matching commentOpen
	mAttrs                      // "<phase " and its attributes
)

// matchResult is what one more byte did to the candidate.
type matchResult uint8

const (
	rMore    matchResult = iota // still a prefix: the byte was held
	rDone                       // a complete tag: the byte was held
	rFail                       // not a tag: the byte was not taken
	rTooLong                    // <phase attributes over Limits.MaxTagBytes
)

// matcher is the state of the candidate held in Parser.pend.
type matcher struct {
	mode    matchMode
	closing bool
	// miscased: a "<Phase " (any case but "phase") is being held for its
	// attributes, to be reported as mis-cased and kept as text.
	miscased bool
	attrs    attrLexer
}

// match offers byte c to the held candidate. The candidate never holds a
// '<' except at index 0 and, for marker, index 1: every other '<' ends it
// with rFail, which is what lets diverge re-scan in O(1).
func (p *Parser) match(c byte) matchResult {
	r := &stateRules[p.st]
	m := &p.m
	switch m.mode {
	case mLt:
		switch {
		case c == '/':
			m.mode, m.closing = mSlash, true
		case c == '<':
			m.mode = mMarker
		case c == '!' && r.comment:
			m.mode = mComment
		case isNameStart(c) && (r.sniff || r.tags.prefixOf([]byte{c}, false)):
			m.mode = mName
		default:
			return rFail
		}
	case mSlash:
		if !isNameStart(c) || !r.sniff && !r.tags.prefixOf([]byte{c}, true) {
			return rFail
		}
		m.mode = mName
	case mName:
		return p.matchName(c, r)
	case mSelfClose:
		if c != '>' {
			return rFail
		}
		p.pend = append(p.pend, c)
		return rDone
	case mMarker:
		return p.matchFixed(c, marker)
	case mComment:
		return p.matchFixed(c, commentOpen)
	case mAttrs:
		// The limit is checked where a character starts, so that the
		// released tag ends on a whole character and the text events
		// built from it do too (PARSING.md §5.2); a character may take
		// the tag up to utf8.UTFMax-1 bytes past the limit.
		if len(p.pend) >= p.maxTag && (c&0xC0 != 0x80 || len(p.pend) >= p.maxTag+utf8.UTFMax-1) {
			return rTooLong
		}
		res := m.attrs.step(c, p.pend)
		if res != rFail {
			p.pend = append(p.pend, c)
		}
		return res
	}
	p.pend = append(p.pend, c)
	return rMore
}

// matchName handles a byte after "<" or "</" and at least one name byte.
func (p *Parser) matchName(c byte, r *rules) matchResult {
	m := &p.m
	start := 1
	if m.closing {
		start = 2
	}
	name := p.pend[start:]
	switch {
	case isNameChar(c):
		if len(name) >= maxName {
			return rFail
		}
		if !r.sniff {
			// Hold only while the bytes may still be a tag legal here
			// (PARSING.md §3.3: no over-eager hold-back).
			var buf [maxName + 1]byte
			n := copy(buf[:], name)
			buf[n] = c
			if !r.tags.prefixOf(buf[:n+1], m.closing) {
				return rFail
			}
		}
	case c == '>':
		// A tag of this state in any letter case completes: act reports
		// one spelled in another case as mis-cased and keeps it text.
		if !r.sniff {
			if id, ok := lookupTagFold(name, m.closing); !ok || !r.tags.has(id) {
				return rFail
			}
		}
		p.pend = append(p.pend, c)
		return rDone
	case c == '/' && !m.closing && r.sniff:
		m.mode = mSelfClose
	case isSpace(c) && !m.closing && r.tags.has(tagPhase) && foldEqual(name, "phase"):
		m.mode = mAttrs
		m.miscased = string(name) != "phase"
		m.attrs = attrLexer{}
		m.attrs.begin()
	default:
		return rFail
	}
	p.pend = append(p.pend, c)
	return rMore
}

// matchFixed matches c against the next byte of lit, a candidate with no
// variable part (the <<ParsingError>> marker, "<!--"), whose first bytes
// are held in p.pend.
func (p *Parser) matchFixed(c byte, lit string) matchResult {
	if c != lit[len(p.pend)] {
		return rFail
	}
	p.pend = append(p.pend, c)
	if len(p.pend) == len(lit) {
		return rDone
	}
	return rMore
}
