package validate

// The failure codes, which are also the violation codes reported for them
// and the reasons of caddy_llm_stream_retries_total.
const (
	// CodeUnknownTool: a tool call names a function the request does not
	// declare (specs/003: 工具名称必须在已注册工具列表中). Hard.
	CodeUnknownTool = "unknown_tool"
	// CodeToolArgsInvalid: a tool call's arguments are not JSON, or do
	// not satisfy the tool's JSON Schema; the detail names the failing
	// JSON Pointer (specs/003: 工具参数必须符合对应工具的schema). Hard.
	CodeToolArgsInvalid = "tool_args_invalid"
	// CodeToolSchemaUnusable: a client tool's schema could not be used
	// (it does not compile, refers to another document, or is over the
	// limits), so that tool's arguments go unchecked. A notice: the model
	// cannot fix the client's schema, so it is never retried.
	CodeToolSchemaUnusable = "tool_schema_unusable"
	// CodeNotFinalResult: a reply that ends the turn (no tool call) is not
	// one complete FinalResult object with a valid status and a string
	// message (specs/004 §7.2; PydanticAI's output_type enforces it). The
	// format parser's violations say what was wrong. Hard.
	CodeNotFinalResult = "not_final_result"
	// CodeArtifactWithoutEvidence: status artifact_ready, but the loop
	// called no artifact tool and has no artifact (specs/004 §7.3.1 rule
	// 1, "artifact_ready 但无产物事件和工具调用记录"). Hard.
	CodeArtifactWithoutEvidence = "artifact_without_evidence"
	// CodeArtifactToolFailed: status artifact_ready, and artifact tools
	// were called, but none produced an artifact: each result is missing
	// or reports a failure (rule 1, "产物工具被调用但未产出事件"). Hard.
	CodeArtifactToolFailed = "artifact_tool_failed"
	// CodeClarifyWithoutQuestion: status clarify_needed without a clarify
	// question (rule 2). Hard. The finalresult parser reports the
	// violation of the same code.
	CodeClarifyWithoutQuestion = "clarify_without_question"
	// CodeExpectedArtifact: the router expected an artifact
	// (expected_mode artifact), and the model answered answer_ready with
	// no artifact tool called and no artifact (rule 3). Soft: after the
	// retries the answer is accepted with this violation.
	CodeExpectedArtifact = "expected_artifact"

	// CodeRetried is the violation that records a retry: its detail names
	// the attempt and the failures that caused it.
	CodeRetried = "retried"
	// CodeValidationFailed is the error that ends a stream whose reply
	// still broke a hard rule when the retries were spent.
	CodeValidationFailed = "validation_failed"
)
