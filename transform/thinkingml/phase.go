package thinkingml

import "github.com/llmstream/llmstream/transform/parsekit"

// actPhase handles a complete <phase …> tag at off, in <thinking> with no
// phase open (phaseTag and headTag close an open one first). The phase
// starts at its </title> or first text; here it only gets its id
// (specs/000 §3, TM20–TM22).
func (p *Parser) actPhase(tag []byte, off int64) {
	p.skip(tag)
	d := &p.doc
	d.realPhases++
	a := &p.m.attrs
	plain := p.m.mode != mAttrs // "<phase>"
	canonical := !plain && a.count == 1 && a.hasID && a.idQuote == '"' &&
		a.nameStart == len("<phase ") && a.idStart == len(`<phase id="`) && a.idEnd == len(tag)-2
	if !plain && !canonical {
		p.violation(CodeAttrSyntax, off, tag)
	}
	var val []byte
	if !plain && a.hasID && a.idStart >= 0 {
		val = tag[a.idStart:a.idEnd]
	}
	id, ok := parsekit.ParsePhaseID(val)
	switch {
	case !ok:
		p.violation(CodeBadPhaseID, off, val)
		id = d.lastID + 1
		d.usedID(id)
	case d.usedID(id):
		p.violation(CodeDuplicatePhaseID, off, val)
	case id != d.lastID+1:
		p.violation(CodePhaseOrder, off, val)
	}
	d.lastID = id
	p.cur.phase, p.cur.implicit = id, false
	p.st = stPhaseHead
}
