package pipeline

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
	"github.com/llmstream/llmstream/transform/upstream"
)

// decodeState is what the router keeps of the upstream's chunks across a
// stream (CONTRACT.md §7).
type decodeState struct {
	// usage is the last usage object the upstream sent, copied: providers
	// that repeat usage in every chunk (vLLM's continuous usage stats,
	// Perplexity) count up, so the last one is the reply's. It is
	// delivered once, when the reply finishes.
	usage []byte
	// carry holds the start of a UTF-8 sequence that a byte-level
	// tokenizer cut at the end of one chunk's reasoning, until the next
	// chunk's reasoning completes it: the parsers do the same for content
	// (parsekit.RuneCarry), reasoning bypasses them.
	carry parsekit.RuneCarry
	// strayReported: a stray choice is reported once per stream, not once
	// per chunk of the other choice.
	strayReported bool
}

// maxKeptUsage is the largest usage buffer kept from one stream to the
// next.
const maxKeptUsage = 4 << 10

// resetDecoding readies the decoding state for a new stream.
func (p *Pipeline) resetDecoding() {
	if cap(p.up.usage) > maxKeptUsage {
		p.up.usage = nil
	}
	p.up.usage = p.up.usage[:0]
	p.up.carry.Reset()
	p.up.strayReported = false
}

// decodingViolations reports what the decoder could not place as sent:
// unknown content parts, and a choice other than choice 0 (once).
func (p *Pipeline) decodingViolations(c *upstream.Chunk) {
	for _, v := range c.Violations {
		p.emit(transform.Event{Kind: transform.KindViolation, Code: v.Code, Offset: p.sum.ContentBytes, Text: v.Detail})
	}
	if c.StrayChoice != nil && !p.up.strayReported {
		p.up.strayReported = true
		p.emit(transform.Event{Kind: transform.KindViolation, Code: upstream.CodeStrayChoice, Offset: p.sum.ContentBytes,
			Text: []byte("choice " + string(c.StrayChoice) + " ignored: only choice 0 is answered")})
	}
}

// emitReasoning emits native reasoning text, holding a UTF-8 sequence
// cut at its end until the next reasoning completes it.
func (p *Pipeline) emitReasoning(text []byte) {
	out, rest := p.up.carry.Resume(text)
	if len(out) > 0 {
		p.emit(transform.Event{Kind: transform.KindReasoningDelta, Text: out})
	}
	if p.up.carry.Pending() {
		return // text ended before the held sequence did
	}
	if rest = p.up.carry.Hold(rest); len(rest) > 0 {
		p.emit(transform.Event{Kind: transform.KindReasoningDelta, Text: rest})
	}
}

// flushReasoning emits the bytes the carry holds, which no reasoning
// completed before something else came: invalid UTF-8 is the encoders'
// to replace, not the router's to drop.
func (p *Pipeline) flushReasoning() {
	if !p.routed {
		return // the state belongs to an earlier stream
	}
	if out := p.up.carry.Flush(); len(out) > 0 {
		p.emit(transform.Event{Kind: transform.KindReasoningDelta, Text: out})
	}
}

// keepUsage keeps the chunk's usage object, the last one winning.
func (p *Pipeline) keepUsage(usage []byte) {
	if len(usage) > 0 {
		p.up.usage = append(p.up.usage[:0], usage...)
	}
}

// emitUsage delivers the usage kept, once, as the turn finishes: the
// reply's, summed with the loop's rounds before it (CONTRACT.md §12).
func (p *Pipeline) emitUsage() {
	if u := p.summedUsage(); p.routed && len(u) > 0 {
		p.emit(transform.Event{Kind: transform.KindUsage, Text: u})
	}
}
