package jsonl

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/serp"
)

// sequence tracks the JSONSeq event order (specs/001 §2). The sections
// open in the events emitted are the Parser's jsonformat.Base's, which
// keeps them paired.
type sequence struct {
	summary  bool // serp_summary seen
	thinking bool // thinking_start seen
	final    bool // final_delta seen
	queries  bool // serp_queries seen
	finalEnd bool // final_end seen

	lastPhase int // the last phase_start id
}

// check reports a breach of the order of specs/001 §2 by ev.
func (s *sequence) check(p *Parser, ev event, off int64) {
	name := eventNames[ev]
	if s.finalEnd {
		p.Violation(CodeEventAfterFinalEnd, name, off)
		return
	}
	var bad bool
	switch ev {
	case evSerpSummary:
		bad = s.summary || s.thinking || s.final
	case evThinkingStart:
		bad = s.thinking || s.final
	case evPhaseStart, evPhaseDelta, evThinkingEnd:
		bad = !p.ThinkingOpen()
	case evFinalDelta:
		bad = p.ThinkingOpen() || s.queries
	case evSerpQueries:
		bad = !s.final || s.queries
	case evFinalEnd:
		bad = !s.final
	}
	if bad {
		p.Violation(CodeEventOrder, name, off)
	}
}

// open checks and opens a streaming event (phase_delta, final_delta).
func (s *sequence) open(p *Parser, o *object) {
	s.check(p, o.ev, o.off)
	if o.ev == evFinalDelta {
		s.final = true
		p.OpenAnswer()
		return
	}
	phase, phaseOpen := p.Phase()
	if phaseOpen && o.idOK && o.id == phase {
		return
	}
	p.Violation(CodePhaseDeltaWithoutStart, nil, o.off)
	if phaseOpen {
		return // the text goes to the open phase
	}
	id := o.id
	if !o.idOK {
		id = s.lastPhase + 1
	}
	s.openPhase(p, id, p.title)
}

// event checks and emits a whole-line event.
func (s *sequence) event(p *Parser, o *object) {
	s.check(p, o.ev, o.off)
	switch o.ev {
	case evSerpSummary:
		s.summary = true
		p.Emit(transform.Event{Kind: transform.KindSerpSummary, Text: o.hold})
	case evThinkingStart:
		s.thinking = true
		p.OpenThinking()
	case evPhaseStart:
		title := o.title
		if len(title) == 0 {
			p.Violation(CodeEmptyTitle, nil, o.off)
			title = p.title
		}
		id := o.id
		if !o.idOK || o.id <= s.lastPhase {
			p.Violation(CodePhaseOrder, nil, o.off)
			if !o.idOK {
				id = s.lastPhase + 1
			}
		}
		p.ClosePhase()
		s.openPhase(p, id, title)
	case evThinkingEnd:
		// A phase opened outside the reasoning section (after an
		// event_order breach) is not closed by a thinking_end that closes
		// nothing.
		if p.ThinkingOpen() {
			p.CloseThinking()
		}
	case evSerpQueries:
		s.queries = true
		// specs/001 §1.1 and §6 item 5 ask for the query rules of
		// specs/000 §4, so the list is cleaned and reported as
		// thinkingml's is.
		serp.EmitQueries(o.queries, o.off, p.Emit)
	case evFinalEnd:
		s.finalEnd = true
		if !p.Answered() {
			p.OpenAnswer()
		}
		p.CloseAnswer()
	}
}

func (s *sequence) openPhase(p *Parser, id int, title []byte) {
	s.lastPhase = max(s.lastPhase, id)
	p.OpenPhase(id, title)
}

// finish reports, at the end of the reply, the events it lacked.
func (s *sequence) finish(p *Parser) {
	end := p.Offset()
	if !s.thinking {
		p.Violation(CodeMissingThinkingStart, nil, end)
	}
	if p.ThinkingOpen() {
		p.Violation(CodeMissingThinkingEnd, nil, end)
	}
	if !s.finalEnd {
		p.Violation(CodeMissingFinalEnd, nil, end)
	}
}
