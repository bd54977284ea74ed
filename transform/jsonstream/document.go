package jsonstream

import (
	"bytes"
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
	docSkip                    // DocLenient: prose before the object
	docBrace                   // DocLenient: '{' in prose; is it the object?
	docValue                   // the value itself (the tokenizer's grammar)
	docTrail                   // after the value: blanks and a closing fence
	docProse                   // DocStrict: the reply is not JSON; the rest is prose
	docIgnore                  // trailing text or a broken object: consume and ignore
	docStopped                 // DocBare: the input was not an object
)

// bom is the UTF-8 byte order mark, accepted before the value (JO25).
const bom = "\xef\xbb\xbf"

// document is the state of the document stage.
type document struct {
	st       docState
	held     int   // bytes of a byte order mark or of backticks held
	info     int   // bytes of the fence info string
	sigOff   int64 // offset of the first byte that is not blank or fence
	proseOff int64 // DocLenient: offset of the first skipped prose byte, -1
	braceOff int64 // DocLenient: offset of the candidate '{'
	fatal    bool  // a limit was exceeded
	carry    parsekit.RuneCarry
	start    int // DocStrict prose: where the unflushed prose starts in p
}

func (d *document) reset(m DocMode) {
	*d = document{st: docBOM, sigOff: -1, proseOff: -1}
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
		if p[i] == bom[d.held] {
			d.held++
			if d.held == len(bom) {
				d.held = 0
				d.st = docLead
			}
			return i + 1
		}
		if d.held == 0 {
			d.st = docLead
			return i
		}
		// A broken byte order mark is text, like any other unexpected byte.
		return t.notJSON(p, i, bom[:d.held])
	case docLead:
		return t.docLeadByte(p, i)
	case docTicks:
		if p[i] == '`' {
			d.held++
			return i + 1
		}
		if d.held < 3 {
			return t.notJSON(p, i, "``"[:d.held])
		}
		d.held, d.info = 0, 0
		d.st = docInfo
		return i
	case docInfo:
		// A fence's info string ("json", "JSON", "jsonl", …) runs to the end
		// of the line; a '{' on the fence line starts the value at once.
		switch c := p[i]; {
		case c == '\n':
			d.st = docLead
			return i + 1
		case c == t.open:
			return t.docLeadByte(p, i)
		case d.info < t.lim.MaxTagBytes:
			d.info++
			return i + 1
		}
		return t.notJSON(p, i, "")
	case docSkip:
		k := bytes.IndexByte(p[i:], '{')
		if k < 0 {
			return len(p)
		}
		d.braceOff = t.off(i + k)
		d.st = docBrace
		return i + k + 1
	case docBrace:
		switch c := p[i]; {
		case isBlank(c):
			return i + 1
		case c == '"' || c == '}':
			if d.proseOff >= 0 {
				t.report(TokenViolation, -1, -1, 0, detailBytes("prose before the JSON object was skipped"), CodeLeadingText, d.proseOff)
			}
			t.openRoot(d.braceOff)
			return i
		}
		// "{note}": not the object; it was prose, and the '{' that ended it
		// may start the object.
		if d.proseOff < 0 {
			d.proseOff = d.braceOff
		}
		d.st = docSkip
		return i
	case docTrail:
		// Only blanks and the closing fence may follow the object; the
		// backticks are not counted, so "{…}```" and "{…}\n```\n" both
		// pass (JO03).
		if c := p[i]; isBlank(c) || c == '`' {
			return i + 1
		}
		d.st = docIgnore
		t.report(TokenViolation, -1, -1, 0, detailBytes(t.rootDetail("text after the JSON object", "text after the JSON array")), CodeTrailingText, t.off(i))
		return len(p)
	case docProse:
		return len(p)
	}
	return len(p) // docIgnore
}

// docLeadByte handles a byte before the value: blanks, a fence, the '{'.
func (t *Tokenizer) docLeadByte(p []byte, i int) int {
	d := &t.doc
	switch c := p[i]; {
	case isBlank(c):
		return i + 1
	case c == '`' && t.mode != DocBare:
		d.st = docTicks
		d.sigOff = t.off(i)
		d.held = 1
		return i + 1
	case c == t.open:
		if t.mode == DocLenient {
			d.braceOff = t.off(i)
			d.st = docBrace
			return i + 1
		}
		t.openRoot(t.off(i))
		return i + 1
	}
	return t.notJSON(p, i, "")
}

// notJSON handles the first byte of a reply that is not an object: held
// is what the document stage held before it (backticks, part of a byte
// order mark).
func (t *Tokenizer) notJSON(p []byte, i int, held string) int {
	d := &t.doc
	off := t.off(i) - int64(len(held))
	switch t.mode {
	case DocLenient:
		if d.proseOff < 0 {
			d.proseOff = off
		}
		d.st = docSkip
		return i
	case DocBare:
		d.st = docStopped
		t.st = stDead
		t.report(TokenInvalid, -1, -1, 0, detailBytes(t.rootDetail("the line is not a JSON object", "the line is not a JSON array")), CodeExpectedObject, off)
		return i
	}
	d.st = docProse
	t.st = stDead
	t.report(TokenInvalid, -1, -1, 0, detailBytes(t.rootDetail("the reply is not a JSON object", "the reply is not a JSON array")), CodeExpectedObject, off)
	t.emitData(TokenProse, -1, -1, detailBytes(held))
	d.start = i
	return i
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

// resumeProse completes a rune cut at the end of the previous Feed.
func (t *Tokenizer) resumeProse(p []byte) int {
	d := &t.doc
	d.start = 0
	if d.carry.Pending() {
		out, rest := d.carry.Resume(p)
		t.emitData(TokenProse, -1, -1, out)
		d.start = len(p) - len(rest)
	}
	return len(p)
}

// flushProse reports the prose of p not yet reported.
func (t *Tokenizer) flushProse(p []byte, hold bool) {
	d := &t.doc
	out := p[d.start:]
	if hold {
		out = d.carry.Hold(out)
	}
	t.emitData(TokenProse, -1, -1, out)
	d.start = len(p)
}

// docClose ends a reply whose value never began, or that was prose.
func (t *Tokenizer) docClose() {
	d := &t.doc
	off := t.base
	if d.sigOff >= 0 {
		off = d.sigOff
	}
	switch d.st {
	case docProse:
		t.emitData(TokenProse, -1, -1, d.carry.Flush())
	case docBOM, docLead, docTicks, docInfo:
		if t.mode == DocBare {
			return
		}
		held := ""
		switch {
		case d.st == docBOM:
			held = bom[:d.held]
			off = t.base - int64(d.held)
		case d.st == docTicks && d.held < 3:
			held = "``"[:d.held]
		}
		if held != "" && t.mode == DocLenient && d.proseOff < 0 {
			d.proseOff = off
		}
		t.st = stDead
		t.report(TokenInvalid, -1, -1, 0, detailBytes(t.rootDetail("the reply holds no JSON object", "the reply holds no JSON array")), CodeExpectedObject, off)
		if t.mode == DocStrict {
			t.emitData(TokenProse, -1, -1, detailBytes(held))
		}
	case docSkip, docBrace:
		switch {
		case d.proseOff >= 0:
			off = d.proseOff
		case d.st == docBrace:
			off = d.braceOff
		}
		t.st = stDead
		t.report(TokenInvalid, -1, -1, 0, detailBytes(t.rootDetail("the reply holds no JSON object", "the reply holds no JSON array")), CodeExpectedObject, off)
	}
}

// detailBytes views a constant detail string as the borrowed Text of a
// token without copying. Token.Text is read-only for handlers, and string
// data lives as long as the program, so the view never dangles.
func detailBytes(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
