package validate

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/llmstream/llmstream/transform/request"
)

// NewEvidence reads the evidence of the loop a request continues: the
// artifact tools its assistant messages called, and how many of their
// results produced an artifact (ReportsFailure says which did not).
//
// A proxy sees no SSE events of the tools: the client ran them and sent
// their results back as tool messages, so a result is the event
// (specs/004 §7.3.1 emitted_events). The loop is the messages after the
// last user message, so the history before it never counts, and a retry,
// which adds the failed reply (whose calls never ran) and a correction,
// counts the same evidence afresh (§7.3.2).
func NewEvidence(loop request.Loop, tools ArtifactTools) Evidence {
	var ev Evidence
	for _, c := range loop.Calls {
		if tools.Has(c.Name) && !slices.Contains(ev.ArtifactCalls, c.Name) {
			ev.ArtifactCalls = append(ev.ArtifactCalls, c.Name)
		}
	}
	for _, r := range loop.Results {
		if tools.Has(r.Name) && !ReportsFailure(r) {
			ev.Artifacts++
		}
	}
	return ev
}

// ReportsFailure reports whether a tool result says its tool failed, so
// that it is no artifact (specs/004 §7.7: "工具调用成功但执行失败"). It
// does when
//
//   - the message itself carries "is_error": true or "status": "error"
//     (how Anthropic-style and LangChain-style clients mark a failed
//     result);
//   - its content text is empty: the tool returned nothing;
//   - the text is a JSON object with a non-empty "error" member (not
//     null, false, "" or {}), "is_error": true, "ok": false,
//     "success": false, or a "status" of "error", "failed" or "failure"
//     (any case);
//   - or the text begins with the word error, failed or failure (any
//     case), as in "Error: file not found" or "Failed to render".
//
// Anything else is a result, whatever it says: a proxy cannot read a
// tool's prose.
func ReportsFailure(r request.LoopResult) bool {
	var msg map[string]json.RawMessage
	if json.Unmarshal(r.Message, &msg) == nil && (isTrue(msg["is_error"]) || statusFailed(msg["status"])) {
		return true
	}
	text := strings.TrimSpace(r.Text())
	if text == "" {
		return true
	}
	if text[0] == '{' {
		var obj map[string]json.RawMessage
		if json.Unmarshal([]byte(text), &obj) == nil {
			return errorMember(obj["error"]) || isTrue(obj["is_error"]) ||
				isFalse(obj["ok"]) || isFalse(obj["success"]) || statusFailed(obj["status"])
		}
	}
	return startsWithWord(text, "error") || startsWithWord(text, "failed") || startsWithWord(text, "failure")
}

func isTrue(v json.RawMessage) bool  { return string(v) == "true" }
func isFalse(v json.RawMessage) bool { return string(v) == "false" }

// errorMember reports whether an "error" member says there was one.
func errorMember(v json.RawMessage) bool {
	if len(v) == 0 {
		return false
	}
	switch strings.Join(strings.Fields(string(v)), "") {
	case "null", "false", `""`, "{}":
		return false
	}
	return true
}

// statusFailed reports whether a "status" member is a failure.
func statusFailed(v json.RawMessage) bool {
	var s string
	if json.Unmarshal(v, &s) != nil {
		return false
	}
	switch strings.ToLower(s) {
	case "error", "failed", "failure":
		return true
	}
	return false
}

// startsWithWord reports whether text begins with word, in any case,
// followed by the end or a byte that is not a letter.
func startsWithWord(text, word string) bool {
	if len(text) < len(word) || !strings.EqualFold(text[:len(word)], word) {
		return false
	}
	if len(text) == len(word) {
		return true
	}
	c := text[len(word)] | 0x20
	return c < 'a' || c > 'z'
}
