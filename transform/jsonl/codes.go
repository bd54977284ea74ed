package jsonl

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/serp"
)

// The violation codes of the jsonl format (KindViolation.Code). The JSON
// anomalies inside a line (jsonstream's codes, e.g. invalid_escape) are
// passed on as they are.
const (
	// CodeNotJSONLine: a line that does not start with '{' (the model wrote
	// prose); its text becomes answer text.
	CodeNotJSONLine = "not_json_line"
	// CodeBadLine: a line whose JSON breaks (JL06), or ends, before its
	// object does, or that holds text after its object; Text is the
	// tokenizer's code. The unconsumed rest of the line becomes answer
	// text; the next line is parsed as usual.
	CodeBadLine = "bad_line"
	// CodeTruncatedLine: the reply ended inside the last line's object
	// (JL11).
	CodeTruncatedLine = "truncated_line"
	// CodeKeyTooLong, CodeJSONTooDeep: a line's object has a key longer
	// than max_key, or nests deeper than max_depth. It is read no further,
	// and the rest of the line is answer text, as a bad line's is (from
	// the key's opening quote); the stream goes on (CONTRACT.md §7).
	CodeKeyTooLong  = transform.CodeKeyTooLong
	CodeJSONTooDeep = transform.CodeJSONTooDeep
	// CodeMultipleValues: a second object on one line (JL09); it is parsed
	// as the next event.
	CodeMultipleValues = "multiple_values"
	// CodeUnknownEvent: an object whose "event" is missing or names no
	// JSONSeq event (JL07); Text is the name (empty when longer than
	// jsonstream.MaxKeywordBytes). The object is dropped.
	CodeUnknownEvent = "unknown_event"
	// CodeEventOrder: an event out of the order of specs/001 §2; Text is
	// the event. It still passes through.
	CodeEventOrder = "event_order"
	// CodePhaseOrder: a phase_start id that is not a positive integer
	// greater than the previous one (specs/001 §6.2).
	CodePhaseOrder = "phase_order"
	// CodePhaseDeltaWithoutStart: a phase_delta whose id is not the open
	// phase's (specs/001 §6.4). Its text goes to the open phase, or to a
	// phase opened for it (titled ParserOptions.ReasoningTitle).
	CodePhaseDeltaWithoutStart = "phase_delta_without_start"
	// CodeEmptyTitle: a phase_start without a title (specs/001 §6.3); the
	// phase is titled ParserOptions.ReasoningTitle.
	CodeEmptyTitle = "empty_title"
	// CodeEventAfterFinalEnd: an event after final_end (specs/001 §2); it
	// still passes through.
	CodeEventAfterFinalEnd = "event_after_final_end"
	// CodeWrongType: a field holds the wrong JSON type; Text is its name:
	// "text", "title" or "queries[]" (one query) that is not a string,
	// "queries" that is not an array, "id" that is neither a number nor a
	// string, "data" that is not an object. Null is no value, never the
	// wrong type. The code is aiplan's and final_result's, which ignore
	// such a field; jsonl keeps what the user can be shown (CONTRACT.md §7):
	// the JSON text of a "text", "title" or query value stands for its text
	// ({"event":"final_delta","text":123} answers "123"), and a "queries"
	// string, number or literal is a list of one query. An "event" that is
	// not a string is unknown_event (JL07).
	CodeWrongType = "wrong_type"
	// CodeSerpQueriesCleaned: the serp_queries event's list broke a rule
	// of specs/000 §4, which specs/001 §1.1 applies to it, and was cleaned
	// (serp.CleanQueries); Text names the rule. The same code as
	// thinkingml's.
	CodeSerpQueriesCleaned = serp.CodeQueriesCleaned
	// CodeMissingThinkingStart, CodeMissingThinkingEnd, CodeMissingFinalEnd:
	// the reply ended without the event (specs/001 §2 items 2, 7, 10).
	CodeMissingThinkingStart = "missing_thinking_start"
	CodeMissingThinkingEnd   = "missing_thinking_end"
	CodeMissingFinalEnd      = "missing_final_end"
)
