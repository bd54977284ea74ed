package thinkingml

import "github.com/llmstream/llmstream/transform"

// text routes text b, which starts at offset off, by the grammar state.
// b is borrowed: from the input, the held candidate or a held block.
func (p *Parser) text(b []byte, off int64) {
	if len(b) == 0 {
		return
	}
	switch p.st {
	case stTop:
		p.topText(b, off)
	case stThink:
		p.delta(transform.KindReasoningDelta, b)
	case stSerp, stTitle:
		p.holdBlock(b)
	case stThinking:
		p.thinkingText(b, off)
	case stPhaseHead:
		p.headText(b, off)
	case stPhase:
		p.delta(transform.KindPhaseDelta, b)
	case stFinal:
		p.finalText(b, off)
	}
}

// topText handles text outside every block. Whitespace there is
// structural (TM04, TM05), except before text that follows answer text
// (after </final>, a code sample's </final> in the answer among them):
// there it is the answer's, held until the text shows that it is, so
// that the words around the markup are not glued together (issue 22).
// Anything else becomes answer text, so that a reply that ignored the
// format still reaches the client, and is reported once per run (TM25,
// TM33). The run ends at the next structural tag.
func (p *Parser) topText(b []byte, off int64) {
	if !p.cur.stray {
		i := skipSpace(b)
		if p.cur.answered {
			p.holdTopSpace(b[:i])
		} else {
			p.skip(b[:i])
		}
		if i == len(b) {
			return
		}
		code := CodeUnexpectedText
		if p.cur.finalDone {
			code = CodeTrailingText
		}
		p.violation(code, off+int64(i), nil)
		p.emitKind(transform.KindAnswerStart)
		p.cur.stray = true
		p.delta(transform.KindAnswerDelta, p.space)
		p.space = p.space[:0]
		b = b[i:]
	}
	p.delta(transform.KindAnswerDelta, b)
}

// holdTopSpace holds whitespace between answer text and what follows at
// top level, in blocks of maxSpace bytes: a full block is dropped when
// more whitespace arrives, so that the outcome depends only on the run's
// length, not on how it was cut.
func (p *Parser) holdTopSpace(ws []byte) {
	for len(ws) > 0 {
		if len(p.space) == cap(p.space) {
			p.dropSpace()
		}
		n := min(cap(p.space)-len(p.space), len(ws))
		p.space = append(p.space, ws[:n]...)
		ws = ws[n:]
	}
}

// closeStray ends the answer opened by stray top-level text.
func (p *Parser) closeStray() {
	if p.cur.stray {
		p.cur.stray = false
		p.emitKind(transform.KindAnswerEnd)
	}
}

// thinkingText handles text inside <thinking> outside any phase:
// whitespace is structural; anything else opens an implicit phase titled
// ReasoningTitle, which the next <phase> or </thinking> closes.
func (p *Parser) thinkingText(b []byte, off int64) {
	i := skipSpace(b)
	p.skip(b[:i])
	if i == len(b) {
		return
	}
	p.violation(CodeTextOutsidePhase, off+int64(i), nil)
	p.doc.lastID++
	p.doc.usedID(p.doc.lastID)
	p.cur.implicit = true
	p.phaseStart(p.doc.lastID, p.reasoningTitle())
	p.st = stPhase
	p.delta(transform.KindPhaseDelta, b[i:])
}

// headText handles text between <phase> and <title>: whitespace is
// structural; anything else starts the phase without a title.
func (p *Parser) headText(b []byte, off int64) {
	i := skipSpace(b)
	p.skip(b[:i])
	if i == len(b) {
		return
	}
	p.startUntitled(off + int64(i))
	p.delta(transform.KindPhaseDelta, b[i:])
}

// startUntitled starts the announced phase titled ReasoningTitle because
// no <title> came first.
func (p *Parser) startUntitled(off int64) {
	p.violation(CodeMissingTitle, off, nil)
	p.phaseStart(p.cur.phase, p.reasoningTitle())
	p.st = stPhase
}

// holdBlock appends text to the held <serp> or <title>.
func (p *Parser) holdBlock(b []byte) {
	if len(p.block)+len(b) > p.maxBlock {
		p.block = append(p.block, b[:p.maxBlock-len(p.block)]...)
		p.blockTooLong("a <serp> or <title> block is longer than max_block bytes")
		return
	}
	p.block = append(p.block, b...)
}

// finalText handles answer text. It is verbatim, except that a run of
// whitespace is held until the next byte tells whether a serp_queries
// comment follows, which removes it with the comment (TM27).
func (p *Parser) finalText(b []byte, off int64) {
	k := trimSpaceEnd(b)
	if k > 0 {
		p.releaseSpace(off + int64(skipSpace(b)))
		p.delta(transform.KindAnswerDelta, b[:k])
	}
	p.holdSpace(b[k:])
}

// holdSpace adds whitespace to the held run. The run is held in blocks of
// maxSpace bytes: a full block is released when more whitespace arrives,
// so the outcome depends only on the run's length, not on how it was cut.
func (p *Parser) holdSpace(ws []byte) {
	for len(ws) > 0 {
		if len(p.space) == cap(p.space) {
			if p.cur.afterSerp {
				// Whitespace after the comment is structural.
				p.skip(p.space)
			} else {
				p.delta(transform.KindAnswerDelta, p.space)
			}
			p.space = p.space[:0]
		}
		n := min(cap(p.space)-len(p.space), len(ws))
		p.space = append(p.space, ws[:n]...)
		ws = ws[n:]
	}
}

// releaseSpace emits the held whitespace as answer text because text
// follows it at offset off; text after the serp_queries comment is
// reported (TM32).
func (p *Parser) releaseSpace(off int64) {
	if p.cur.afterSerp {
		p.cur.afterSerp = false
		if !p.cur.afterReported {
			p.cur.afterReported = true
			p.violation(CodeContentAfterSerpQueries, off, nil)
		}
	}
	p.delta(transform.KindAnswerDelta, p.space)
	p.space = p.space[:0]
}

// dropSpace discards the held whitespace as structural.
func (p *Parser) dropSpace() {
	p.skip(p.space)
	p.space = p.space[:0]
}
