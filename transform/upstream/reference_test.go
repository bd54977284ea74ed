package upstream

import (
	"bytes"
	"encoding/json"
)

// reference is what a chunk decodes to by the rules of the package doc and
// content.go, computed the slow way with encoding/json: the differential
// oracle of FuzzChunkDecoder (PARSING.md §5.11). It is only defined for
// valid UTF-8 JSON objects without duplicate keys.
type reference struct {
	content, reasoning []byte
	finish             string
	usage              []byte
	stray              bool
	violations         int
}

// referenceDecode decodes data (a chunk when member is "delta", a
// completion when it is "message"); ok is false when data is not a JSON
// object.
func referenceDecode(data []byte, member string) (ref reference, ok bool) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(data, &doc) != nil || doc == nil {
		return ref, false
	}
	var choices []json.RawMessage
	var choiceUsage []byte
	if json.Unmarshal(doc["choices"], &choices) == nil {
		answered := false
		for pos, raw := range choices {
			var choice map[string]json.RawMessage
			if json.Unmarshal(raw, &choice) != nil || choice == nil {
				continue // not an object
			}
			index, ok := refIndex(choice["index"])
			if !ok {
				index = pos
			}
			if index != 0 || answered {
				ref.stray = true
				continue
			}
			answered = true
			ref.finish = refString(choice["finish_reason"])
			if isObject(choice["usage"]) {
				choiceUsage = choice["usage"]
			}
			ref.message(choice[member])
		}
	}
	var xGroq map[string]json.RawMessage
	switch {
	case isObject(doc["usage"]):
		ref.usage = doc["usage"]
	case choiceUsage != nil:
		ref.usage = choiceUsage
	case json.Unmarshal(doc["x_groq"], &xGroq) == nil && isObject(xGroq["usage"]):
		ref.usage = xGroq["usage"]
	}
	ref.violations = min(ref.violations, maxChunkViolations)
	return ref, true
}

// refIndex reads an index as the decoder does: digits only, below 1e9.
func refIndex(raw json.RawMessage) (int, bool) {
	return parseIndex(raw)
}

// refString is a JSON string's value, "" for anything else.
func refString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return s
}

func (ref *reference) message(raw json.RawMessage) {
	var msg map[string]json.RawMessage
	if json.Unmarshal(raw, &msg) != nil || msg == nil {
		return
	}
	var content, reasoning []byte
	ref.value(msg["content"], false, &content, &reasoning)
	if r, ok := msg["refusal"]; ok && isString(r) {
		content = append(content, refString(r)...)
	}
	ref.content = content
	if ref.reasoning = []byte(refString(msg["reasoning_content"])); len(ref.reasoning) == 0 {
		if ref.reasoning = []byte(refString(msg["reasoning"])); len(ref.reasoning) == 0 {
			ref.reasoning = reasoning
		}
	}
}

// value reads a content value or part: a string, an array of parts, one
// part, a number or literal (text, reported), or anything else (reported).
func (ref *reference) value(raw json.RawMessage, inThinking bool, content, reasoning *[]byte) {
	raw = bytes.TrimSpace(raw)
	dst := content
	if inThinking {
		dst = reasoning
	}
	switch {
	case len(raw) == 0 || isNull(raw):
	case isString(raw):
		*dst = append(*dst, refString(raw)...)
	case raw[0] == '[':
		var parts []json.RawMessage
		_ = json.Unmarshal(raw, &parts)
		for _, p := range parts {
			if bytes.HasPrefix(bytes.TrimSpace(p), []byte("[")) {
				ref.violations++
				continue
			}
			ref.value(p, inThinking, content, reasoning)
		}
	case raw[0] == '{':
		ref.part(raw, inThinking, content, reasoning)
	default: // a number or literal
		ref.violations++
		*dst = append(*dst, raw...)
	}
}

func (ref *reference) part(raw json.RawMessage, inThinking bool, content, reasoning *[]byte) {
	var part map[string]json.RawMessage
	_ = json.Unmarshal(raw, &part)
	dst := content
	if inThinking {
		dst = reasoning
	}
	typ, hasType := part["type"]
	if hasType && isNull(typ) {
		hasType = false
	}
	text, hasText := part["text"]
	kind := refString(typ)
	switch {
	case (hasType && isString(typ) && kind == "text") || (!hasType && hasText && isString(text)):
		if isString(text) {
			*dst = append(*dst, refString(text)...)
		} else if hasText && !isNull(text) {
			ref.violations++
		}
	case hasType && isString(typ) && (kind == "thinking" || kind == "reasoning"):
		for _, name := range []string{"thinking", "reasoning", "text"} {
			if v, ok := part[name]; ok && !isNull(v) {
				ref.value(v, true, content, reasoning)
				break
			}
		}
	default:
		ref.violations++
		if hasText && isString(text) {
			*dst = append(*dst, refString(text)...)
		}
	}
}
