// Package thinktags reads the <think> tags that reasoning models served raw
// write in their content (CONTRACT.md §8, think_tags): llama.cpp, vLLM or
// SGLang without a reasoning parser, older Ollama. It is a stage in front
// of the format parser: the pipeline wraps every format's parser in one,
// so that a single setting covers them all.
//
// What it takes as reasoning, by setting:
//
//   - auto: a <think>…</think> block at the start of the content (after
//     blanks). For the model families whose chat template opens <think> in
//     the prompt (Families), auto behaves as prefilled.
//   - prefilled: everything before the first </think>, the chat template
//     having opened <think> (PARSING.md TM08); a <think> the model writes
//     anyway at the start is its opening tag. When the reasoning came
//     natively (reasoning_content) before the content, the content is not
//     reasoning: the upstream parsed it already.
//   - off: nothing (the pipeline does not wrap the parser at all).
//
// In both, a leading </think> (an empty prefilled block) is dropped, and so
// is an empty block (<think>\n\n</think>, which Qwen3 echoes when thinking
// is off): no reasoning events. Blanks at the start of the reasoning are
// skipped; after </think>, the blanks that separate the answer are
// trimmed, and the rest goes to the format parser, so that under format auto the format is detected from
// what follows the reasoning. Reasoning and answer are never glued.
//
// A leading <think> followed only by blanks when native reasoning arrives
// is an echo (PARSING.md OA04): the provider parsed the reasoning itself,
// so the tag is dropped and what follows is the answer.
//
// For a format whose grammar owns <think> (thinkingml), only prefilled
// reasoning is read here: a <think> block the model writes goes to the
// format parser.
//
// A reply that never closes its reasoning (no </think> by the end) is
// reported as think_unclosed, and what was taken as reasoning is then
// given to the format parser as the answer, from a copy bounded by
// Limits.MaxBlockBytes: a protocol that does not show reasoning (jsonseq)
// would otherwise show nothing, and the usual cause is a model that did not
// reason at all (a wrong prefilled setting). Beyond the bound the copy is
// cut (the violation says how much was repeated); the reasoning itself was
// streamed whole.
//
// Every byte the stage takes (tags, blanks, reasoning) is echoed as
// KindRaw, and the format parser echoes the rest, so the raw reply is the
// content as written. Offsets of the format parser's violations are reply
// offsets.
package thinktags

import (
	"regexp"
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// CodeThinkUnclosed reports a reply that ended inside its reasoning: the
// reasoning is repeated as the answer (see the package comment).
const CodeThinkUnclosed = "think_unclosed"

const (
	openTag  = "<think>"
	closeTag = "</think>"
	// maxLeadBlank bounds the blanks held before a leading tag: beyond
	// it the content does not start with one.
	maxLeadBlank = 64
	maxHeld      = maxLeadBlank + len(closeTag)
)

// state is the stage's position in the content.
type state uint8

const (
	stInit   state = iota // no byte yet: the mode for this reply is not fixed
	stLead                // blanks and a possible leading tag, held
	stReason              // inside the reasoning
	stAfter               // after </think>: blanks before the answer
	stPass                // everything goes to the format parser
)

// Parser is the think-tags stage in front of a format parser. It
// implements transform.Parser. The zero value is not usable: call New.
type Parser struct {
	inner  transform.Parser
	models []*regexp.Regexp // the route's think_prefilled patterns
	mode   transform.ThinkTags
	owns   bool // the inner format's grammar owns <think>
	max    int  // Limits.MaxBlockBytes, the bound of the reasoning copy

	emit    transform.Emit // the caller's, during Feed and Close
	forward transform.Emit // the inner parser's events, bound once

	prefilled bool // this reply starts inside <think>
	st        state
	off       int64 // reply offset of the next byte to handle
	base      int64 // reply offset of the inner parser's first byte
	replaying bool  // the inner parser is reading the reasoning copy

	// The lead: blanks, then the bytes of a leading tag.
	held   [maxHeld]byte
	replay [maxHeld]byte // the held bytes, as the reasoning reads them
	n      int           // bytes held
	tag    int           // bytes of the tag matched, at the end of held
	closer bool
	native bool // native reasoning was seen
	echo   bool // native reasoning arrived while a leading <think> was held

	// The reasoning.
	opener    bool // a <think> tag opened it
	opened    bool // KindReasoningStart was sent
	closing   int  // bytes of </think> matched, held
	carry     parsekit.RuneCarry
	raw       parsekit.RawEcho
	copy      []byte // what was sent as reasoning, up to max
	cut       bool   // the copy reached max
	reasonOff int64  // reply offset of the first reasoning byte
}

// New returns the stage for mode in front of inner. owns says inner's
// grammar handles <think> itself (the format table's OwnsThink).
func New(inner transform.Parser, mode transform.ThinkTags, owns bool, limits transform.Limits) *Parser {
	t := &Parser{inner: inner, mode: mode, owns: owns, max: limits.WithDefaults().MaxBlockBytes}
	t.forward = t.fromInner
	t.Reset()
	return t
}

// Inner returns the format parser the stage feeds.
func (t *Parser) Inner() transform.Parser { return t.inner }

// NoteNativeCalls passes the pipeline's word that native tool calls
// carried the reply to the format parser (transform.NativeCallsNoter).
func (t *Parser) NoteNativeCalls() {
	if n, ok := t.inner.(transform.NativeCallsNoter); ok {
		n.NoteNativeCalls()
	}
}

// Reset readies t for a new reply, and its format parser too.
func (t *Parser) Reset() {
	t.inner.Reset()
	*t = Parser{
		inner: t.inner, mode: t.mode, owns: t.owns, max: t.max, forward: t.forward, models: t.models,
		prefilled: t.mode == transform.ThinkTagsPrefilled,
		copy:      t.copy[:0],
	}
}

// AddPrefilled adds the route's model-name patterns (think_prefilled,
// transform.ParserOptions.ThinkPrefilled) to the families that auto reads
// as prefilled. It returns t.
func (t *Parser) AddPrefilled(patterns []*regexp.Regexp) *Parser {
	t.models = patterns
	return t
}

// Routed tells the stage the model the upstream reported, before the
// content: under auto, a family whose template opens <think> makes the
// reply prefilled (Families, and the route's patterns).
func (t *Parser) Routed(model string) {
	if t.mode != transform.ThinkTagsAuto || t.st != stInit {
		return
	}
	if PrefillsThink(model) {
		t.prefilled = true
		return
	}
	for _, re := range t.models {
		if model != "" && re.MatchString(model) {
			t.prefilled = true
			return
		}
	}
}

// NativeReasoning tells the stage that the upstream sent reasoning in its
// own field (reasoning_content): the content's reasoning, if any, was
// parsed already.
func (t *Parser) NativeReasoning() {
	t.native = true
	if t.st == stLead && t.n > 0 || t.st == stReason && t.opener && !t.opened {
		t.echo = true
	}
}

// Feed consumes the next bytes of the content.
func (t *Parser) Feed(p []byte, emit transform.Emit) {
	// Once everything goes to the format parser from the reply's first
	// byte on, the stage has nothing to add to its events (no offset to
	// move, no echo to drop): they go to the caller directly, which saves
	// a call per event on the hot path.
	if t.st == stPass && t.base == 0 && !t.replaying {
		t.inner.Feed(p, emit)
		t.off += int64(len(p))
		return
	}
	t.emit = emit
	if t.st == stInit && len(p) > 0 {
		t.st = stLead
		if t.owns && !t.prefilled {
			t.st = stPass
		}
	}
	t.run(p, t.off)
	t.off += int64(len(p))
	t.emit = nil
}

// run handles p, whose first byte is at reply offset base, in the states
// it goes through.
func (t *Parser) run(p []byte, base int64) {
	for len(p) > 0 {
		var rest []byte
		switch t.st {
		case stLead:
			rest = t.lead(p, base)
		case stReason:
			rest = t.reasoning(p, base)
		case stAfter:
			rest = t.after(p, base)
		default:
			t.toInner(p)
		}
		base += int64(len(p) - len(rest))
		p = rest
	}
}

// Close ends the content: held bytes are released, unclosed reasoning is
// ended and repeated as the answer, and the format parser is closed.
func (t *Parser) Close(emit transform.Emit) {
	t.emit = emit
	if t.st == stLead {
		t.leadEnd()
	}
	if t.st == stReason {
		t.reasoningEnd()
	}
	t.raw.Close(t.emit)
	t.inner.Close(t.forward)
	t.emit = nil
}

// consume echoes bytes the stage takes as raw text.
func (t *Parser) consume(b []byte) { t.raw.Feed(b, t.emit) }

// toInner feeds b to the format parser.
func (t *Parser) toInner(b []byte) {
	if len(b) > 0 {
		t.inner.Feed(b, t.forward)
	}
}

// fromInner passes the format parser's events on, with reply offsets. The
// raw text of the reasoning copy was echoed already, as reasoning.
func (t *Parser) fromInner(ev transform.Event) {
	switch ev.Kind {
	case transform.KindRaw:
		if t.replaying {
			return
		}
	case transform.KindViolation:
		ev.Offset += t.base
	}
	t.emit(ev)
}

// pass hands the rest of the content to the format parser, starting with
// held, whose first byte is at reply offset start.
func (t *Parser) pass(held []byte, start int64) {
	t.st = stPass
	t.base = start
	t.toInner(held)
}

// reasoningEnd ends reasoning that the reply never closed: reported, and
// repeated as the answer through the format parser.
func (t *Parser) reasoningEnd() {
	if t.closing > 0 {
		if !t.opened && !t.begin(t.off-int64(t.closing)) {
			t.pass(closeTagBytes[:t.closing], t.off-int64(t.closing))
			return
		}
		t.text(closeTagBytes[:t.closing])
		t.closing = 0
	}
	if out := t.carry.Flush(); len(out) > 0 {
		t.reason(out)
	}
	if !t.opened {
		if t.opener && !t.echo {
			t.emit(transform.Event{Kind: transform.KindViolation, Code: CodeThinkUnclosed, Offset: t.off,
				Text: []byte("the reply ended inside <think>, with no reasoning")})
		}
		return
	}
	t.emit(transform.Event{Kind: transform.KindReasoningEnd})
	detail := "the reply never closed its reasoning with </think>: it is repeated as the answer"
	if t.cut {
		detail = "the reply never closed its reasoning with </think>: its first " +
			strconv.Itoa(len(t.copy)) + " bytes are repeated as the answer (max_block)"
	}
	t.emit(transform.Event{Kind: transform.KindViolation, Code: CodeThinkUnclosed, Offset: t.off, Text: []byte(detail)})
	t.st = stPass
	t.base = t.reasonOff
	t.replaying = true
	t.toInner(t.copy)
}

var closeTagBytes = []byte(closeTag)
