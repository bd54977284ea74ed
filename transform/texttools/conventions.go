// Package texttools reads tool calls that models write as text
// (CONTRACT.md §8, text_tools): Hermes, Qwen 2.5/3 and the many models
// trained on their template write
//
//	<tool_call>
//	{"name": "get_weather", "arguments": {"city": "Paris"}}
//	</tool_call>
//
// in their content when the server has no tool parser. Parser is the text
// format with those calls read: text before, between and after the blocks
// is the answer; each block becomes KindToolCallStart, KindToolArgsDelta
// and KindToolCallEnd, read as the block arrives by the JSON push
// tokenizer (transform/jsonstream: no re-parse) and sent when it ends, so
// every protocol carries it like a native tool call.
//
// A convention is one row of a table (Conventions): its opening marker,
// its closing marker or the end of the reply, and the shape of its body.
// Another text convention, such as Llama's <|python_tag|> (a body
// {"name", "parameters"} to the end of the reply), is one more row.
//
// The rules, for the one body shape there is (BodyObject):
//
//   - A block holds one JSON object with a string "name" and the arguments
//     in "arguments" (or "parameters", as Llama writes them; or both under
//     "function", as OpenAI's messages do): an object passes through byte
//     for byte (raw capture), a JSON string is decoded and its content is
//     the arguments, null or none means {} (PARSING.md OA12). Other keys
//     are ignored.
//   - A block is held until it ends (its closing marker), and its call is
//     then sent whole: KindToolCallStart, one KindToolArgsDelta,
//     KindToolCallEnd. While a block streams, the text before it has been
//     delivered and nothing of the block is; a block cut off by the end of
//     the reply, or one that turns out not to be a call, is therefore text
//     and never a half call that a client would try to run (CONTRACT.md §7,
//     §8; vLLM's hermes parser likewise returns such a reply as content).
//   - Blanks are the answer's wherever text stands on both sides of them,
//     blocks between included: "in Mars. <tool_call>…</tool_call> In this
//     way" keeps both spaces. Only at the answer's edges do they go with
//     the blocks: blanks before the answer's first text, when a block
//     stands among them, and after its last text, when a block follows it,
//     are dropped, so that a reply that is only tool calls has no answer.
//     A reply without a block is its own answer, byte for byte, as in the
//     text format.
//   - A block that is not one such object (not JSON, no name, text after
//     the object, a tokenizer limit: max_key, max_depth), that the reply
//     cuts off, or that comes after Limits.MaxToolCalls calls, is
//     delivered as answer text, verbatim from its opening marker, with the
//     violation bad_tool_call, unterminated_tool_call or
//     too_many_tool_calls. An object that is complete when the reply ends
//     without the closing marker is still a call (unterminated_tool_call
//     is reported), as vLLM's hermes parser also accepts it.
//   - A block is held whole until it ends: more than Limits.MaxBlockBytes
//     ends the stream with block_too_long, after its text so far, as
//     aiplan's tool arguments do.
package texttools

// Body is the shape of what a convention's block holds.
type Body uint8

// The body shapes.
const (
	// BodyObject is one JSON object: {"name": …, "arguments": …}.
	BodyObject Body = iota
)

// Convention is one row of the table: how a family of models writes a tool
// call as text.
type Convention struct {
	// Name is the text_tools option's value.
	Name string
	// Open is the marker that starts a block.
	Open string
	// Close is the marker that ends it; "" means the block runs to the end
	// of the reply.
	Close string
	// Body is what the block holds.
	Body Body
}

// conventions is the table, in the order messages list the names.
var conventions = []*Convention{
	{Name: "hermes", Open: "<tool_call>", Close: "</tool_call>", Body: BodyObject},
}

// Conventions returns the table's rows. They are shared and must not be
// modified.
func Conventions() []*Convention { return conventions }

// Lookup returns the row named name.
func Lookup(name string) (*Convention, bool) {
	for _, c := range conventions {
		if c.Name == name {
			return c, true
		}
	}
	return nil, false
}

// maxMarker bounds a marker's length, so that a held marker candidate fits
// a fixed array.
const maxMarker = 32
