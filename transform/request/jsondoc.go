package request

import (
	"bytes"
	"encoding/json"
)

// This file locates values in a JSON document by byte offset, so that the
// rewrite copies everything it does not change verbatim. The document has
// been validated first (parseObject), which lets the scanner skip values by
// their delimiters alone: strings by their closing quote, containers by
// bracket depth. Skipping never decodes, so reading a message's role costs
// nothing for its (possibly large) content, and nothing allocates.

// span is a JSON value in a document: doc[start:end], no surrounding
// whitespace. The zero span is "absent".
type span struct{ start, end int }

// exists reports whether the span locates a value.
func (v span) exists() bool { return v.end > v.start }

// jsonDoc is a validated JSON document.
type jsonDoc []byte

// root returns the document's top-level value.
func (d jsonDoc) root() span {
	i := d.skipSpace(0)
	return span{i, d.valueEnd(i)}
}

// skipSpace returns the offset of the first non-whitespace byte at or after i.
func (d jsonDoc) skipSpace(i int) int {
	for i < len(d) && isSpace(d[i]) {
		i++
	}
	return i
}

// valueEnd returns the offset just past the value that starts at i.
func (d jsonDoc) valueEnd(i int) int {
	switch d[i] {
	case '"':
		return d.stringEnd(i)
	case '{', '[':
		depth := 0
		for ; i < len(d); i++ {
			switch d[i] {
			case '"':
				i = d.stringEnd(i) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	// A number or a literal ends at the first delimiter.
	for i < len(d) && !isSpace(d[i]) && d[i] != ',' && d[i] != ']' && d[i] != '}' {
		i++
	}
	return i
}

// stringEnd returns the offset just past the string whose quote is at i.
func (d jsonDoc) stringEnd(i int) int {
	for i++; i < len(d); {
		q := bytes.IndexByte(d[i:], '"')
		if q < 0 {
			return len(d)
		}
		i += q
		// The quote is escaped when an odd run of backslashes precedes it.
		// Runs before different quotes do not overlap, so counting them
		// keeps the scan linear.
		bs := 0
		for d[i-1-bs] == '\\' {
			bs++
		}
		i++
		if bs%2 == 0 {
			return i
		}
	}
	return len(d)
}

// kind returns the byte that says v's type: '{', '[', '"', 't', 'f', 'n',
// or 0 for a number or an absent value.
func (d jsonDoc) kind(v span) byte {
	if !v.exists() {
		return 0
	}
	switch c := d[v.start]; c {
	case '{', '[', '"', 't', 'f', 'n':
		return c
	}
	return 0
}

// members calls fn with the key (quotes included) and the value of each
// member of object obj, in document order, until fn returns false.
func (d jsonDoc) members(obj span, fn func(key, val span) bool) {
	if d.kind(obj) != '{' {
		return
	}
	i := d.skipSpace(obj.start + 1)
	for i < obj.end && d[i] == '"' {
		key := span{i, d.stringEnd(i)}
		i = d.skipSpace(d.skipSpace(key.end) + 1) // past ':'
		val := span{i, d.valueEnd(i)}
		if !fn(key, val) {
			return
		}
		i = d.skipSpace(val.end)
		if i < obj.end && d[i] == ',' {
			i = d.skipSpace(i + 1)
		}
	}
}

// elements calls fn with each element of array arr, in order, until fn
// returns false.
func (d jsonDoc) elements(arr span, fn func(val span) bool) {
	if d.kind(arr) != '[' {
		return
	}
	i := d.skipSpace(arr.start + 1)
	for i < arr.end && d[i] != ']' {
		val := span{i, d.valueEnd(i)}
		if !fn(val) {
			return
		}
		i = d.skipSpace(val.end)
		if i < arr.end && d[i] == ',' {
			i = d.skipSpace(i + 1)
		}
	}
}

// member returns the value of obj's last member named name, the one
// JSON.parse, encoding/json and Python all keep, so that the rewrite reads a
// duplicated key the way the upstream will. The span is absent when obj is
// not an object or has no such member.
func (d jsonDoc) member(obj span, name string) span {
	var found span
	d.members(obj, func(key, val span) bool {
		if d.stringIs(key, name) {
			found = val
		}
		return true
	})
	return found
}

// stringIs reports whether v is a string whose value is s. Escapes are
// decoded, so "sys\u0074em" is "system", as every JSON parser reads it.
func (d jsonDoc) stringIs(v span, s string) bool {
	if d.kind(v) != '"' {
		return false
	}
	raw := d[v.start+1 : v.end-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw) == s
	}
	return d.str(v) == s
}

// str returns the value of string v, or "" when v is not a string. The
// result is a copy, safe to keep after the document's buffer is reused.
func (d jsonDoc) str(v span) string {
	if d.kind(v) != '"' {
		return ""
	}
	raw := d[v.start+1 : v.end-1]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	// Escapes are rare in the short strings read here (roles, types, ids);
	// the standard decoder gets them right, surrogate pairs included.
	var s string
	_ = json.Unmarshal(d[v.start:v.end], &s)
	return s
}

// memberStr returns the string value of obj's last member named name, or "".
func (d jsonDoc) memberStr(obj span, name string) string {
	return d.str(d.member(obj, name))
}

// segmentStart returns where the element or member starting at i begins
// together with its leading whitespace: just after the preceding ',' or
// opening bracket. Copying from there keeps the client's layout when
// elements around it are removed or inserted.
func (d jsonDoc) segmentStart(i int) int {
	for i > 0 && isSpace(d[i-1]) {
		i--
	}
	return i
}

// spaceBefore returns the start of the whitespace run that ends at i (a
// closing bracket), not going back past from.
func (d jsonDoc) spaceBefore(from, i int) int {
	for i > from && isSpace(d[i-1]) {
		i--
	}
	return i
}

// isSpace reports whether b is JSON whitespace.
func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// typeName names v's JSON type for error messages.
func (d jsonDoc) typeName(v span) string {
	switch d.kind(v) {
	case 'n':
		return "null"
	case 't', 'f':
		return "a boolean"
	case '"':
		return "a string"
	case '[':
		return "an array"
	case '{':
		return "an object"
	}
	return "a number"
}
