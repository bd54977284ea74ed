// Package jsonformat is the base of the JSON formats (aiplan, final_result,
// jsonl; issue 10). Each of them reads the model's reply with a
// jsonstream.Tokenizer and differs only in what its fields mean; the rest
// is written once here, in Base:
//
//   - the tokenizer, its configuration and its Reset;
//   - the raw echo every parser owes the raw-reply protocols
//     (parsekit.RawEcho, transform.KindRaw);
//   - the tokens every format treats alike: a JSON anomaly becomes a
//     violation with the tokenizer's code, and the model's text that is
//     not its JSON (a reply that is not JSON, prose before or after the
//     object, the rest of a reply whose object broke or outgrew max_key or
//     max_depth) becomes answer text (CONTRACT.md §7: nothing the model
//     wrote vanishes; only the limits that protect memory end a stream);
//   - a bounded record of a value's text as written (Record), for a value
//     the format may have to deliver as text, such as an aiplan tool call
//     without a name;
//   - the fatal path: a fatal error closes what is open, then ends the
//     stream, and the input after it is ignored;
//   - the pairing of the answer, thinking and phase sections: every start
//     gets its end, at the latest when the reply ends.
//
// A format names its fields by ID: each Field binds an ID to the path it is
// read from (Fields), so nothing depends on the order in which the fields
// are listed, and two paths may be one field (jsonl's "text" and
// "data.text").
package jsonformat
