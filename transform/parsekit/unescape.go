package parsekit

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// AppendUnescaped appends the decoded content of a JSON string (the raw
// bytes between its quotes) to dst. It is lenient, so that a model's text
// is never lost to a provider's sloppy encoding:
//
//   - an invalid escape (`\H`, `\u12G4`) is kept literally, backslash and
//     all (PARSING.md JO09: `use App\Http` stays as written);
//   - a surrogate pair decodes to its rune; a lone surrogate becomes U+FFFD,
//     as in encoding/json (JO08);
//   - raw control bytes and invalid UTF-8 pass through: the encoders
//     replace invalid UTF-8 when they write JSON.
func AppendUnescaped(dst, raw []byte) []byte {
	for len(raw) > 0 {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:k]...)
		raw = raw[k:]
		if len(raw) < 2 {
			return append(dst, raw...) // a lone trailing backslash
		}
		switch c := raw[1]; c {
		case '"', '\\', '/':
			dst = append(dst, c)
		case 'b':
			dst = append(dst, '\b')
		case 'f':
			dst = append(dst, '\f')
		case 'n':
			dst = append(dst, '\n')
		case 'r':
			dst = append(dst, '\r')
		case 't':
			dst = append(dst, '\t')
		case 'u':
			r, ok := Hex4(raw[2:])
			if !ok {
				dst = append(dst, '\\')
				raw = raw[1:]
				continue
			}
			raw = raw[6:]
			if utf16.IsSurrogate(r) {
				r2, ok := rune(0), false
				if r < 0xDC00 && len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					r2, ok = Hex4(raw[2:])
				}
				if ok && 0xDC00 <= r2 && r2 <= 0xDFFF {
					r = utf16.DecodeRune(r, r2)
					raw = raw[6:]
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			dst = append(dst, '\\')
			raw = raw[1:]
			continue
		}
		raw = raw[2:]
	}
	return dst
}

// Hex4 decodes the four hex digits at the start of p.
func Hex4(p []byte) (rune, bool) {
	if len(p) < 4 {
		return 0, false
	}
	var r rune
	for _, c := range p[:4] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return 0, false
		}
		r = r<<4 | rune(c)
	}
	return r, true
}
