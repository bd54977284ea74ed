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
// (JO04). The top-level value may also be an array (Config.Root).
//
// Nothing the model wrote is lost (CONTRACT.md §7): besides blanks before
// the value, a byte order mark and the fence around the value, every byte
// of a reply that is not the value is reported as TokenProse — a reply
// that is no JSON, prose before the object, text after it, and the rest of
// a reply whose object broke or outgrew max_key or max_depth (limits that
// end the tokenizing, not the reply).
//
// Like golang.org/x/net/html's Tokenizer, every slice a Token carries is
// borrowed: it aliases the caller's input or the tokenizer's scratch buffer
// and is valid only until the Handler returns. Steady-state use allocates
// nothing.
//
// # The JSON readers
//
// llmstream reads streaming or spliced JSON in four places (issue 10). A
// fix to how JSON is read (an escape, a surrogate, a limit) belongs in the
// reader of the JSON it concerns:
//
//   - This tokenizer reads everything the model writes as JSON: the reply of
//     the JSON formats, aiplan, final_result and jsonl (through
//     transform/jsonformat's Base), and thinkingml's serp_queries list (a
//     top-level array, read whole once the comment is complete). The model's
//     text arrives in arbitrary pieces and must stream as it arrives, so only
//     an incremental reader fits it.
//   - transform/upstream/jsonscan.go (cursor) reads the upstream's SSE chunks.
//     Each chunk is a complete document, so a one-pass cursor over it is
//     simpler and cheaper than a push tokenizer: it hands out raw values by
//     key at any depth (choices, delta, tool_calls, content parts) without
//     watch paths, decoding or copying, and the decoder beside it unescapes
//     only the strings it keeps. It stays.
//   - transform/request/jsondoc.go reads the client's request body, which is
//     complete and validated first (encoding/json). The rewrite needs random
//     access by key and the byte span of every value, to copy what it does
//     not change verbatim; a one-pass tokenizer reports values in document
//     order only. It stays.
//   - transform/format/auto.go's keyScan reads the first top-level keys of a
//     reply to decide its format. The tokenizer could serve it (watch the
//     decisive keys at the root; the first TokenStart decides), at a cost to
//     weigh: keys would be decoded, so "\u0065vent" would name jsonl, which
//     keyScan, comparing raw key bytes, does not. It is left as it is while
//     the format package is being changed.
//
// encoding/json (with its Decoder's UseNumber where numbers must keep
// their text) reads what is complete and small and needs no streaming:
// the request bodies converted to a chat-completions request (responses,
// anthropic, and the skillpet and aisdk converters of transform/request),
// a tool's JSON Schema and the arguments checked against it
// (transform/validate, through github.com/santhosh-tekuri/jsonschema), and
// the conversation store's records. Those readers need a whole value as
// Go data, which is what encoding/json gives; none of them sees the
// model's text as it streams.
package jsonstream
