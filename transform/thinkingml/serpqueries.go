package thinkingml

import (
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// decodeQueries decodes the body of the serp_queries comment: a JSON array
// of strings and nothing else (TM29: ["q1",] and ['q1'] are not). The
// comment is held whole and decoded once, so this is a plain decoder over
// one bounded buffer, not an incremental one. It is strict where
// encoding/json is lenient for this use (null elements).
func decodeQueries(b []byte) ([]string, bool) {
	d := jsonArray{b: b}
	d.space()
	if !d.eat('[') {
		return nil, false
	}
	list := []string{}
	d.space()
	if d.eat(']') {
		return d.end(list)
	}
	for {
		d.space()
		s, ok := d.str()
		if !ok {
			return nil, false
		}
		list = append(list, s)
		d.space()
		if d.eat(']') {
			return d.end(list)
		}
		if !d.eat(',') {
			return nil, false
		}
	}
}

// jsonArray is the cursor of decodeQueries.
type jsonArray struct {
	b []byte
	i int
}

// end accepts list if only whitespace follows the array.
func (d *jsonArray) end(list []string) ([]string, bool) {
	d.space()
	if d.i != len(d.b) {
		return nil, false
	}
	return list, true
}

func (d *jsonArray) space() {
	for d.i < len(d.b) && isSpace(d.b[d.i]) {
		d.i++
	}
}

func (d *jsonArray) eat(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// str decodes a JSON string (RFC 8259 §7), \uXXXX and surrogate pairs
// included; a lone surrogate becomes U+FFFD.
func (d *jsonArray) str() (string, bool) {
	if !d.eat('"') {
		return "", false
	}
	var sb strings.Builder
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return sb.String(), true
		case c < 0x20:
			return "", false
		case c != '\\':
			sb.WriteByte(c)
			d.i++
			continue
		}
		d.i++
		if d.i >= len(d.b) {
			return "", false
		}
		e := d.b[d.i]
		d.i++
		switch e {
		case '"', '\\', '/':
			sb.WriteByte(e)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'u':
			r, ok := d.hex4()
			if !ok {
				return "", false
			}
			if utf16.IsSurrogate(r) {
				r = d.lowSurrogate(r)
			}
			sb.WriteRune(r)
		default:
			return "", false
		}
	}
	return "", false
}

// hex4 reads the four hex digits of a \u escape.
func (d *jsonArray) hex4() (rune, bool) {
	if d.i+4 > len(d.b) {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c|0x20 >= 'a' && c|0x20 <= 'f':
			c = c | 0x20 - 'a' + 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	d.i += 4
	return r, true
}

// lowSurrogate completes high surrogate hi with a following \uDC00–\uDFFF
// escape, or returns U+FFFD without consuming anything.
func (d *jsonArray) lowSurrogate(hi rune) rune {
	if d.i+6 <= len(d.b) && d.b[d.i] == '\\' && d.b[d.i+1] == 'u' {
		save := d.i
		d.i += 2
		if lo, ok := d.hex4(); ok {
			if r := utf16.DecodeRune(hi, lo); r != utf8.RuneError {
				return r
			}
		}
		d.i = save
	}
	return utf8.RuneError
}
