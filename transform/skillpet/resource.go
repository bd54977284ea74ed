package skillpet

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/llmstream/llmstream/transform/jsonout"
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
	dst = append(dst, "event: resource\ndata: {\"resourceType\":\"serp_queries\",\"data\":"...)
	dst = jsonout.AppendStrings(dst, queries)
	dst = append(dst, `,"fallbackText":"`...)
	dst = append(dst, serpQueriesLabel...)
	for i, q := range queries {
		if i > 0 {
			dst = append(dst, fallbackSep...)
		}
		dst = jsonout.AppendStringBodyS(dst, q)
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
	dst = jsonout.AppendOrString(dst, raw)
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
		dst = jsonout.AppendStringS(dst, artifactsLabel+strings.Join(names, fallbackSep))
	}
	return append(dst, "}\n\n"...)
}

// isEmptyArray reports whether raw is the JSON array [] (whitespace aside).
func isEmptyArray(raw []byte) bool {
	raw = bytes.TrimSpace(raw)
	return len(raw) >= 2 && raw[0] == '[' && len(bytes.TrimSpace(raw[1:len(raw)-1])) == 0 && raw[len(raw)-1] == ']'
}

// appendResourceUpdated appends resource_updated {key, snapshot} (specs/002
// §3.6): a resource the route subscribes to changed. The snapshot is an
// object in the spec: any other JSON value is sent as {"value": …}, and
// one that is not JSON is left out.
func appendResourceUpdated(dst []byte, key string, snapshot []byte) []byte {
	dst = append(dst, "event: resource_updated\ndata: {\"key\":"...)
	dst = jsonout.AppendStringS(dst, key)
	snap := bytes.TrimSpace(snapshot)
	switch {
	case len(snap) > 0 && snap[0] == '{' && json.Valid(snap):
		dst = append(dst, `,"snapshot":`...)
		dst, _ = jsonout.AppendCompact(dst, snap)
	case len(snap) > 0 && json.Valid(snap):
		dst = append(dst, `,"snapshot":{"value":`...)
		dst, _ = jsonout.AppendCompact(dst, snap)
		dst = append(dst, '}')
	}
	return append(dst, "}\n\n"...)
}
