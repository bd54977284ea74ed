package aiplan

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
	// ("tool_calls[].name").
	CodeMissingField = "missing_field"
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
	// "thought", an object for "direct_response", …); Text is its name. The
	// field is ignored.
	CodeWrongType = "wrong_type"
)
