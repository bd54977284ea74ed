// Package jsonstream is an incremental JSON push tokenizer for model replies
// that are one JSON object (aiplan, final_result) or one object per line
// (jsonl). It reads the reply one upstream delta at a time, examines each
// byte a bounded number of times, never backtracks or re-parses, and reports
// only the values its caller watches (PARSING.md §5.5):
//
//   - string deltas as the string grows, decoded, cut on rune boundaries;
//   - the start and end of each watched value, with the complete text of a
//     number or literal at its end (never a partial number: JO12);
//   - the raw bytes of a watched value, byte for byte, for values that must
//     pass through unchanged, such as tool call arguments (JO17).
//
// A document stage around the value accepts what models put around JSON: a
// byte order mark, blank lines, a ```json fence and its closing fence
// (JO01–JO03, JO25), and, depending on the DocMode, prose before the object
// (JO04).
//
// Like golang.org/x/net/html's Tokenizer, every slice a Token carries is
// borrowed: it aliases the caller's input or the tokenizer's scratch buffer
// and is valid only until the Handler returns. Steady-state use allocates
// nothing.
package jsonstream
