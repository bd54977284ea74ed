package jsonout

import (
	"bytes"
	"encoding/json"
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

// AppendString appends s as a quoted JSON string. Invalid UTF-8 becomes
// U+FFFD, and U+2028 / U+2029 are escaped so that the output is also valid
// JavaScript. It allocates only when dst must grow.
func AppendString(dst, s []byte) []byte {
	dst = append(dst, '"')
	dst = AppendStringBody(dst, s)
	return append(dst, '"')
}

// AppendStringS is AppendString for a string.
func AppendStringS(dst []byte, s string) []byte {
	return AppendString(dst, bytesOf(s))
}

// AppendStringBody appends s escaped as AppendString escapes it,
// without the quotes, so that several pieces (a phase title and its
// Markdown, the two halves of a character cut between deltas) can be
// joined into one JSON string value. It allocates only when dst must grow.
func AppendStringBody(dst, s []byte) []byte {
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
	return append(dst, s[start:]...)
}

// AppendStringBodyS is AppendStringBody for a string.
func AppendStringBodyS(dst []byte, s string) []byte {
	return AppendStringBody(dst, bytesOf(s))
}

// AppendStrings appends list as a JSON array of strings; an empty or
// nil list is [], never null, so that clients can iterate it unchecked.
func AppendStrings(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = AppendStringS(dst, s)
	}
	return append(dst, ']')
}

// AppendCompact appends raw without insignificant whitespace, so that a
// JSON value the model or the upstream pretty-printed fits on one SSE data
// line; strings are copied as written, escapes included. It reports false,
// appending nothing, when raw is not valid JSON or not valid UTF-8:
// encoding/json accepts invalid UTF-8 inside strings, where a client's
// JSON.parse would see U+FFFD instead of what the model wrote. It allocates
// only when dst must grow.
func AppendCompact(dst, raw []byte) ([]byte, bool) {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return dst, false
	}
	// The Buffer does not escape, and json.Compact writes into dst's spare
	// capacity, so a buffer with room costs no allocation.
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, false
	}
	return buf.Bytes(), true
}

// AppendCompactObject is AppendCompact for a value the client types
// as an object (usage, tool arguments): it also reports false, appending
// nothing, when raw is valid JSON but not an object.
func AppendCompactObject(dst, raw []byte) ([]byte, bool) {
	out, ok := AppendCompact(dst, raw)
	if !ok || out[len(dst)] != '{' {
		return dst, false
	}
	return out, true
}

// AppendOrString appends raw compacted when AppendCompact accepts
// it, and otherwise raw as a JSON string, so that a value the model wrote
// badly still reaches the client, visibly, on a line that stays JSON.
func AppendOrString(dst, raw []byte) []byte {
	if out, ok := AppendCompact(dst, raw); ok {
		return out
	}
	return AppendString(dst, raw)
}

func bytesOf(s string) []byte {
	return unsafe.Slice(unsafe.StringData(s), len(s))
}
