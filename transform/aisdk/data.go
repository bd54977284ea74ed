package aisdk

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// Data parts (type "data-…", ai@6 uiMessageChunkSchema) carry what the UI
// message stream has no part for. They have no id: the SDK replaces a data
// part that repeats the type and id of an earlier one, and each of these is
// a new fact.

// appendPhase appends data-phase {id, title} before the phase's reasoning
// part (CONTRACT.md §5).
func (e *Encoder) appendPhase(dst []byte, ev transform.Event) []byte {
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-phase","data":{"id":`...)
	dst = strconv.AppendInt(dst, int64(ev.Index), 10)
	dst = append(dst, `,"title":`...)
	dst = jsonout.AppendString(dst, ev.Text)
	return append(dst, "}}\n\n"...)
}

// appendSerpSummary appends data-serp-summary {text}.
func (e *Encoder) appendSerpSummary(dst, text []byte) []byte {
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-serp-summary","data":{"text":`...)
	dst = jsonout.AppendString(dst, text)
	return append(dst, "}}\n\n"...)
}

// appendSerpQueries appends data-serp-queries {queries}.
func (e *Encoder) appendSerpQueries(dst []byte, queries []string) []byte {
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-serp-queries","data":{"queries":`...)
	dst = jsonout.AppendStrings(dst, queries)
	return append(dst, "}}\n\n"...)
}

// appendClarify appends data-clarify {question, options, hint}, shaped as
// jsonseq's clarify event.
func (e *Encoder) appendClarify(dst []byte, c *transform.Clarify) []byte {
	if c == nil {
		return dst
	}
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-clarify","data":{`...)
	dst = jsonout.AppendClarifyFields(dst, c)
	return append(dst, "}}\n\n"...)
}

// appendArtifacts appends data-artifacts {items} with the raw artifacts
// list, or the text as a string when it is not valid JSON.
func (e *Encoder) appendArtifacts(dst, raw []byte) []byte {
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-artifacts","data":{"items":`...)
	dst = jsonout.AppendOrString(dst, raw)
	return append(dst, "}}\n\n"...)
}

// appendViolations appends one data-violations part with every violation
// kept (CONTRACT.md §4), before the terminal chunk; nothing when there
// were none.
func (e *Encoder) appendViolations(dst []byte) []byte {
	if e.violations.Len() == 0 {
		return dst
	}
	dst = append(dst, `data: {"type":"data-violations","data":{"violations":`...)
	dst = e.violations.AppendJSON(dst)
	return append(dst, "}}\n\n"...)
}

// appendResourceUpdated appends data-resource-updated {key, snapshot} with
// the key as the part's id: a resource the route subscribes to changed
// (CONTRACT.md §13), and useChat replaces the part of that key in place,
// so the page holds each resource's latest state. A snapshot that is not
// JSON is sent as a string.
func (e *Encoder) appendResourceUpdated(dst []byte, key string, snapshot []byte) []byte {
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-resource-updated","id":`...)
	dst = jsonout.AppendStringS(dst, key)
	dst = append(dst, `,"data":{"key":`...)
	dst = jsonout.AppendStringS(dst, key)
	dst = append(dst, `,"snapshot":`...)
	dst = jsonout.AppendOrString(dst, snapshot)
	return append(dst, "}}\n\n"...)
}
