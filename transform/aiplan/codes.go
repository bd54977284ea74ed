package aiplan

import "github.com/llmstream/llmstream/transform"

// The violation codes of the aiplan format (KindViolation.Code). The JSON
// anomalies of the reply (jsonstream's codes: leading_text, trailing_text,
// bad_json, bad_literal, bad_number, unterminated_json, invalid_escape,
// lone_surrogate, control_char, duplicate_key) are passed on as they are.
const (
	// CodeNotJSONObject: the reply holds no JSON object (prose, an array, a
	// number). The safe fallback answer follows.
	CodeNotJSONObject = "not_json_object"
	// CodeMissingField: one of the four fields is absent (specs/003
	// 必填字段验证); Text is its name. Also a tool call without a name
	// ("tool_calls[].name"), which is no call: its text is answer text.
	CodeMissingField = "missing_field"
	// CodeTooManyToolCalls: a tool call beyond Limits.MaxToolCalls; it is
	// not made, and its text is answer text (CONTRACT.md §7: the model's
	// text, not a limit that protects memory, so it ends no stream).
	CodeTooManyToolCalls = transform.CodeTooManyToolCalls
	// CodeEmptyThought: "thought" is the empty string.
	CodeEmptyThought = "empty_thought"
	// CodeBadResponseMode: "response_mode" is not TOOL_EXECUTION,
	// KNOWLEDGE_QA or GENERAL_CHAT; Text is the value (empty when longer
	// than jsonstream.MaxKeywordBytes).
	CodeBadResponseMode = "bad_response_mode"
	// CodeInconsistentMode: the fields contradict the mode (specs/003
	// 逻辑一致性验证); Text says how.
	CodeInconsistentMode = "inconsistent_mode"
	// CodeWrongType: a field holds the wrong JSON type (a number for
	// "thought", an object for "direct_response", …); Text is its name.
	// Null is no value, and is the wrong type only where specs/003 wants a
	// value ("thought", "response_mode", "tool_calls"). What the user can
	// be shown still arrives (CONTRACT.md §7), as the value's JSON text:
	// a "thought" as reasoning, a "direct_response" as the answer
	// ({"direct_response":123} answers "123"); a "tool_calls" that is not
	// an array, or an element of it that is not an object, is no call and
	// its text is answer text. A tool call's "name" of the wrong type makes
	// it a call without a name.
	CodeWrongType = "wrong_type"
)
