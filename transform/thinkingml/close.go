package thinkingml

import "github.com/llmstream/llmstream/transform"

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

// tagTooLong ends the stream because a <phase> tag's attributes outgrew
// Limits.MaxTagBytes; the held bytes are text first, so none is lost.
func (p *Parser) tagTooLong() {
	tag, off := p.pend, p.pendOff
	p.pend = p.pend[:0]
	end := off + int64(len(tag))
	p.text(tag, off)
	if p.st != stDead {
		p.fatal(transform.CodeTagTooLong, off, end, "a <phase> tag is longer than max_tag bytes")
	}
}

// blockTooLong ends the stream because the held block, which is the input
// from blockOff on, outgrew Limits.MaxBlockBytes. The raw reply is emitted
// up to the first byte over the limit, wherever the chunks were cut.
func (p *Parser) blockTooLong(msg string) {
	p.fatal(transform.CodeBlockTooLong, p.blockOff, p.blockOff+int64(p.maxBlock)+1, msg)
}
