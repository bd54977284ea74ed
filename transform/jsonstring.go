package transform

import (
	"unicode/utf8"
	"unsafe"
)

// jsonSafe[b] is true for ASCII bytes that appear in a JSON string as they
// are. Like JSON.stringify, and unlike encoding/json's HTML-safe default,
// '<', '>' and '&' are left alone: the output is an event stream, not HTML.
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for b := 0x20; b < utf8.RuneSelf; b++ {
		t[b] = b != '"' && b != '\\'
	}
	return t
}()

const hexDigits = "0123456789abcdef"

// AppendJSONString appends s as a quoted JSON string. Invalid UTF-8 becomes
// U+FFFD, and U+2028 / U+2029 are escaped so that the output is also valid
// JavaScript. It allocates only when dst must grow.
func AppendJSONString(dst, s []byte) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if jsonSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '"', '\\':
				dst = append(dst, '\\', b)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendJSONStringS is AppendJSONString for a string.
func AppendJSONStringS(dst []byte, s string) []byte {
	// AppendJSONString only reads its argument, so viewing the string's bytes
	// without a copy is safe and keeps encoders allocation-free.
	return AppendJSONString(dst, unsafe.Slice(unsafe.StringData(s), len(s)))
}
