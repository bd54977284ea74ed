// Package aiplan parses the aiplan format: a model reply that is one AIPlan
// JSON object, usually in a ```json fence (specs/003, CONTRACT.md §4):
//
//	{"thought": "…", "response_mode": "KNOWLEDGE_QA",
//	 "direct_response": "…", "tool_calls": [{"name": "…", "args": {…}}]}
//
// The fields may come in any order (JO16) and stream as they arrive:
// "thought" is the reasoning (one phase, id 1, titled
// ParserOptions.ReasoningTitle), "direct_response" the answer, and each
// tool call's arguments pass through byte for byte (JO17). The object is
// validated when it ends (specs/003 验证规则), and a reply that gives the
// user nothing gets the spec's safe fallback answer (specs/003 错误处理标准).
//
// Nothing the model wrote vanishes (CONTRACT.md §7): prose before or after
// the object, a reply that is no object, and the rest of a reply whose
// object broke or outgrew max_key or max_depth are answer text, and so is
// the JSON text of a tool call that is no call (no usable name, beyond
// max_tool_calls) and of a user-visible field of the wrong type. The
// fallback comes only when none of it answered.
package aiplan
