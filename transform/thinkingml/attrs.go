package thinkingml

// attrState is the position of attrLexer inside "<phase …>".
type attrState uint8

const (
	aSpace     attrState = iota // between attributes
	aName                       // in an attribute name
	aAfterName                  // whitespace after a name
	aEq                         // after '='
	aQuoted                     // in a quoted value
	aAfterVal                   // just after a closing quote
	aUnquoted                   // in an unquoted value
)

// attrLexer reads the attributes of a held <phase> tag one byte at a time
// (TM20, TM21). It records positions in Parser.pend, never copies, and
// fails on anything that cannot be an attribute list, so that text such as
// "<phase 1 of 3>" stays text instead of being held up to MaxTagBytes.
type attrLexer struct {
	st                 attrState
	quote              byte
	nameStart, nameEnd int
	valStart           int
	// count is the number of attributes; idStart/idEnd span the value of
	// the first id attribute and idQuote is its quote (0: unquoted).
	count          int
	hasID          bool
	idStart, idEnd int
	idQuote        byte
}

// begin starts the lexer after "<phase" and one whitespace byte.
func (a *attrLexer) begin() { a.st = aSpace }

// step takes byte c, which follows the held tag bytes tag.
func (a *attrLexer) step(c byte, tag []byte) matchResult {
	pos := len(tag)
	if c == '<' {
		return rFail
	}
	switch a.st {
	case aSpace:
		switch {
		case isSpace(c):
		case c == '>':
			return rDone
		case isNameStart(c):
			a.st, a.nameStart = aName, pos
		default:
			return rFail
		}
	case aName:
		switch {
		case isNameChar(c):
		case c == '=':
			a.st, a.nameEnd = aEq, pos
		case isSpace(c):
			a.st, a.nameEnd = aAfterName, pos
		case c == '>':
			a.nameEnd = pos
			a.finish(tag, -1, -1, 0)
			return rDone
		default:
			return rFail
		}
	case aAfterName:
		switch {
		case isSpace(c):
		case c == '=':
			a.st = aEq
		case c == '>':
			a.finish(tag, -1, -1, 0)
			return rDone
		case isNameStart(c):
			a.finish(tag, -1, -1, 0)
			a.st, a.nameStart = aName, pos
		default:
			return rFail
		}
	case aEq:
		switch {
		case isSpace(c):
		case c == '"' || c == '\'':
			a.st, a.quote, a.valStart = aQuoted, c, pos+1
		case c == '>' || c == '=' || c == '`':
			return rFail
		default:
			a.st, a.valStart = aUnquoted, pos
		}
	case aQuoted:
		if c == a.quote {
			a.finish(tag, a.valStart, pos, a.quote)
			a.st = aAfterVal
		}
	case aAfterVal:
		switch {
		case isSpace(c):
			a.st = aSpace
		case c == '>':
			return rDone
		default:
			return rFail
		}
	case aUnquoted:
		switch {
		case isSpace(c):
			a.finish(tag, a.valStart, pos, 0)
			a.st = aSpace
		case c == '>':
			a.finish(tag, a.valStart, pos, 0)
			return rDone
		case c == '"' || c == '\'' || c == '=' || c == '`':
			return rFail
		}
	}
	return rMore
}

// finish records the attribute whose name spans tag[nameStart:nameEnd]
// and that just ended; start < 0 means it had no value.
func (a *attrLexer) finish(tag []byte, start, end int, quote byte) {
	a.count++
	if !a.hasID && string(tag[a.nameStart:a.nameEnd]) == "id" {
		a.hasID = true
		a.idStart, a.idEnd, a.idQuote = start, end, quote
	}
}
