package pipeline

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/aisdk"
	"github.com/llmstream/llmstream/transform/gymbro"
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
	dst = transform.AppendJSONStringS(dst, msg)
	dst = append(dst, `,"type":"upstream_error","code":`...)
	dst = transform.AppendJSONStringS(dst, code)
	return append(dst, "}}"...)
}

// Protocols are the client protocols by name (CONTRACT §5).
var Protocols = map[string]*Protocol{
	"gymbro": {
		Name: "gymbro", ContentType: gymbro.ContentType, EarlyStart: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return gymbro.New(m) },
	},
	"jsonseq": {
		Name: "jsonseq", ContentType: jsonseq.ContentType, EarlyStart: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return jsonseq.New(m) },
	},
	"skillpet": {
		Name: "skillpet", ContentType: skillpet.ContentType,
		NewEncoder: func(m transform.Meta) transform.Encoder { return skillpet.New(m) },
		refusal: func(dst []byte, _, msg string) []byte {
			return skillpet.AppendChatFailed(dst, msg)
		},
	},
	"aisdk": {
		Name: "aisdk", ContentType: aisdk.ContentType, EarlyStart: true,
		Header:     [][2]string{{aisdk.HeaderName, aisdk.HeaderValue}},
		NewEncoder: func(m transform.Meta) transform.Encoder { return aisdk.New(m) },
	},
	"openai": {
		Name: "openai", ContentType: openai.ContentType, PassRefusals: true,
		NewEncoder: func(m transform.Meta) transform.Encoder { return openai.New(m) },
	},
}
