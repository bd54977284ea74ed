package finalresult

// The violation codes of the final_result format (KindViolation.Code). The
// JSON anomalies of the reply (jsonstream's codes: trailing_text, bad_json,
// bad_literal, bad_number, unterminated_json, invalid_escape,
// lone_surrogate, control_char, duplicate_key) are passed on as they are.
const (
	// CodeNotJSONObject: the reply is not a JSON object; its text, from
	// its first byte that is not blank, is the answer.
	CodeNotJSONObject = "not_json_object"
	// CodeMissingField: "status" or "message" is absent; Text is its name.
	CodeMissingField = "missing_field"
	// CodeBadStatus: "status" is not answer_ready, artifact_ready or
	// clarify_needed; Text is the value (empty when longer than
	// jsonstream.MaxKeywordBytes).
	CodeBadStatus = "bad_status"
	// CodeArtifactReadyWithoutArtifacts: status artifact_ready with no
	// artifact (specs/004 §7.3.1 rule 1, as far as the reply shows it).
	CodeArtifactReadyWithoutArtifacts = "artifact_ready_without_artifacts"
	// CodeClarifyWithoutQuestion: status clarify_needed with no clarify or
	// an empty question (specs/004 §7.3.1 rule 2); no clarify is sent.
	CodeClarifyWithoutQuestion = "clarify_without_question"
	// CodeWrongType: a field holds the wrong JSON type; Text is its name
	// ("clarify.options[]" for one option). Null is no value, never the
	// wrong type. What the user can be shown still arrives (CONTRACT.md
	// §7), as the value's JSON text: a "message" as the answer
	// ({"message":42} answers "42"), a question, hint or option of the
	// clarify as its text, and a "clarify" that is a string as its
	// question. "status" and "artifacts" of the wrong type are ignored.
	CodeWrongType = "wrong_type"
)
