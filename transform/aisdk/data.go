package aisdk

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
)

// maxViolations bounds the violations listed in data-violations, so that a
// reply that breaks its structure on every line costs bounded memory.
const maxViolations = 100

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
	dst = transform.AppendJSONString(dst, ev.Text)
	return append(dst, "}}\n\n"...)
}

// appendSerpSummary appends data-serp-summary {text}.
func (e *Encoder) appendSerpSummary(dst, text []byte) []byte {
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-serp-summary","data":{"text":`...)
	dst = transform.AppendJSONString(dst, text)
	return append(dst, "}}\n\n"...)
}

// appendSerpQueries appends data-serp-queries {queries}.
func (e *Encoder) appendSerpQueries(dst []byte, queries []string) []byte {
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-serp-queries","data":{"queries":`...)
	dst = appendStrings(dst, queries)
	return append(dst, "}}\n\n"...)
}

// appendClarify appends data-clarify {question, options, hint}, shaped as
// jsonseq's clarify event: options always an array, hint null when empty.
func (e *Encoder) appendClarify(dst []byte, c *transform.Clarify) []byte {
	if c == nil {
		return dst
	}
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-clarify","data":{"question":`...)
	dst = transform.AppendJSONStringS(dst, c.Question)
	dst = append(dst, `,"options":`...)
	dst = appendStrings(dst, c.Options)
	dst = append(dst, `,"hint":`...)
	if c.Hint == "" {
		dst = append(dst, "null"...)
	} else {
		dst = transform.AppendJSONStringS(dst, c.Hint)
	}
	return append(dst, "}}\n\n"...)
}

// appendArtifacts appends data-artifacts {items} with the raw artifacts
// list, or the text as a string when it is not valid JSON.
func (e *Encoder) appendArtifacts(dst, raw []byte) []byte {
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-artifacts","data":{"items":`...)
	items, ok := appendCompactJSON(dst, raw)
	if !ok {
		items = transform.AppendJSONString(dst, raw)
	}
	return append(items, "}}\n\n"...)
}

// noteViolation keeps a violation {code, offset, detail} for the
// data-violations part (CONTRACT.md §4), up to maxViolations of them.
func (e *Encoder) noteViolation(ev transform.Event) {
	if e.nViolations >= maxViolations {
		return
	}
	if e.nViolations > 0 {
		e.violations = append(e.violations, ',')
	}
	e.nViolations++
	e.violations = append(e.violations, `{"code":`...)
	e.violations = transform.AppendJSONStringS(e.violations, ev.Code)
	e.violations = append(e.violations, `,"offset":`...)
	e.violations = strconv.AppendInt(e.violations, ev.Offset, 10)
	e.violations = append(e.violations, `,"detail":`...)
	e.violations = transform.AppendJSONString(e.violations, ev.Text)
	e.violations = append(e.violations, '}')
}

// appendViolations appends one data-violations part with every violation
// kept, before the terminal chunk; nothing when there were none.
func (e *Encoder) appendViolations(dst []byte) []byte {
	if e.nViolations == 0 {
		return dst
	}
	dst = append(dst, `data: {"type":"data-violations","data":{"violations":[`...)
	dst = append(dst, e.violations...)
	return append(dst, "]}}\n\n"...)
}

// appendStrings appends list as a JSON array of strings.
func appendStrings(dst []byte, list []string) []byte {
	dst = append(dst, '[')
	for i, s := range list {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = transform.AppendJSONStringS(dst, s)
	}
	return append(dst, ']')
}
