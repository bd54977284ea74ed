package skillpet

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
)

// The fallbackText labels of the resource events: specs/002 §3.8 has the UI
// show fallbackText when the host renders no resource of that type, and the
// skillpet UI is Chinese.
const (
	serpQueriesLabel = "相关搜索："
	artifactsLabel   = "产物："
	fallbackSep      = "、"
)

// appendSerpQueries appends resource {resourceType: "serp_queries", data,
// fallbackText} (CONTRACT.md §5). An empty list sends nothing: the UI
// would skip a resource without fallback text anyway (specs/002 §3.8).
func (e *Encoder) appendSerpQueries(dst []byte, queries []string) []byte {
	if len(queries) == 0 {
		return dst
	}
	dst = e.endThinking(dst)
	dst = append(dst, "event: resource\ndata: {\"resourceType\":\"serp_queries\",\"data\":["...)
	for i, q := range queries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = transform.AppendJSONStringS(dst, q)
	}
	dst = append(dst, `],"fallbackText":"`...)
	dst = append(dst, serpQueriesLabel...)
	for i, q := range queries {
		if i > 0 {
			dst = append(dst, fallbackSep...)
		}
		dst = appendJSONBodyS(dst, q)
	}
	return append(dst, "\"}\n\n"...)
}

// appendArtifacts appends resource {resourceType: "artifacts", data,
// fallbackText} for the raw JSON artifacts list (CONTRACT.md §5). The
// fallback text names the string items (specs/004 §7.2: artifacts are
// references such as "file-ready:pptx"). An empty list sends nothing; a
// list that is not valid JSON is sent as a string.
func (e *Encoder) appendArtifacts(dst, raw []byte) []byte {
	if isEmptyArray(raw) {
		return dst
	}
	dst = e.endThinking(dst)
	dst = append(dst, "event: resource\ndata: {\"resourceType\":\"artifacts\",\"data\":"...)
	data, ok := appendCompactJSON(dst, raw)
	if !ok {
		data = transform.AppendJSONString(dst, raw)
	}
	dst = data
	v, _ := decodeJSON(raw)
	var names []string
	if list, ok := v.([]any); ok {
		for _, item := range list {
			if s, ok := item.(string); ok && s != "" {
				names = append(names, s)
			}
		}
	}
	if len(names) > 0 {
		dst = append(dst, `,"fallbackText":`...)
		dst = transform.AppendJSONStringS(dst, artifactsLabel+strings.Join(names, fallbackSep))
	}
	return append(dst, "}\n\n"...)
}

// appendCompactJSON appends raw without insignificant whitespace, so that a
// JSON value the model pretty-printed fits on one SSE data line. It reports
// false, appending nothing, when raw is not valid JSON or not valid UTF-8
// (encoding/json accepts invalid UTF-8 inside strings; a client's
// JSON.parse would see U+FFFD). It runs once per tool call or artifacts
// list, not per delta, so encoding/json's allocation is acceptable here.
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

// isEmptyArray reports whether raw is the JSON array [] (whitespace aside).
func isEmptyArray(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '[' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0 && raw[len(raw)-1] == ']'
}
