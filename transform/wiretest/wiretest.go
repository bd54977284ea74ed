// Package wiretest holds one client-side reader per protocol: what a
// client written from that protocol's document (specs/000 §6 gymbro,
// specs/001 §1–§3 jsonseq, specs/002 §3 skillpet, the AI SDK's UI message
// stream, OpenAI's chat.completion.chunk and its Responses API streaming
// events, Anthropic's Messages API stream, AG-UI's events), not from the
// encoders, sends to llmstream and assembles from what it receives,
// checking the protocol's own rules on the way. CONTRACT.md §7 promises that "every
// protocol's own rules hold on the wire, whatever order the model wrote
// things in"; the property test beside it (wire_test.go) drives every
// format × protocol through the real pipeline to hold the encoders to it,
// and the Caddy layer's harness reads every response of its failure, leak
// and log tests with the same readers.
//
// Every fact a test needs about a protocol's client side is a field of its
// Client: a protocol without one fails every harness that iterates the
// protocol table (For).
//
// Like transform/encodertest, it is a regular package that only tests
// import.
package wiretest

import (
	"fmt"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// Seen is what a client read from one response.
type Seen struct {
	// Answer is the answer text the client assembles: gymbro's reply (the
	// raw text), jsonseq's final_delta, skillpet's token, aisdk's
	// text-delta, openai's content, a responses message's output_text, an
	// anthropic text block.
	Answer string
	// Reasoning is the reasoning text the protocol carries, as it carries
	// it (jsonseq phase_delta texts, aisdk reasoning-delta, skillpet
	// thinking, openai reasoning_content, a responses reasoning item, an
	// anthropic thinking block; gymbro none).
	Reasoning string
	// Violations are the codes the stream reported, for the protocols
	// that report them (gymbro and jsonseq completed.metadata, aisdk
	// data-violations).
	Violations []string
	// ToolCalls names the tool calls the client got, in order (skillpet's
	// ask_user event is a call of ask_user). A raw-reply protocol has none:
	// the calls are in its answer as the model wrote them.
	ToolCalls []string
	// ToolUse says the reply ended by asking the client to run tools: the
	// protocol's finish reason for tool calls, or, where it has none
	// (skillpet, responses), a tool call.
	ToolUse bool
	// Failed says the response ended with the protocol's error: its error
	// event, or the JSON error body of an HTTP error.
	Failed bool
	// Code and Message are the error's code, where the protocol carries
	// one, and message, when Failed.
	Code, Message string
}

// Found is what the reply held, as the pipeline gave it to the encoder:
// what a client is to be shown of the reasoning is judged against it.
type Found struct {
	// Reasoning is every piece of reasoning, in order; Native the free
	// reasoning pieces (KindReasoningDelta), Phases the phase texts
	// (KindPhaseDelta).
	Reasoning, Native, Phases []string
	// LeftOut says the encoder reported leaving reasoning out
	// (transform.CodeReasoningLeftOut, or more repairs than it lists).
	LeftOut bool
}

// A Client is one protocol's client side, as a client that follows the
// protocol's document behaves: what it sends, how it reads the response,
// and the facts of the protocol a test compares with.
type Client struct {
	// Protocol is the protocol table's name.
	Protocol string
	// Request is a chat request such a client sends, asking for a stream
	// where the body can ("stream": true), whose user message is "hi";
	// RequestFormat is the request_format that reads it ("" for an OpenAI
	// chat-completions body).
	Request, RequestFormat string
	// Missing is a body the request format refuses for a missing member,
	// the 400's code, and a word of its message.
	Missing [3]string
	// LeftOut is what the route leaves out of Request (request.Info's
	// LeftOut, logged): "" for nothing.
	LeftOut string
	// RawAnswer says the answer the client assembles is the raw reply, the
	// model's text as written, markup and all (gymbro's content_delta).
	RawAnswer bool
	// Codes says the protocol's in-stream error names the error code
	// (skillpet's error event and aisdk's error part carry only a message).
	Codes bool
	// RefusalCode returns the code a client reads from the HTTP error that
	// refuses a request whose upstream failed with code before the
	// response began (skillpet's is always CHAT_FAILED, specs/002 §2.3).
	RefusalCode func(code string) string
	// ErrorCode returns the code a client reads from the 4xx of a request
	// refused with code before it reached the upstream, in its request
	// format's terms (skillpet's are upper case, and a body that is not
	// JSON misses its parameters).
	ErrorCode func(code string) string
	// Heartbeat reports whether ev is the protocol's keep-alive.
	Heartbeat func(ev encodertest.SSEEvent) bool
	// CheckReasoning checks what the client saw of the reasoning against
	// what the reply held: where the protocol shows reasoning, and how.
	CheckReasoning func(seen Seen, found Found) error

	// stream reads an event stream; body reads one JSON body: the whole
	// reply of a client that asked for no stream, or an HTTP error.
	stream func(out []byte, meta transform.Meta) (Seen, error)
	body   func(out []byte) (Seen, error)
}

// clients are the protocols' clients by protocol name; each protocol's
// file has its own.
var clients = byName(gymbroClient, jsonseqClient, skillpetClient, aisdkClient, openaiClient,
	responsesClient, anthropicClient, aguiClient)

// byName indexes cs by protocol, with the defaults for what a client
// leaves unset: codes as llmstream writes them, and HTTP errors in the
// OpenAI shape.
func byName(cs ...*Client) map[string]*Client {
	m := make(map[string]*Client, len(cs))
	for _, c := range cs {
		if c.RefusalCode == nil {
			c.RefusalCode = same
		}
		if c.ErrorCode == nil {
			c.ErrorCode = same
		}
		if c.body == nil {
			c.body = readErrorBody
		}
		m[c.Protocol] = c
	}
	return m
}

func same(code string) string { return code }

// For returns the client of protocol, or an error naming the protocol that
// has none: a new protocol comes with its client, written from its
// document.
func For(protocol string) (*Client, error) {
	c, ok := clients[protocol]
	if !ok {
		return nil, fmt.Errorf("wiretest: no client for protocol %q: write one from its document", protocol)
	}
	return c, nil
}

// Read reads out, a whole response to one request whose Meta was meta, as
// the protocol's client does: with meta.Stream an event stream, which must
// keep every rule of the protocol and end with its terminal event (and
// whatever the protocol sends after it), nothing after that; otherwise one
// JSON body, the whole reply or the error that refused the request. It
// returns what the client saw. The stream's message_id and request_id,
// where the protocol repeats them, are learned from its first event when
// meta has none.
func (c *Client) Read(out []byte, meta transform.Meta) (Seen, error) {
	if meta.Stream {
		return c.stream(out, meta)
	}
	return c.body(out)
}

// Check reads out with protocol's client (see Client.Read).
func Check(protocol string, out []byte, meta transform.Meta) (Seen, error) {
	c, err := For(protocol)
	if err != nil {
		return Seen{}, err
	}
	return c.Read(out, meta)
}

// commentBeat is the keep-alive of the protocols that send an SSE comment.
func commentBeat(ev encodertest.SSEEvent) bool { return ev.Comment }

// noReasoning is CheckReasoning for a protocol that shows no reasoning
// (its answer is the raw reply) or only to requests that ask for it.
func noReasoning(Seen, Found) error { return nil }

// reasoningInOrder checks a protocol that adds titles and paragraph breaks
// to the reasoning it shows: each piece must appear, in order, unless the
// encoder reported leaving some out.
func reasoningInOrder(seen Seen, found Found) error {
	if !found.LeftOut && !inOrder(seen.Reasoning, found.Reasoning) {
		return fmt.Errorf("reasoning on the wire\n %q\nlacks some of\n %q", seen.Reasoning, found.Reasoning)
	}
	return nil
}
