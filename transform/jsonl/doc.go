// Package jsonl parses the jsonl format: a model reply written as JSON
// Lines, one JSONSeq event per line (specs/001 §1–§4, CONTRACT.md §4):
//
//	{"event":"thinking_start"}
//	{"event":"phase_start","id":1,"title":"需求拆解"}
//	{"event":"phase_delta","id":1,"text":"目标=增肌"}
//	{"event":"thinking_end"}
//	{"event":"final_delta","text":"# 方案\n"}
//	{"event":"final_end"}
//
// Each line is tokenized as it arrives (jsonstream, DocBare mode), so the
// text of a long phase_delta or final_delta streams before its line ends
// (PARSING.md §5.6). An event's fields may be flat or nested under "data".
// The order rules of specs/001 §2 and §6 are checked; a breach is reported
// as a violation and the event still passes through, with sections kept
// paired (every start gets its end, Close ends what is open). A field of
// the wrong type is reported as wrong_type, and what the user can be shown
// still arrives, as the value's JSON text (CONTRACT.md §7, CodeWrongType). A
// serp_queries list is cleaned by the rules thinkingml applies to its
// serp_queries comment (specs/001 §1.1, serp.CleanQueries), each rule
// broken reported as serp_queries_cleaned.
package jsonl
