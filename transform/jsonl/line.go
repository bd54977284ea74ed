package jsonl

import (
	"bytes"

	"github.com/llmstream/llmstream/transform/parsekit"
)

// lineKind is where the parser is in the current line (PARSING.md §5.6:
// split only on '\n', strip a trailing '\r', skip blank and fence lines).
type lineKind uint8

const (
	lineStart lineKind = iota // at a line's start: blanks are held
	lineTicks                 // backticks at a line's start: a fence line?
	lineJSON                  // inside the line's object
	lineAfter                 // after the line's object
	lineText                  // prose, or the rest of a bad line: answer text
	lineFence                 // a fence line (```jsonl, ```): skipped (JL08)
)

// maxLead bounds the blanks held at a line's start until the line shows
// whether it is JSON (they are dropped) or prose (they are its indent).
const maxLead = 64

// bom is the UTF-8 byte order mark, skipped at the reply's start.
const bom = "\xef\xbb\xbf"

// bomBytes is bom as a slice, for the carry.
var bomBytes = []byte(bom)

var (
	newline = []byte{'\n'}
	cr      = []byte{'\r'}
	// The tokenizer codes bad_line carries as its Text.
	textUnterminated = []byte("unterminated_json")
	textTrailing     = []byte("trailing_text")
)

// lineState is the state of the current line.
type lineState struct {
	st    lineKind
	lead  [maxLead]byte
	nlead int
	// sep holds the blanks since the last object or prose line: after an
	// object on its line, the line break, blank lines. Before a prose line
	// they are the answer's, once it has text (they stand between the
	// model's text and the markup, issue 22); before an object or the
	// reply's end they separate lines and are dropped. Held in blocks of
	// maxLead bytes: a full block is dropped when more blanks arrive, so
	// that the outcome depends only on the run.
	sep   [maxLead]byte
	nsep  int
	ticks int
	bom   int // bytes of a byte order mark matched at the reply's start
	start int // lineText: where the unflushed text starts in the chunk
	cr    bool
	carry parsekit.RuneCarry
}

// stepLineStart handles a byte at a line's start.
func (p *Parser) stepLineStart(b []byte, i int) int {
	l := &p.line
	c := b[i]
	off := p.Offset() + int64(i)
	if off < int64(len(bom)) && off == int64(l.bom) && c == bom[l.bom] {
		l.bom++
		return i + 1
	}
	if l.bom > 0 && l.bom < len(bom) {
		// A broken byte order mark is the start of the line's first
		// character ("\xef" then "\xbf\xbd" is U+FFFD): it is carried
		// into the text that follows, so that no text delta ends inside
		// a character (parsekit.RuneCarry).
		held := bomBytes[:l.bom]
		l.bom = len(bom)
		p.startProse(off-int64(len(held)), "")
		l.carry.Hold(held) // an incomplete sequence: all of it is held
		out, rest := l.carry.Resume(b[i:])
		p.AnswerText(out)
		l.start = len(b) - len(rest)
		return l.start
	}
	if l.st == lineTicks {
		if c == '`' {
			l.ticks++
			return i + 1
		}
		if l.ticks >= 3 {
			l.st = lineFence
			return i
		}
		p.startProse(off-int64(l.ticks), "``"[:l.ticks])
		l.start = i
		return i
	}
	switch c {
	case '\n': // JL04: a blank line
		p.holdSep(l.lead[:l.nlead])
		p.holdSep(newline)
		p.endLine()
		return i + 1
	case ' ', '\t', '\r':
		if l.nlead < maxLead {
			l.lead[l.nlead] = c
			l.nlead++
		}
		return i + 1
	case '`':
		l.st = lineTicks
		l.ticks = 1
		return i + 1
	case '{':
		p.startObject(i)
		return i
	}
	p.startProse(off, "")
	l.start = i
	return i
}

// startProse turns the line, whose first byte that is not blank is at off,
// into answer text: held is what the line start held besides blanks.
func (p *Parser) startProse(off int64, held string) {
	l := &p.line
	p.Violation(CodeNotJSONLine, nil, off)
	p.releaseSep()
	p.AnswerText(l.lead[:l.nlead])
	p.AnswerText([]byte(held))
	l.nlead = 0
	l.st = lineText
}

// holdSep adds blanks to the separator held (lineState.sep).
func (p *Parser) holdSep(b []byte) {
	l := &p.line
	for _, c := range b {
		if l.nsep == len(l.sep) {
			l.nsep = 0
		}
		l.sep[l.nsep] = c
		l.nsep++
	}
}

// releaseSep emits the separator held as answer text, before prose, if
// the answer has text; at the answer's start it is dropped.
func (p *Parser) releaseSep() {
	l := &p.line
	if p.Texted() {
		p.AnswerText(l.sep[:l.nsep])
	}
	l.nsep = 0
}

// stepText emits answer text up to the newline, which it keeps and whose
// '\r' it strips (JL03).
func (p *Parser) stepText(b []byte, i int) int {
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		return len(b)
	}
	j += i
	if j > i && b[j-1] == '\r' {
		p.AnswerText(b[i : j-1])
		p.AnswerText(newline)
	} else {
		p.AnswerText(b[i : j+1])
	}
	p.endLine()
	return j + 1
}

// stepFence skips a fence line.
func (p *Parser) stepFence(b []byte, i int) int {
	j := bytes.IndexByte(b[i:], '\n')
	if j < 0 {
		return len(b)
	}
	p.endLine()
	return i + j + 1
}

// endLine readies the parser for the next line.
func (p *Parser) endLine() {
	l := &p.line
	l.st, l.nlead, l.ticks = lineStart, 0, 0
}

// resumeLine completes, at the start of a chunk, a '\r' or a rune the
// previous chunk's text ended with.
func (p *Parser) resumeLine(b []byte) int {
	l := &p.line
	if l.st != lineText || len(b) == 0 {
		return 0
	}
	i := 0
	if l.cr {
		l.cr = false
		if b[0] != '\n' {
			p.AnswerText(cr) // not a line end after all
		}
	}
	if l.carry.Pending() {
		out, rest := l.carry.Resume(b)
		p.AnswerText(out)
		i = len(b) - len(rest)
	}
	l.start = i
	return i
}

// suspendLine emits, at the end of a chunk, the text of the line so far,
// holding back a '\r' that may end the line and a rune the next chunk
// completes.
func (p *Parser) suspendLine(b []byte) {
	l := &p.line
	if l.st != lineText || l.start >= len(b) {
		return
	}
	out := b[l.start:]
	if out[len(out)-1] == '\r' {
		l.cr = true
		out = out[:len(out)-1]
	} else {
		out = l.carry.Hold(out)
	}
	p.AnswerText(out)
}

// closeLine ends the last line at the end of the reply.
func (p *Parser) closeLine() {
	l := &p.line
	switch l.st {
	case lineJSON:
		p.CloseTokens() // JL02, JL11
	case lineText:
		p.AnswerText(l.carry.Flush()) // a held '\r' ends the line: dropped
	case lineTicks:
		if l.ticks < 3 {
			p.startProse(p.Offset()-int64(l.ticks), "``"[:l.ticks])
		}
	case lineStart:
		if l.bom > 0 && l.bom < len(bom) {
			p.startProse(p.Offset()-int64(l.bom), bom[:l.bom])
		}
	}
}
