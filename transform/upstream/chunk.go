package upstream

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/llmstream/llmstream/transform/parsekit"
)

// ErrMalformed is returned, wrapped with the byte offset, for a chunk that is
// not a JSON object. The caller ends the stream with
// transform.CodeUpstreamError.
var ErrMalformed = errors.New("upstream: malformed chunk")

// Chunk is one decoded chat.completion.chunk (or chat.completion), reduced
// to what llmstream uses. Its slices are borrowed: they alias the decoded
// data or the decoder's scratch buffer and are valid until the next Decode.
type Chunk struct {
	// ID and Model are the chunk's id and model, as sent; empty when absent.
	ID, Model []byte
	// Content is the answer text of the chunk's choice 0 (its delta, or the
	// message of a completion), JSON-unescaped: content as a string, or the
	// text of its typed parts (content.go) joined in order, then refusal.
	Content []byte
	// Reasoning is the choice's reasoning_content or reasoning, which
	// providers use as aliases (PARSING.md §5.7), or else the text of its
	// thinking and reasoning content parts: the first non-empty of the
	// three, in that order. A provider that mirrors one field into the
	// other gives the text once (OA02); an empty reasoning_content beside a
	// non-empty reasoning gives the latter (OA03). When both are non-empty
	// and differ, reasoning_content wins: it is the field the DeepSeek-style
	// API defines, and reasoning is the alias.
	Reasoning []byte
	// ToolCalls are the choice's tool_calls, in array order (a delta may
	// carry several: OA10), or its legacy function_call as one call.
	ToolCalls []ToolCallDelta
	// FinishReason is the choice's finish_reason when it is a non-empty
	// string: some providers send "" instead of null in every chunk.
	FinishReason []byte
	// Usage is the raw JSON of the usage object, when there is one (not
	// null): the chunk's usage, else choice 0's (Moonshot puts it there),
	// else x_groq.usage (Groq). It often comes in a final chunk whose
	// choices are empty, and some providers repeat it in every chunk.
	Usage []byte
	// StrayChoice is the index of the first choice in the chunk that is not
	// choice 0, as sent (or its position, when it has no index): that
	// choice was skipped, so that a reply with n > 1 is never mixed into
	// one answer (CONTRACT.md §7). Nil when there is none.
	StrayChoice []byte
	// Violations lists what the decoder could not place as sent, at most
	// maxChunkViolations of them: content parts of an unknown type
	// (CodeUnknownContentPart). Their text, if any, is still in Content or
	// Reasoning.
	Violations []Violation
	// Done reports that the SSE data was [DONE].
	Done bool
	// Err is set when the chunk reports an error instead of a reply: an
	// {"error": {...}} object, a top-level "error" string, or a vLLM-style
	// {"object": "error", "message": ...} body.
	Err *UpstreamError
}

// ToolCallDelta is one element of a delta's tool_calls: a fragment of one
// tool call. Its slices are borrowed like Chunk's.
type ToolCallDelta struct {
	// Index is the provider's index of the call, when HasIndex. An index
	// that is not a non-negative integer below 1e9 counts as missing.
	Index    int
	HasIndex bool
	// Positional reports a fragment without an index in a chunk whose
	// tool_calls held several fragments: Position, its place in that
	// array, stands in for the index (CONTRACT.md §7; Moonshot and Gemini
	// send parallel calls this way).
	Positional bool
	Position   int
	// ID, Type and Name are the call's id, type and function.name, empty
	// when this fragment lacks them.
	ID, Type, Name []byte
	// Arguments is a fragment of function.arguments, JSON-unescaped. An
	// arguments value that is an object or array instead of a string (some
	// OpenAI-compatible servers send one) is its raw JSON text.
	Arguments []byte
}

// Violation is something the decoder found in a chunk and could not place
// as sent. Detail is borrowed like Chunk's slices.
type Violation struct {
	// Code names it (CodeUnknownContentPart).
	Code string
	// Detail is a short excerpt: the part's type.
	Detail []byte
}

// CodeUnknownContentPart is the violation for a content part whose type
// is neither text nor thinking nor reasoning (or a content value that is
// not text at all): its text, if it has one, is still delivered, so that
// nothing the model wrote is lost, but what else it carried is not.
const CodeUnknownContentPart = "unknown_content_part"

// CodeStrayChoice is the violation the router reports, once per stream,
// for a choice other than choice 0 (Chunk.StrayChoice): the upstream
// answered with several choices, and only the first is the answer.
const CodeStrayChoice = "stray_choice"

// maxChunkViolations bounds Chunk.Violations: a chunk of a thousand
// unknown parts must not grow the decoder's buffers without limit, and the
// router caps what a stream reports anyway.
const maxChunkViolations = 8

// UpstreamError is an error the upstream reported inside its reply. Its
// slices are borrowed like Chunk's.
type UpstreamError struct {
	// Message, Type and Code are the error's message, type and code. Code
	// is the raw number when the provider sends a numeric code.
	Message, Type, Code []byte
}

// Error returns the error as text, for logs; it copies the borrowed bytes.
func (e *UpstreamError) Error() string {
	msg := string(e.Message)
	if len(e.Code) > 0 {
		msg = string(e.Code) + ": " + msg
	}
	if len(e.Type) > 0 {
		msg = string(e.Type) + ": " + msg
	}
	return "upstream error: " + msg
}

// ChunkDecoder decodes the chunks of one reply into a reused Chunk. It reads
// each chunk in one pass, in place (no map, no reflection), and unescapes
// strings into a scratch buffer it keeps, so that it does not allocate in
// steady state. The zero value is ready to use; it is not safe for
// concurrent use.
type ChunkDecoder struct {
	chunk   Chunk
	calls   []ToolCallDelta
	viols   []Violation
	segs    []segment // the text segments of the message being read
	err     UpstreamError
	scratch []byte
	// choiceUsage and groqUsage are the usage objects found in choice 0
	// and in x_groq, the fallbacks for Chunk.Usage.
	choiceUsage, groqUsage []byte
}

// Decode decodes the data of one SSE event of a streamed reply. The result
// is valid until the next Decode and aliases data, which must not change
// until then. An empty (all-whitespace) data is an empty Chunk, as some
// proxies send "data:" as a keep-alive. The error wraps ErrMalformed.
func (d *ChunkDecoder) Decode(data []byte) (*Chunk, error) {
	c := d.reset()
	if t := trimSpace(data); string(t) == "[DONE]" {
		c.Done = true
		return c, nil
	} else if len(t) == 0 {
		return c, nil
	}
	return c, d.decode(data, "delta")
}

// reset readies the reused Chunk and buffers for the next document.
func (d *ChunkDecoder) reset() *Chunk {
	d.scratch = d.scratch[:0]
	d.err = UpstreamError{}
	d.choiceUsage, d.groqUsage = nil, nil
	d.chunk = Chunk{ToolCalls: d.calls[:0], Violations: d.viols[:0]}
	return &d.chunk
}

// decode reads one document into d.chunk; choice names the member of
// choices[0] that holds the reply ("delta" or "message").
func (d *ChunkDecoder) decode(data []byte, choice string) error {
	c := &d.chunk
	cur := cursor{data: data}
	var objectIsError bool
	var topMessage, topType, topCode []byte
	top := cur.openObject(0)
	for key, ok := top.next(); ok; key, ok = top.next() {
		switch string(key) {
		case "id":
			c.ID = d.text(top.raw())
		case "model":
			c.Model = d.text(top.raw())
		case "choices":
			if choices, ok := top.array(); ok {
				d.choices(&choices, choice)
			}
		case "usage":
			if raw := top.raw(); isObject(raw) {
				c.Usage = raw
			}
		case "x_groq":
			if xg, ok := top.object(); ok {
				d.groqUsage = usageOf(&xg)
			}
		case "error":
			d.error(&top)
		case "object":
			objectIsError = string(top.raw()) == `"error"`
		case "message":
			topMessage = top.raw()
		case "type":
			topType = top.raw()
		case "code":
			topCode = top.raw()
		}
	}
	if !cur.bad {
		cur.skipSpace()
		if cur.i < len(data) {
			cur.fail() // text after the object
		}
	}
	if cur.bad {
		d.keep()
		return fmt.Errorf("upstream: byte %d of %d: %w", cur.at, len(data), ErrMalformed)
	}
	if objectIsError && c.Err == nil {
		// vLLM and SGLang report an in-stream error as a top-level
		// {"object": "error", "message": …, "type": …, "code": …}.
		d.err = UpstreamError{Message: d.text(topMessage), Type: d.text(topType), Code: d.code(topCode)}
		c.Err = &d.err
	}
	// Usage at the top level wins over the providers' other places for it.
	if c.Usage == nil {
		c.Usage = d.choiceUsage
	}
	if c.Usage == nil {
		c.Usage = d.groqUsage
	}
	d.keep()
	return nil
}

// keep holds on to the arrays the chunk grew, for the next chunk.
func (d *ChunkDecoder) keep() {
	d.calls, d.viols = d.chunk.ToolCalls, d.chunk.Violations
}

// error reads the value of an "error" member: an object with message, type
// and code, or a string message.
func (d *ChunkDecoder) error(top *object) {
	c := &d.chunk
	if obj, ok := top.object(); ok {
		var e UpstreamError
		for key, ok := obj.next(); ok; key, ok = obj.next() {
			switch string(key) {
			case "message":
				e.Message = d.text(obj.raw())
			case "type":
				e.Type = d.text(obj.raw())
			case "code":
				e.Code = d.code(obj.raw())
			}
		}
		d.err = e
		c.Err = &d.err
		return
	}
	if raw := top.raw(); isString(raw) {
		d.err = UpstreamError{Message: d.text(raw)}
		c.Err = &d.err
	}
}

// text returns the content of a raw JSON string: a slice of the input when
// it has no escape, else its unescaped copy in the scratch buffer. Anything
// but a string gives nil.
func (d *ChunkDecoder) text(raw []byte) []byte {
	if !isString(raw) {
		return nil
	}
	s := raw[1 : len(raw)-1]
	if !hasBackslash(s) {
		return s
	}
	start := len(d.scratch)
	d.scratch = parsekit.AppendUnescaped(d.scratch, s)
	// The capacity is cut so that a caller appending to one field cannot
	// overwrite the next.
	return d.scratch[start:len(d.scratch):len(d.scratch)]
}

// code returns an error code: a string's content, or a number as sent.
func (d *ChunkDecoder) code(raw []byte) []byte {
	if isString(raw) {
		return d.text(raw)
	}
	if len(raw) > 0 && !isNull(raw) {
		return raw
	}
	return nil
}

// parseIndex reads a choice or tool call index: a non-negative integer
// below 1e9.
func parseIndex(raw []byte) (int, bool) {
	if len(raw) == 0 || len(raw) > 9 {
		return 0, false
	}
	n := 0
	for _, b := range raw {
		if b < '0' || b > '9' {
			return 0, false
		}
		n = n*10 + int(b-'0')
	}
	return n, true
}

func trimSpace(p []byte) []byte {
	c := cursor{data: p}
	c.skipSpace()
	p = p[c.i:]
	for len(p) > 0 {
		switch p[len(p)-1] {
		case ' ', '\t', '\n', '\r':
			p = p[:len(p)-1]
			continue
		}
		break
	}
	return p
}

// hasBackslash reports whether a JSON string's body holds an escape, the
// case in which it must be decoded rather than borrowed.
func hasBackslash(s []byte) bool { return bytes.IndexByte(s, '\\') >= 0 }
