package thinkingml

import "github.com/llmstream/llmstream/transform"

// act handles the complete candidate in pend and empties pend.
func (p *Parser) act() {
	tag, off := p.pend, p.pendOff
	p.pend = p.pend[:0] // tag still views the bytes; nothing refills pend here
	switch p.m.mode {
	case mMarker:
		// TM17: the marker anywhere but as the whole reply is text.
		p.violation(CodeParsingErrorMarker, off, nil)
		p.text(tag, off)
	case mComment:
		p.enterComment(tag, off)
	case mAttrs: // only entered where <phase> is legal
		if p.m.miscased {
			p.misfit(tag, off, tag[1:len("<phase")])
			return
		}
		p.actTag(tagPhase, tag, off)
	case mSelfClose:
		p.misfit(tag, off, tag[1:len(tag)-2])
	default:
		name := tag[1 : len(tag)-1]
		if p.m.closing {
			name = tag[2 : len(tag)-1]
		}
		id, ok := lookupTag(name, p.m.closing)
		if !ok || !stateRules[p.st].tags.has(id) {
			p.misfit(tag, off, tag[1:len(tag)-1])
			return
		}
		p.actTag(id, tag, off)
	}
}

// misfit handles a tag-shaped text that is not structural here: it stays
// text, and is reported as unknown (not in the specs/000 §2 whitelist),
// mis-cased (a whitelisted name in other letter case) or misplaced. detail
// is the name, with "/" for a closing tag.
func (p *Parser) misfit(tag []byte, off int64, detail []byte) {
	name := detail
	if len(name) > 0 && name[0] == '/' {
		name = name[1:]
	}
	code := CodeUnknownTag
	if _, ok := lookupTag(name, false); ok {
		code = CodeMisplacedTag
	} else if _, ok := lookupTagFold(name, false); ok {
		code = CodeMiscasedTag
	}
	p.violation(code, off, detail)
	p.text(tag, off)
}

// actTag handles whitelisted tag id, legal in the current state.
func (p *Parser) actTag(id tagID, tag []byte, off int64) {
	if id == tagFinal || id == tagFinalEnd {
		if p.st != stTop && p.st != stSerp && p.st != stFinal {
			p.literalFinal(tag, off)
			return
		}
	}
	switch p.st {
	case stTop:
		p.topTag(id, tag, off)
	case stThink: // </think>; TM06: no newline needed after it
		p.emitKind(transform.KindReasoningEnd)
		p.st = stTop
		p.skip(tag)
	case stSerp:
		p.endSerp()
		p.skip(tag)
		if id != tagSerpEnd {
			// <thinking> or <final> before </serp>.
			p.violation(CodeUnterminatedSerp, off, nil)
			p.topTag(id, nil, off)
		}
	case stThinking:
		p.thinkingTag(id, tag, off)
	case stPhaseHead:
		p.headTag(id, tag, off)
	case stTitle:
		p.titleTag(id, tag, off)
	case stPhase:
		p.phaseTag(id, tag, off)
	case stFinal: // </final>
		p.endFinal(tag, off)
	}
}

// literalFinal handles <final> or </final> inside <think> or <thinking>:
// text, escaped in the raw reply only (CONTRACT.md §4).
func (p *Parser) literalFinal(tag []byte, off int64) {
	esc := escapedFinal
	if tag[1] == '/' {
		esc = escapedFinalEnd
	}
	p.raw.escape(p, off, off+int64(len(tag)), esc)
	p.violation(CodeLiteralFinalTag, off, tag[1:len(tag)-1])
	p.text(tag, off)
}

// topTag handles a tag between blocks. tag is nil when the bytes were
// already reported as skipped.
func (p *Parser) topTag(id tagID, tag []byte, off int64) {
	var b block
	switch id {
	case tagThink:
		b = blockThink
	case tagSerp:
		b = blockSerp
	case tagThinking:
		b = blockThinking
	case tagFinal:
		b = blockFinal
	default:
		// A closer with nothing open (</think> when the prompt opened
		// <think> but the route does not say so, </final> after text no
		// <final> opened) stays text where it stands: dropping it would
		// glue the words around it together (CONTRACT.md §7).
		p.strayClose(tag, off)
		return
	}
	p.dropSpace() // top-level whitespace held before a block is structural
	p.closeStray()
	p.skip(tag)
	if b == blockFinal {
		p.checkBody(off)
	}
	if code := p.doc.open(b); code != "" {
		p.violation(code, off, []byte(blockNames[b]))
	}
	switch b {
	case blockThink:
		p.emitKind(transform.KindReasoningStart)
		p.st = stThink
	case blockSerp:
		p.block, p.blockOff = p.block[:0], off+int64(len(tag))
		p.st = stSerp
	case blockThinking:
		p.emitKind(transform.KindThinkingStart)
		p.st = stThinking
	case blockFinal:
		p.emitKind(transform.KindAnswerStart)
		p.cur.serpFound, p.cur.afterSerp, p.cur.afterReported = false, false, false
		p.space = p.space[:0]
		p.st = stFinal
	}
}

// checkBody reports, at <final> or the end, what specs/000 §5 check 2 and
// 4 require before the answer: a <thinking> block holding a phase.
func (p *Parser) checkBody(off int64) {
	if !p.doc.seen[blockThinking] && !p.doc.reportedThinking {
		p.doc.reportedThinking = true
		p.violation(CodeMissingThinking, off, nil)
	}
	if p.doc.realPhases == 0 && !p.doc.reportedPhase {
		p.doc.reportedPhase = true
		p.violation(CodeMissingPhase, off, nil)
	}
}

// endSerp emits the held <serp> summary, whole and verbatim.
func (p *Parser) endSerp() {
	p.emit(transform.Event{Kind: transform.KindSerpSummary, Text: p.block})
	p.block = p.block[:0]
	p.st = stTop
}

// endThinking closes <thinking>.
func (p *Parser) endThinking(tag []byte) {
	p.skip(tag)
	p.emitKind(transform.KindThinkingEnd)
	p.st = stTop
}

// thinkingTag handles a tag inside <thinking>, outside any phase.
func (p *Parser) thinkingTag(id tagID, tag []byte, off int64) {
	switch id {
	case tagPhase:
		p.actPhase(tag, off)
	case tagThinkingEnd:
		p.endThinking(tag)
	default: // </phase>, </title>
		p.strayClose(tag, off)
	}
}

// strayClose handles a closing tag with nothing to close: it is reported
// and stays text where it stands, which at top level makes it answer text
// and inside <thinking> opens an implicit phase, as any other text there
// (CONTRACT.md §7: tags included).
func (p *Parser) strayClose(tag []byte, off int64) {
	p.violation(CodeStrayCloseTag, off, tag[1:len(tag)-1])
	p.text(tag, off)
}

// headTag handles a tag between <phase> and its title or text.
func (p *Parser) headTag(id tagID, tag []byte, off int64) {
	if id == tagTitle {
		p.skip(tag)
		p.block, p.blockOff = p.block[:0], off+int64(len(tag))
		p.st = stTitle
		return
	}
	// </phase>, </thinking> or <phase>: the phase had neither title nor text.
	p.startUntitled(off)
	p.phaseTag(id, tag, off)
}

// titleTag handles a tag inside <title>.
func (p *Parser) titleTag(id tagID, tag []byte, off int64) {
	if id != tagTitleEnd {
		// </phase> or </thinking> before </title>.
		p.violation(CodeUnterminatedTitle, off, nil)
	}
	p.startTitled(off)
	if id == tagTitleEnd {
		p.skip(tag)
		return
	}
	p.phaseTag(id, tag, off)
}

// startTitled starts the announced phase with the held title, trimmed;
// whitespace only gives ReasoningTitle and empty_title.
func (p *Parser) startTitled(off int64) {
	i, k := skipSpace(p.block), trimSpaceEnd(p.block)
	p.st = stPhase
	if i == len(p.block) {
		p.skip(p.block)
		p.violation(CodeEmptyTitle, off, nil)
		p.phaseStart(p.cur.phase, p.reasoningTitle())
	} else {
		p.skip(p.block[:i])
		p.phaseStart(p.cur.phase, p.block[i:k])
		p.skip(p.block[k:])
	}
	p.block = p.block[:0]
}

// phaseTag handles a tag inside a started phase.
func (p *Parser) phaseTag(id tagID, tag []byte, off int64) {
	switch id {
	case tagTitle:
		p.violation(CodeTitleAfterText, off, nil)
		p.text(tag, off)
		return
	case tagPhaseEnd:
		p.skip(tag)
		p.phaseEnd()
		p.st = stThinking
		return
	}
	// </thinking> or <phase> with the phase open (TM24).
	p.phaseEnd()
	if !p.cur.implicit {
		p.violation(CodeImplicitPhaseClose, off, nil)
	}
	p.st = stThinking
	if id == tagPhase {
		p.actPhase(tag, off)
		return
	}
	p.endThinking(tag)
}

// endFinal closes the answer at the </final> at off.
func (p *Parser) endFinal(tag []byte, off int64) {
	p.finishAnswer(off)
	p.skip(tag)
	p.emitKind(transform.KindAnswerEnd)
	p.cur.finalDone = true
	p.st = stTop
}

// finishAnswer ends the answer text where the answer ends, at off (its
// </final>, or the end of the reply): whitespace held after the
// serp_queries comment goes with the comment, which specs/000 §4 puts
// last; other held whitespace is answer text; and an answer without the
// comment is reported.
func (p *Parser) finishAnswer(off int64) {
	if p.cur.afterSerp {
		p.dropSpace()
	} else {
		p.delta(transform.KindAnswerDelta, p.space)
		p.space = p.space[:0]
	}
	if !p.cur.serpFound {
		p.violation(CodeMissingSerpQueries, off, nil)
	}
}
