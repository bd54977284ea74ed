package pipeline

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/aisdk"
	"github.com/llmstream/llmstream/transform/gymbro"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/jsonseq"
	"github.com/llmstream/llmstream/transform/openai"
	"github.com/llmstream/llmstream/transform/skillpet"
)

// Protocol describes a client protocol to the HTTP layer: how its stream
// opens, what it answers when the upstream refuses, and its encoder.
// Adding a protocol is one package and one row in Protocols.
type Protocol struct {
	// Name is the protocol option's value.
	Name string
	// ContentType and Header are the stream's response headers.
	ContentType string
	Header      [][2]string
	// EarlyStart opens the stream before the upstream answers: heartbeats
	// cover the wait and a refusal becomes the protocol's error event
	// (gymbro, jsonseq, aisdk). Without it a refusal is an HTTP status.
	EarlyStart bool
	// PassRefusals passes an upstream's non-2xx answer to the client as it
	// is (openai, CONTRACT §6).
	PassRefusals bool
	// ClientChoosesStream lets the client ask for one JSON body instead of
	// a stream ("stream": false, openai); other protocols always stream.
	ClientChoosesStream bool
	// NewEncoder returns the stream's encoder.
	NewEncoder func(transform.Meta) transform.Encoder

	refusal func(dst []byte, code, msg string) []byte
}

// RefusalBody appends the JSON body of an HTTP error for a request whose
// upstream never streamed (skillpet: {"error":"CHAT_FAILED","message":…},
// specs/002 §2.3; otherwise an OpenAI-style error object).
func (pr *Protocol) RefusalBody(dst []byte, code, msg string) []byte {
	if pr.refusal != nil {
		return pr.refusal(dst, code, msg)
	}
	dst = append(dst, `{"error":{"message":`...)
	dst = jsonout.AppendStringS(dst, msg)
	dst = append(dst, `,"type":"upstream_error","code":`...)
	dst = jsonout.AppendStringS(dst, code)
	return append(dst, "}}"...)
}

// protocols are the client protocols (CONTRACT §5), in the order
// messages list them.
var protocols = []*Protocol{
	{
		Name: "gymbro", ContentType: gymbro.ContentType, EarlyStart: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return gymbro.New(m) },
	},
	{
		Name: "jsonseq", ContentType: jsonseq.ContentType, EarlyStart: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return jsonseq.New(m) },
	},
	{
		Name: "skillpet", ContentType: skillpet.ContentType,
		NewEncoder: func(m transform.Meta) transform.Encoder { return skillpet.New(m) },
		refusal: func(dst []byte, _, msg string) []byte {
			return skillpet.AppendChatFailed(dst, msg)
		},
	},
	{
		Name: "aisdk", ContentType: aisdk.ContentType, EarlyStart: true,
		Header:     [][2]string{{aisdk.HeaderName, aisdk.HeaderValue}},
		NewEncoder: func(m transform.Meta) transform.Encoder { return aisdk.New(m) },
	},
	{
		Name: "openai", ContentType: openai.ContentType, PassRefusals: true, ClientChoosesStream: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return openai.New(m) },
	},
}

// Protocols are the client protocols by name.
var Protocols = func() map[string]*Protocol {
	m := make(map[string]*Protocol, len(protocols))
	for _, p := range protocols {
		m[p.Name] = p
	}
	return m
}()

// ProtocolNames lists the protocols' names, for configuration checks and
// their messages.
func ProtocolNames() []string {
	names := make([]string, len(protocols))
	for i, p := range protocols {
		names[i] = p.Name
	}
	return names
}
