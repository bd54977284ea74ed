package conversation

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// appendUnquoted appends the decoded body of a JSON string literal (the
// bytes between its quotes, as an encoder wrote them) to dst. An escape
// that is not JSON's is kept as written; a lone surrogate becomes U+FFFD,
// as encoding/json decodes it.
func appendUnquoted(dst, raw []byte) []byte {
	for len(raw) > 0 {
		k := bytes.IndexByte(raw, '\\')
		if k < 0 {
			return append(dst, raw...)
		}
		dst = append(dst, raw[:k]...)
		raw = raw[k:]
		if len(raw) < 2 {
			return append(dst, raw...)
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
			r, ok := hex4(raw[2:])
			if !ok {
				dst = append(dst, raw[:2]...)
				raw = raw[2:]
				continue
			}
			raw = raw[6:]
			if utf16.IsSurrogate(r) {
				var r2 rune
				ok = false
				if len(raw) >= 6 && raw[0] == '\\' && raw[1] == 'u' {
					r2, ok = hex4(raw[2:])
				}
				if d := utf16.DecodeRune(r, r2); ok && d != utf8.RuneError {
					r = d
					raw = raw[6:]
				} else {
					r = utf8.RuneError
				}
			}
			dst = utf8.AppendRune(dst, r)
			continue
		default:
			dst = append(dst, raw[:2]...)
		}
		raw = raw[2:]
	}
	return dst
}

// hex4 decodes the four hex digits at the start of p.
func hex4(p []byte) (rune, bool) {
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
