package thinkingml

import (
	"bytes"

	"github.com/llmstream/llmstream/transform/serp"
)

// commentScan is the progress through a held "<!--" in <final>.
type commentScan struct {
	// ws counts whitespace after "<!--"; matched counts bytes of serpOpen
	// matched after it; body says serpOpen is complete and the scanner
	// looks for "-->".
	ws, matched int
	body        bool
}

// enterComment starts holding a "<!--" (tag, at off) that may open the
// serp_queries comment (specs/000 §4, PARSING.md §5.4). The whitespace held
// before it stays held: it goes with the comment if the comment goes.
func (p *Parser) enterComment(tag []byte, off int64) {
	p.block, p.blockOff = append(p.block[:0], tag...), off
	p.cm = commentScan{}
	p.st = stComment
}

// scanComment takes bytes of b from i while in stComment and returns the
// index of the first byte not taken. The comment is held only while it
// may be the serp_queries comment: any other comment is released as answer
// text as soon as it differs (TM28), so only that one comment costs
// memory, bounded by Limits.MaxBlockBytes.
func (p *Parser) scanComment(b []byte, i int) int {
	if p.cm.body {
		j := bytes.IndexByte(b[i:], '>')
		end := len(b)
		if j >= 0 {
			end = i + j + 1
		}
		if !p.growBlock(b[i:end]) {
			return end
		}
		if j >= 0 {
			p.commentGt(p.base + int64(end))
		}
		return end
	}
	for i < len(b) {
		c := b[i]
		switch {
		case p.cm.matched == 0 && isSpace(c) && p.cm.ws < maxSpace:
			p.cm.ws++
		case c == serpOpen[p.cm.matched]:
			p.cm.matched++
		default:
			p.releaseComment()
			return i
		}
		if !p.growBlock(b[i : i+1]) {
			return i + 1
		}
		i++
		if p.cm.matched == len(serpOpen) {
			p.cm.body = true
			return i
		}
	}
	return i
}

// growBlock appends b to the held comment, or ends the stream if the
// comment outgrows Limits.MaxBlockBytes.
func (p *Parser) growBlock(b []byte) bool {
	if len(p.block)+len(b) > p.maxBlock {
		p.block = append(p.block, b[:p.maxBlock-len(p.block)]...)
		p.blockTooLong("the serp_queries comment is longer than max_block bytes")
		return false
	}
	p.block = append(p.block, b...)
	return true
}

// releaseComment gives up a held comment: it is answer text after all.
func (p *Parser) releaseComment() {
	p.st = stFinal
	p.finalText(p.block, p.blockOff)
	p.block = p.block[:0]
}

// commentGt checks the held comment, which just took a '>' ending at
// offset end, for its end: "-->", or a "</final>" the model wrote without
// closing the comment.
func (p *Parser) commentGt(end int64) {
	blk := p.block
	switch {
	case bytes.HasSuffix(blk, []byte("-->")):
		p.endComment()
	case bytes.HasSuffix(blk, []byte("</final>")):
		n := len(blk) - len("</final>")
		p.violation(CodeUnterminatedComment, p.blockOff, nil)
		p.st = stFinal
		p.finalText(blk[:n], p.blockOff)
		p.endFinal(blk[n:], end-int64(len("</final>")))
		p.block = p.block[:0]
	}
}

// endComment handles a complete comment: a well-formed serp_queries
// comment is removed from the answer, with the whitespace before it, and
// becomes one KindSerpQueries (TM27); a malformed one is reported and
// stays answer text (TM29).
func (p *Parser) endComment() {
	blk := p.block
	inner := blk[len(commentOpen) : len(blk)-len("-->")]
	inner = inner[skipSpace(inner):trimSpaceEnd(inner)]
	list, ok := []string(nil), false
	if len(inner) >= len(serpOpen)+len(serpClose) && bytes.HasSuffix(inner, []byte(serpClose)) {
		list, ok = decodeQueries(inner[len(serpOpen) : len(inner)-len(serpClose)])
	}
	switch {
	case !ok:
		p.violation(CodeSerpQueriesJSON, p.blockOff, nil)
		p.releaseComment()
		return
	case p.cur.serpFound:
		p.violation(CodeDuplicateSerpQueries, p.blockOff, nil)
		p.releaseComment()
		return
	}
	p.dropSpace()
	p.skip(blk)
	serp.EmitQueries(list, p.blockOff, p.emit)
	p.cur.serpFound, p.cur.afterSerp = true, true
	p.block = p.block[:0]
	p.st = stFinal
}
