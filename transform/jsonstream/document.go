package jsonstream

import (
	"unsafe"

	"github.com/llmstream/llmstream/transform/parsekit"
)

// docState is the position of the document stage around the value
// (PARSING.md §5.5, "fence wrapper as a pre-stage").
type docState uint8

const (
	docBOM     docState = iota // the reply's first bytes: maybe a byte order mark
	docLead                    // blanks before the value or an opening fence
	docTicks                   // inside a run of backticks
	docInfo                    // the fence's info string ("json"), up to the newline
	docSkip                    // DocLenient: prose before the object, streamed
	docBrace                   // DocLenient: '{' in prose; is it the object?
	docValue                   // the value itself (the tokenizer's grammar)
	docTrail                   // after the value: blanks and a closing fence
	docProse                   // the rest of the reply is prose
	docStopped                 // DocBare: the input was not an object
)

// bom is the UTF-8 byte order mark, accepted before the value (JO25).
const bom = "\xef\xbb\xbf"

// document is the state of the document stage.
//
// Nothing the model wrote is dropped but blanks before the value and the
// fence around it (CONTRACT.md §7): what the stage reads while it cannot
// yet tell a wrapper from prose (part of a byte order mark, a fence header
// and the blanks after it, DocLenient's '{' and the blanks after it) is
// held, at most Limits.MaxTagBytes bytes, and released as prose when it
// turns out not to be the wrapper. A wrapper longer than that is prose.
type document struct {
	st    docState
	ticks int    // backticks of the fence being read
	hold  []byte // see above
	// blank holds the blanks after the value until what follows shows
	// whose they are: text after the value gets them (they stand between
	// the model's text and the markup, issue 22), a closing fence or the
	// end of the reply drops them. Held in blocks of maxTrailBlank bytes:
	// a full block is dropped when more blanks arrive, so that the outcome
	// depends only on the run's length.
	blank    []byte
	proseOff int64 // DocLenient: offset of the first prose byte, -1
	braceOff int64 // DocLenient: offset of the candidate '{'
	bol      bool  // DocLenient prose: at a line's start (a fence may start)
	carry    parsekit.RuneCarry
	start    int // prose: where the unflushed prose starts in p
}

func (d *document) reset(m DocMode) {
	*d = document{st: docBOM, proseOff: -1, hold: d.hold[:0], blank: d.blank[:0]}
	if m == DocBare {
		d.st = docLead
	}
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// docStep consumes bytes of p from i outside the value and returns where
// it stopped; it hands over to the grammar by setting docValue.
func (t *Tokenizer) docStep(p []byte, i int) int {
	d := &t.doc
	switch d.st {
	case docBOM:
		if p[i] == bom[len(d.hold)] {
			d.hold = append(d.hold, p[i])
			if len(d.hold) == len(bom) {
				d.hold = d.hold[:0]
				d.st = docLead
			}
			return i + 1
		}
		d.st = docLead
		if len(d.hold) == 0 {
			return i
		}
		// A broken byte order mark is the start of the reply's first
		// character: prose.
		return t.notJSON(p, i)
	case docLead:
		return t.docLeadByte(p, i)
	case docTicks:
		if p[i] == '`' {
			if !t.holdByte(p[i]) {
				return t.notJSON(p, i)
			}
			d.ticks++
			return i + 1
		}
		if d.ticks < 3 {
			return t.notJSON(p, i)
		}
		d.st = docInfo
		return i
	case docInfo:
		// A fence's info string ("json", "JSON", "jsonl", …) runs to the end
		// of the line; a '{' on the fence line starts the value at once.
		switch c := p[i]; {
		case c == t.open:
			return t.docLeadByte(p, i)
		case !t.holdByte(c):
			return t.notJSON(p, i)
		case c == '\n':
			d.st = docLead
		}
		return i + 1
	case docSkip:
		return t.skipProse(p, i)
	case docBrace:
		switch c := p[i]; {
		case isBlank(c):
			if !t.holdByte(c) {
				return t.notJSON(p, i)
			}
			return i + 1
		case c == '"' || c == '}':
			if d.proseOff >= 0 {
				t.report(TokenViolation, -1, -1, 0, detailBytes("prose before the JSON object"), CodeLeadingText, d.proseOff)
			}
			d.hold = d.hold[:0]
			t.openRoot(d.braceOff)
			return i
		}
		// "{note}": not the object; it is prose, and the byte that ended
		// it may start the object.
		return t.notJSON(p, i)
	case docTrail:
		return t.trailByte(p, i)
	}
	return len(p) // docProse: flushed by suspend
}

// maxTrailBlank bounds the blanks held after the value (document.blank).
const maxTrailBlank = 64

// trailByte handles a byte after the value. Blanks there are held
// (document.blank). A run of backticks is held, with the blanks after it,
// until it shows what it is: the closing fence (three or more, and its
// line or the reply ends), which is dropped with the blanks before it, so
// that "{…}```" and "{…}\n```\n" pass (JO03); or the start of the model's
// text after the object, an opening fence such as "```python" or inline
// code, which is prose with all that follows, the blanks before it
// included (JO20). Nothing else is dropped.
func (t *Tokenizer) trailByte(p []byte, i int) int {
	d := &t.doc
	switch c := p[i]; {
	case len(d.hold) == 0 && isBlank(c):
		if len(d.blank) == maxTrailBlank {
			d.blank = d.blank[:0]
		}
		d.blank = append(d.blank, c)
		return i + 1
	case c == '`' && len(d.hold) == d.ticks: // the run goes on
		if !t.holdByte(c) {
			return t.trailText(p, i)
		}
		d.ticks++
		return i + 1
	case isBlank(c):
		if c == '\n' && d.ticks >= 3 { // the closing fence's line ends
			d.hold, d.ticks, d.blank = d.hold[:0], 0, d.blank[:0]
			return i + 1
		}
		if !t.holdByte(c) {
			return t.trailText(p, i)
		}
		return i + 1
	}
	return t.trailText(p, i)
}

// trailText reports text after the value (JO20) and makes it, from what
// the document stage holds on, the rest of the reply as prose.
func (t *Tokenizer) trailText(p []byte, i int) int {
	d := &t.doc
	off := t.off(i) - int64(len(d.hold)+len(d.blank))
	t.report(TokenViolation, -1, -1, 0, detailBytes(t.rootDetail("text after the JSON object", "text after the JSON array")), CodeTrailingText, off)
	t.emitData(TokenProse, -1, -1, d.blank)
	d.blank = d.blank[:0]
	t.release(p, i)
	d.st = docProse
	return len(p)
}

// holdByte holds c while the document stage decides what it is; it
// returns false if the hold is full (Limits.MaxTagBytes), so that the
// caller treats c and what was held as prose.
func (t *Tokenizer) holdByte(c byte) bool {
	d := &t.doc
	if len(d.hold) >= t.lim.MaxTagBytes {
		return false
	}
	d.hold = append(d.hold, c)
	return true
}

// docLeadByte handles a byte before the value: blanks, a fence, the '{'.
func (t *Tokenizer) docLeadByte(p []byte, i int) int {
	d := &t.doc
	switch c := p[i]; {
	case isBlank(c):
		// Blanks before anything else are dropped; after a fence header
		// they are held with it.
		if len(d.hold) > 0 && !t.holdByte(c) {
			return t.notJSON(p, i)
		}
		return i + 1
	case c == '`' && t.mode != DocBare:
		if !t.holdByte(c) {
			return t.notJSON(p, i)
		}
		d.st = docTicks
		d.ticks = 1
		return i + 1
	case c == t.open:
		if t.mode == DocLenient {
			if !t.holdByte(c) {
				return t.notJSON(p, i)
			}
			d.braceOff = t.off(i)
			d.st = docBrace
			return i + 1
		}
		d.hold = d.hold[:0]
		t.openRoot(t.off(i))
		return i + 1
	}
	return t.notJSON(p, i)
}

// notJSON handles a byte, p[i], that shows that what the document stage
// holds, and p[i], are not the wrapper of the value. DocBare stops;
// DocStrict reports the reply as not JSON and delivers the rest of it as
// prose; DocLenient streams it as prose and goes on looking for the
// object.
func (t *Tokenizer) notJSON(p []byte, i int) int {
	d := &t.doc
	off := t.off(i) - int64(len(d.hold))
	switch t.mode {
	case DocBare:
		d.st = docStopped
		t.st = stDead
		t.report(TokenInvalid, -1, -1, 0, detailBytes(t.rootDetail("the line is not a JSON object", "the line is not a JSON array")), CodeExpectedObject, off)
		return i
	case DocLenient:
		if d.proseOff < 0 {
			d.proseOff = off
		}
		d.st = docSkip
		t.release(p, i)
		return d.start
	}
	d.st = docProse
	t.st = stDead
	t.report(TokenInvalid, -1, -1, 0, detailBytes(t.rootDetail("the reply is not a JSON object", "the reply is not a JSON array")), CodeExpectedObject, off)
	t.release(p, i)
	return len(p)
}

// release delivers what the document stage held as prose, and readies the
// prose of p from i. A character the hold cuts off (a broken byte order
// mark, a fence header longer than the hold) is completed from p first, so
// that no prose token ends inside a character.
func (t *Tokenizer) release(p []byte, i int) {
	d := &t.doc
	held := d.hold
	d.hold = d.hold[:0]
	d.bol = len(held) > 0 && held[len(held)-1] == '\n'
	t.emitData(TokenProse, -1, -1, d.carry.Hold(held))
	d.start = i
	if d.carry.Pending() {
		out, rest := d.carry.Resume(p[i:])
		t.emitData(TokenProse, -1, -1, out)
		d.start = len(p) - len(rest)
	}
}

// skipProse streams DocLenient prose from i (d.start is where its
// unflushed part starts) up to a '{' that may start the object or a fence
// at a line's start, which are held until they show what they are.
func (t *Tokenizer) skipProse(p []byte, i int) int {
	d := &t.doc
	for j := i; j < len(p); j++ {
		c := p[j]
		if c != '{' && (c != '`' || !d.bol) {
			d.bol = c == '\n'
			continue
		}
		t.emitData(TokenProse, -1, -1, p[d.start:j])
		d.start = len(p)
		d.hold = append(d.hold[:0], c)
		if c == '{' {
			d.braceOff = t.off(j)
			d.st = docBrace
		} else {
			d.ticks = 1
			d.st = docTicks
		}
		return j + 1
	}
	return len(p)
}

// startProse makes the rest of the reply, from p[i], prose.
func (t *Tokenizer) startProse(i int) {
	t.doc.st = docProse
	t.doc.start = i
}

// rootDetail returns the detail that speaks of the top-level value's type:
// object, or array. Both are constants, so that reporting allocates
// nothing.
func (t *Tokenizer) rootDetail(object, array string) string {
	if t.open == '[' {
		return array
	}
	return object
}

// openRoot begins the top-level value, an object or an array, whose first
// byte is at off.
func (t *Tokenizer) openRoot(off int64) {
	t.doc.st = docValue
	obj := t.open == '{'
	typ := TypeArray
	if obj {
		typ = TypeObject
	}
	if path, _ := t.watched(0); path >= 0 {
		t.report(TokenStart, path, -1, typ, nil, "", off)
	}
	// The stack's capacity is MaxDepth, at least 1: the root always fits.
	t.stack = append(t.stack[:0], frame{node: 0, obj: obj, idx: -1})
	if obj {
		t.st = stObjFirst
		return
	}
	t.st = stArrFirst
	t.valNode, t.valIdx = t.elem(0), 0
}

// resumeProse completes, at the start of p, a rune cut at the end of the
// previous Feed's prose, and returns where scanning goes on.
func (t *Tokenizer) resumeProse(p []byte) int {
	d := &t.doc
	d.start = 0
	if d.carry.Pending() {
		out, rest := d.carry.Resume(p)
		t.emitData(TokenProse, -1, -1, out)
		d.start = len(p) - len(rest)
	}
	return d.start
}

// flushProse reports the prose of p not yet reported.
func (t *Tokenizer) flushProse(p []byte, hold bool) {
	d := &t.doc
	if d.start >= len(p) {
		return
	}
	out := p[d.start:]
	if hold {
		out = d.carry.Hold(out)
	}
	t.emitData(TokenProse, -1, -1, out)
	d.start = len(p)
}

// docClose ends a reply whose value never began, or that ended in prose.
func (t *Tokenizer) docClose() {
	d := &t.doc
	switch d.st {
	case docProse:
		t.emitData(TokenProse, -1, -1, d.carry.Flush())
	case docSkip:
		t.emitData(TokenProse, -1, -1, d.carry.Flush())
		t.st = stDead
		t.report(TokenInvalid, -1, -1, 0, detailBytes("the reply holds no JSON object"), CodeExpectedObject, d.proseOff)
	case docTrail:
		// Held backticks at the end: three or more close the fence; fewer
		// are the model's text.
		if len(d.hold) > 0 && d.ticks < 3 {
			t.report(TokenViolation, -1, -1, 0, detailBytes(t.rootDetail("text after the JSON object", "text after the JSON array")), CodeTrailingText, t.base-int64(len(d.hold)+len(d.blank)))
			t.emitData(TokenProse, -1, -1, d.blank)
			t.emitData(TokenProse, -1, -1, d.hold)
		}
		d.hold, d.ticks, d.blank = d.hold[:0], 0, d.blank[:0]
	case docBOM, docLead, docTicks, docInfo, docBrace:
		if t.mode == DocBare {
			return
		}
		off := t.base - int64(len(d.hold))
		if d.proseOff >= 0 {
			off = d.proseOff
		}
		// What was held is prose: after the report in DocStrict, where
		// the reply is prose from its start, before it in DocLenient,
		// where the prose has been streaming.
		held := d.hold
		d.hold = d.hold[:0]
		if t.mode == DocLenient {
			t.emitData(TokenProse, -1, -1, held)
		}
		t.st = stDead
		t.report(TokenInvalid, -1, -1, 0, detailBytes(t.rootDetail("the reply holds no JSON object", "the reply holds no JSON array")), CodeExpectedObject, off)
		if t.mode == DocStrict {
			t.emitData(TokenProse, -1, -1, held)
		}
	}
}

// detailBytes views a constant detail string as the borrowed Text of a
// token without copying. Token.Text is read-only for handlers, and string
// data lives as long as the program, so the view never dangles.
func detailBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
