package jsonseq

import (
	"bytes"
	"encoding/json"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
)

// appendJSONOrString appends raw compacted onto one line when it is valid
// JSON, and otherwise raw as a JSON string, so that a value the model wrote
// badly still reaches the client. It runs once per tool call or artifacts
// list, not per delta, so encoding/json's allocation is acceptable here.
func appendJSONOrString(dst, raw []byte) []byte {
	// encoding/json accepts invalid UTF-8 inside strings; a client's
	// JSON.parse would see U+FFFD, so such text goes the string way, where
	// AppendJSONString replaces it visibly.
	if utf8.Valid(raw) && json.Valid(raw) {
		buf := bytes.NewBuffer(dst)
		if json.Compact(buf, raw) == nil {
			return buf.Bytes()
		}
	}
	return transform.AppendJSONString(dst, raw)
}
