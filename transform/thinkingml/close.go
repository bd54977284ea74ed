package thinkingml

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// Close ends the reply: it releases held bytes as text, closes every open
// section, reports what is unterminated or missing (TM09, TM10, TM30,
// TM34), and emits the rest of the raw reply. Close emits no KindFinish.
func (p *Parser) Close(emit transform.Emit) {
	p.emit = emit
	if p.st == stDead {
		return
	}
	if p.st == stLead && p.leadClose() {
		p.st = stDead
		return
	}
	for len(p.pend) > 0 && p.st != stDead {
		p.diverge() // at the end nothing held can still become a tag
	}
	if p.carry.Pending() && p.st != stDead {
		b := p.carry.Flush()
		off := p.off - int64(len(b))
		p.violation(CodeInvalidUTF8, off, nil)
		p.text(b, off)
	}
	if p.st == stDead {
		return
	}
	p.closeSections(true)
	p.checkBody(p.off)
	if !p.doc.seen[blockFinal] {
		p.violation(CodeMissingFinal, p.off, nil)
	}
	p.raw.flush(p, p.off)
	p.st = stDead
	p.emit = nil
}

// closeSections closes whatever is open, innermost first. At the end of
// the reply (report) held text is released and each unterminated section
// is reported after its end event; before a fatal error only the end
// events are emitted.
func (p *Parser) closeSections(report bool) {
	end := p.off
	v := func(code string) {
		if report {
			p.violation(code, end, nil)
		}
	}
	switch p.st {
	case stTop:
		p.dropSpace()
		p.closeStray()
	case stThink:
		p.emitKind(transform.KindReasoningEnd)
		v(CodeUnterminatedThink)
	case stSerp:
		if report {
			p.endSerp()
			v(CodeUnterminatedSerp)
		}
	case stThinking, stPhaseHead, stTitle, stPhase:
		if report {
			switch p.st {
			case stPhaseHead:
				p.startUntitled(end)
			case stTitle:
				p.startTitled(end)
				v(CodeUnterminatedTitle)
			}
		}
		if p.st == stPhase {
			p.phaseEnd()
			if !p.cur.implicit {
				v(CodeUnterminatedPhase)
			}
		}
		p.emitKind(transform.KindThinkingEnd)
		v(CodeUnterminatedThinking)
	case stComment, stFinal:
		if report {
			if p.st == stComment {
				p.violation(CodeUnterminatedComment, p.blockOff, nil)
				p.releaseComment()
			}
			p.finishAnswer(end)
		}
		p.emitKind(transform.KindAnswerEnd)
		v(CodeUnterminatedFinal)
	}
	p.st = stTop
}

// fatal ends the stream with error code, found at offset off: it closes
// the open sections, emits the raw reply up to offset upTo, and ignores
// all further input (transform.Parser: only limits and the model's
// marker are fatal).
func (p *Parser) fatal(code string, off, upTo int64, msg string) {
	p.closeSections(false)
	p.raw.flush(p, upTo)
	p.raw.stopped = true
	p.emit(transform.Event{Kind: transform.KindError, Code: code, Offset: off, Text: []byte("thinkingml: " + msg)})
	p.st = stDead
}

// tagTooLong releases a held <phase …> tag whose attributes outgrew
// Limits.MaxTagBytes: its bytes are text where it stands, reported as
// tag_too_long (CONTRACT.md §7: a tag candidate longer than max_tag is
// released as text, not fatal). The candidate holds no '<' but its first
// byte (attrLexer fails on one), so nothing in it can start another tag.
func (p *Parser) tagTooLong() {
	tag, off := p.pend, p.pendOff
	p.pend = p.pend[:0] // tag still views the bytes; nothing refills pend here
	p.violation(CodeTagTooLong, off, tag[1:len("<phase")])
	p.text(tag, off)
}

// blockTooLong ends the stream because the held block, which is the input
// from blockOff on, outgrew Limits.MaxBlockBytes; the block holds its
// first MaxBlockBytes bytes. They are delivered first, cut to whole
// characters, as what the block would have become without its end (so
// that text up to the limit is not lost): a <serp> as the summary, a
// <title> as the text of a phase titled ReasoningTitle, the serp_queries
// comment as answer text. The raw reply is emitted as far, so that it
// ends on a whole character too, wherever the chunks were cut.
func (p *Parser) blockTooLong(msg string) {
	held := p.block[:len(p.block)-parsekit.IncompleteSuffix(p.block)]
	switch p.st {
	case stSerp:
		p.emit(transform.Event{Kind: transform.KindSerpSummary, Text: held})
	case stTitle:
		p.violation(CodeMissingTitle, p.blockOff, nil)
		p.phaseStart(p.cur.phase, p.reasoningTitle())
		p.st = stPhase
		p.delta(transform.KindPhaseDelta, held)
	case stComment:
		p.st = stFinal
		p.finalText(held, p.blockOff)
		p.delta(transform.KindAnswerDelta, p.space)
		p.space = p.space[:0]
	}
	p.block = p.block[:0]
	p.fatal(transform.CodeBlockTooLong, p.blockOff, p.blockOff+int64(len(held)), msg)
}
