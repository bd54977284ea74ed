// Package finalresult parses the final_result format: a model reply that
// is one FinalResult JSON object, possibly in a ```json fence (specs/004
// §7.2, CONTRACT.md §4):
//
//	{"status": "answer_ready" | "artifact_ready" | "clarify_needed",
//	 "message": "…", "artifacts": […], "clarify": {"question", "options", "hint"}}
//
// "message" is the answer and streams as it arrives (specs/004 §7.3.3);
// "artifacts" is passed on whole, byte for byte, when its array ends;
// "clarify" is passed on when the object ends and "status" asks for it,
// whichever of the two came first. The object is checked against the
// terminal-state rules 1 and 2 of specs/004 §7.3.1.
//
// A reply that is not a JSON object at all (the model wrote prose) becomes
// the answer as it is: unlike aiplan, final_result has no fallback text,
// and the model's prose is a better answer than none. So do text after the
// object and the rest of a reply whose object broke or outgrew max_key or
// max_depth, and a user-visible field of the wrong type arrives as its
// JSON text (CONTRACT.md §7: nothing the model wrote vanishes).
package finalresult
