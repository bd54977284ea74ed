package jsonstream

import (
	"unicode/utf16"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// sink says where the content of the string being scanned goes.
type sink uint8

const (
	sinkSkip sink = iota // unwatched, or inside a raw capture: nowhere
	sinkText             // a watched string: TokenText deltas
	sinkKey              // a key of a watched object: the key buffer
)

// The anomalies reported at most once per string, so that a model that
// writes raw newlines in every line does not flood the stream.
const (
	seenControl uint8 = 1 << iota
	seenEscape
	seenLone
)

// stringState is the state of the string being scanned.
type stringState struct {
	sink  sink
	key   bool  // the string is an object key
	seen  uint8 // anomalies already reported in this string
	hex   [4]byte
	nhex  int
	code  rune  // the \u escape read so far
	hi    rune  // a high surrogate waiting for its low half
	hiOff int64 // where the high surrogate's escape began

	// The pending decoded text: out aliases the input while the text has
	// no escape (zero-copy, PARSING.md §5.5); once it needs decoding, it
	// is built in scratch, which is reused for the life of the Tokenizer.
	out       []byte
	scratch   []byte
	inScratch bool
	carry     parsekit.RuneCarry
	tail      [8]byte
}

func (s *stringState) reset() {
	s.out = nil
	s.scratch = s.scratch[:0]
	s.inScratch = false
	s.carry.Reset()
	s.hi = 0
}

func (s *stringState) begin(sk sink, key bool) {
	s.sink, s.key, s.seen, s.hi = sk, key, 0, 0
}

// strStop[c] is true for the bytes that end a run of plain string content.
var strStop = func() (t [256]bool) {
	for c := 0; c < 0x20; c++ {
		t[c] = true
	}
	t['"'], t['\\'] = true, true
	return t
}()

// stepString scans plain string content from i.
func (t *Tokenizer) stepString(p []byte, i int) int {
	start := i
	for i < len(p) && !strStop[p[i]] {
		i++
	}
	if i > start && !t.put(p, i, p[start:i]) {
		return i
	}
	if i == len(p) {
		return i
	}
	switch c := p[i]; c {
	case '"':
		if t.str.key {
			t.endKey(p, i)
			return i + 1
		}
		t.flushText(false)
		return t.endValue(p, i+1, t.curNode, t.curIdx, TypeString, nil)
	case '\\':
		t.st = stStrEsc
		return i + 1
	}
	// JO10: a raw control byte is kept, and reported once.
	t.strViolation(p, i, seenControl, CodeControlChar, "raw control byte in a string", t.off(i))
	if !t.put(p, i+1, p[i:i+1]) {
		return i
	}
	return i + 1
}

// stepEscape handles the byte after a backslash.
func (t *Tokenizer) stepEscape(p []byte, i int) int {
	c := p[i]
	switch c {
	case '"', '\\', '/':
	case 'b':
		c = '\b'
	case 'f':
		c = '\f'
	case 'n':
		c = '\n'
	case 'r':
		c = '\r'
	case 't':
		c = '\t'
	case 'u':
		t.str.nhex, t.str.code = 0, 0
		t.st = stStrU
		return i + 1
	default:
		// JO09: an escape JSON does not define is kept literally; the byte
		// after the backslash is scanned as plain content.
		t.strViolation(p, i, seenEscape, CodeInvalidEscape, "invalid escape in a string", t.off(i)-1)
		t.st = stStr
		if !t.putCopy(p, i, backslash) {
			return i
		}
		return i
	}
	t.st = stStr
	if !t.putCopy(p, i, escapeByte(c)) {
		return i
	}
	return i + 1
}

var backslash = []byte{'\\'}

// escapeBytes holds each byte value as a one-byte slice, so that a decoded
// escape is appended without a temporary.
var escapeBytes = func() (t [256][1]byte) {
	for c := range t {
		t[c][0] = byte(c)
	}
	return t
}()

func escapeByte(c byte) []byte { return escapeBytes[c][:] }

// stepHex handles a byte of a \uXXXX escape; the digits are kept across
// Feeds (JO06).
func (t *Tokenizer) stepHex(p []byte, i int) int {
	s := &t.str
	h := hexValue(p[i])
	if h < 0 {
		start := t.off(i) - 2 - int64(s.nhex)
		if s.hi != 0 && !t.loneSurrogate(p, i) {
			return i
		}
		t.strViolation(p, i, seenEscape, CodeInvalidEscape, "invalid \\u escape in a string", start)
		t.st = stStr
		lit := append(s.tail[:0], '\\', 'u')
		if !t.putCopy(p, i, append(lit, s.hex[:s.nhex]...)) {
			return i
		}
		return i
	}
	s.hex[s.nhex] = p[i]
	s.nhex++
	s.code = s.code<<4 | rune(h)
	if s.nhex < 4 {
		return i + 1
	}
	t.escapedRune(p, i, s.code)
	return i + 1
}

// escapedRune handles the code unit of a complete \u escape ending at i:
// it joins surrogate pairs, also across Feeds, and turns a lone half into
// U+FFFD (JO08).
func (t *Tokenizer) escapedRune(p []byte, i int, r rune) {
	s := &t.str
	t.st = stStr
	if s.hi != 0 {
		if r >= 0xDC00 && r <= 0xDFFF {
			r = utf16.DecodeRune(s.hi, r)
			s.hi = 0
			t.putRune(p, i, r)
			return
		}
		if !t.loneSurrogate(p, i) {
			return
		}
	}
	switch {
	case r >= 0xD800 && r <= 0xDBFF:
		s.hi = r
		s.hiOff = t.off(i) - 5
		t.st = stStrHi
	case r >= 0xDC00 && r <= 0xDFFF:
		s.hiOff = t.off(i) - 5
		s.hi = r
		t.loneSurrogate(p, i)
	default:
		t.putRune(p, i, r)
	}
}

// stepHighSurrogate expects the backslash of a low surrogate's escape.
func (t *Tokenizer) stepHighSurrogate(p []byte, i int) int {
	if p[i] == '\\' {
		t.st = stStrHiEsc
		return i + 1
	}
	t.st = stStr
	t.loneSurrogate(p, i)
	return i
}

// stepHighSurrogateEscape expects the 'u' of a low surrogate's escape.
func (t *Tokenizer) stepHighSurrogateEscape(p []byte, i int) int {
	if p[i] == 'u' {
		t.str.nhex, t.str.code = 0, 0
		t.st = stStrU
		return i + 1
	}
	t.st = stStrEsc // the backslash escapes this byte instead
	t.loneSurrogate(p, i)
	return i
}

// loneSurrogate reports the half surrogate in s.hi and puts U+FFFD for it.
// It returns false if a limit stopped the tokenizer.
func (t *Tokenizer) loneSurrogate(p []byte, i int) bool {
	t.strViolation(p, i, seenLone, CodeLoneSurrogate, "lone UTF-16 surrogate in a \\u escape", t.str.hiOff)
	t.str.hi = 0
	return t.putRune(p, i, utf8.RuneError)
}

// strViolation reports an anomaly in a watched string or key, once per
// string.
func (t *Tokenizer) strViolation(p []byte, i int, flag uint8, code, detail string, off int64) {
	s := &t.str
	if s.sink == sinkSkip || s.seen&flag != 0 {
		return
	}
	s.seen |= flag
	t.violation(p, i, code, detailBytes(detail), off)
}

func hexValue(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

// put adds plain content b, a span of p ending at i, to the string's sink.
// It returns false if a limit stopped the tokenizer.
func (t *Tokenizer) put(p []byte, i int, b []byte) bool {
	switch t.str.sink {
	case sinkText:
		t.text(b)
	case sinkKey:
		return t.keyPut(p, i, b)
	}
	return true
}

// keyPut adds plain key content b, the span of p ending at i, to the key
// buffer, bounded by MaxKeyBytes. The limit trips at the first byte whose
// character does not fit whole, wherever the chunk ends, so that where it
// trips (where a DocBare Feed stops, where the released text starts) does
// not depend on how the reply was split and never cuts a character.
func (t *Tokenizer) keyPut(p []byte, i int, b []byte) bool {
	room := cap(t.key) - len(t.key)
	if len(b)+utf8.UTFMax-1 > room {
		for k, c := range b {
			if k+charLen(c) > room {
				t.limit(p, i-len(b)+k, transform.CodeKeyTooLong, "JSON object key longer than the key limit")
				return false
			}
		}
	}
	t.key = append(t.key, b...)
	return true
}

// charLen returns the length of the UTF-8 sequence that c starts, 1 for
// a byte that starts none (ASCII, a continuation byte, an invalid byte).
// A continuation byte needs no room of its own: its lead byte reserved it.
func charLen(c byte) int {
	switch {
	case c >= 0xF0 && c < 0xF8:
		return 4
	case c >= 0xE0 && c < 0xF0:
		return 3
	case c >= 0xC0 && c < 0xE0:
		return 2
	}
	return 1
}

// putCopy adds decoded content b, which does not alias the input.
func (t *Tokenizer) putCopy(p []byte, i int, b []byte) bool {
	switch t.str.sink {
	case sinkText:
		t.textCopy(b)
	case sinkKey:
		return t.keyAppend(p, i, b)
	}
	return true
}

// putRune adds a decoded rune.
func (t *Tokenizer) putRune(p []byte, i int, r rune) bool {
	var buf [utf8.UTFMax]byte
	return t.putCopy(p, i, utf8.AppendRune(buf[:0], r))
}

// keyAppend adds b to the key buffer, bounded by MaxKeyBytes.
func (t *Tokenizer) keyAppend(p []byte, i int, b []byte) bool {
	if len(t.key)+len(b) > cap(t.key) {
		t.limit(p, i, transform.CodeKeyTooLong, "JSON object key longer than the key limit")
		return false
	}
	t.key = append(t.key, b...)
	return true
}

// text adds b, a span of the input, to the pending text; it stays an
// alias of the input while it can.
func (t *Tokenizer) text(b []byte) {
	s := &t.str
	if !s.inScratch {
		if len(s.out) == 0 {
			s.out = b
			return
		}
		if adjacent(s.out, b) {
			s.out = s.out[:len(s.out)+len(b)]
			return
		}
		s.scratch = append(s.scratch[:0], s.out...)
		s.inScratch = true
	}
	s.scratch = append(s.scratch, b...)
}

// textCopy adds b, which does not alias the input, to the pending text.
func (t *Tokenizer) textCopy(b []byte) {
	if len(b) == 0 {
		return
	}
	s := &t.str
	if !s.inScratch {
		s.scratch = append(s.scratch[:0], s.out...)
		s.inScratch = true
	}
	s.scratch = append(s.scratch, b...)
}

// adjacent reports whether b starts where a ends in the same array.
func adjacent(a, b []byte) bool {
	return len(b) > 0 && cap(a) > len(a) && &a[:len(a)+1][len(a)] == &b[0]
}

// flushText reports the pending text of a watched string; hold keeps back
// a rune cut at the end of the input (JO11).
func (t *Tokenizer) flushText(hold bool) {
	s := &t.str
	if s.sink != sinkText {
		return
	}
	out := s.out
	if s.inScratch {
		out = s.scratch
	}
	if hold {
		out = s.carry.Hold(out)
	}
	s.out, s.inScratch = nil, false
	if len(out) > 0 {
		t.report(TokenText, t.cur(), t.curIdx, TypeString, out, "", 0)
	}
}

// cur returns the watch index of the value being scanned.
func (t *Tokenizer) cur() int32 {
	path, _ := t.watched(t.curNode)
	return path
}

// unfinishedEscape returns, at the end of the reply, the literal text of an
// escape the reply cut off inside a watched string.
func (s *stringState) unfinishedEscape(st state) []byte {
	out := s.tail[:0]
	if s.hi != 0 {
		out = utf8.AppendRune(out, utf8.RuneError)
	}
	switch st {
	case stStrEsc, stStrHiEsc:
		out = append(out, '\\')
	case stStrU:
		out = append(append(out, '\\', 'u'), s.hex[:s.nhex]...)
	}
	return out
}
