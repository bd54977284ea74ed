package gymbro

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"
)

// appendCompactJSON appends raw without insignificant whitespace, so that
// a JSON value the upstream pretty-printed fits on one SSE data line. It
// reports false, appending nothing, when raw is not valid JSON or not valid
// UTF-8 (encoding/json accepts invalid UTF-8 inside strings; a client's
// JSON.parse would see U+FFFD). It runs once per usage object, not per
// delta, so encoding/json's allocation is acceptable here.
func appendCompactJSON(dst, raw []byte) ([]byte, bool) {
	if !utf8.Valid(raw) || !json.Valid(raw) {
		return dst, false
	}
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, raw); err != nil {
		return dst, false
	}
	return buf.Bytes(), true
}

// isObject reports whether compacted JSON is an object.
func isObject(compact []byte) bool {
	return len(compact) > 0 && compact[0] == '{'
}
