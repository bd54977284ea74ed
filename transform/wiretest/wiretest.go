// Package wiretest reads what a client of each protocol receives and
// checks it against that protocol's own rules, written from its document
// (specs/000 §6 gymbro, specs/001 §1–§3 jsonseq, specs/002 §3 skillpet,
// the AI SDK's UI message stream, OpenAI's chat.completion.chunk and its
// Responses API streaming events, Anthropic's Messages API stream), not
// from
// the encoders: CONTRACT.md §7 promises that "every protocol's own rules
// hold on the wire, whatever order the model wrote things in", and the
// property test beside it (wire_test.go) drives every format × protocol
// through the real pipeline to hold the encoders to it.
//
// Like transform/encodertest, it is a regular package that only tests
// import.
package wiretest

import (
	"fmt"

	"github.com/llmstream/llmstream/transform"
)

// Seen is what a client read from one stream.
type Seen struct {
	// Answer is the answer text the client assembles: gymbro's reply (the
	// raw text), jsonseq's final_delta, skillpet's token, aisdk's
	// text-delta, openai's content.
	Answer string
	// Reasoning is the reasoning text the protocol carries, as it carries
	// it (jsonseq phase_delta texts, aisdk reasoning-delta, skillpet
	// thinking, openai reasoning_content; gymbro none).
	Reasoning string
	// Violations are the codes the stream reported, for the protocols
	// that report them (gymbro and jsonseq completed.metadata, aisdk
	// data-violations).
	Violations []string
	// Failed says the stream ended with the protocol's error.
	Failed bool
}

// checkers are the protocols' checkers by protocol name.
var checkers = map[string]func(out []byte, meta transform.Meta) (Seen, error){
	"gymbro":   checkGymBro,
	"jsonseq":  checkJSONSeq,
	"skillpet": checkSkillpet,
	"aisdk":    checkAISDK,
	"openai":   checkOpenAI,
	// responses and anthropic are the coding agents' protocols
	// (CONTRACT.md §11): the OpenAI Responses API, the Anthropic Messages
	// API.
	"responses": checkResponses,
	"anthropic": checkAnthropic,
}

// Check reads out, the bytes an encoder for protocol wrote for one stream
// whose Meta was meta, checks them against the protocol's rules, and
// returns what the client saw. A stream must end: with its terminal event
// (and whatever the protocol sends after it), nothing after that.
func Check(protocol string, out []byte, meta transform.Meta) (Seen, error) {
	check, ok := checkers[protocol]
	if !ok {
		return Seen{}, fmt.Errorf("wiretest: no checker for protocol %q: write one from its document", protocol)
	}
	return check(out, meta)
}

// Has reports whether protocol has a checker.
func Has(protocol string) bool {
	_, ok := checkers[protocol]
	return ok
}
