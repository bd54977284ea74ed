package openai

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// noteUsage keeps the upstream's usage object, compacted onto one line (a
// non-streaming upstream may pretty-print it). Anything but a valid JSON
// object is dropped: the SDKs type usage as an object. It runs once per
// stream, so encoding/json's allocation is acceptable here.
func (e *Encoder) noteUsage(raw []byte) {
	e.usage = nil
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) != nil || buf.Len() == 0 || buf.Bytes()[0] != '{' {
		return
	}
	e.usage = buf.Bytes()
}
