package jsonl

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/serp"
)

// sequence tracks the JSONSeq event order (specs/001 §2) and the sections
// open in the events emitted, which it keeps paired.
type sequence struct {
	summary      bool // serp_summary seen
	thinking     bool // thinking_start seen
	thinkingOpen bool
	final        bool // final_delta seen
	queries      bool // serp_queries seen
	finalEnd     bool // final_end seen

	phaseOpen bool
	phase     int // the open phase's id
	lastPhase int // the last phase_start id

	answerOpen bool
	answered   bool // an answer section was ever opened
}

// check reports a breach of the order of specs/001 §2 by ev.
func (s *sequence) check(p *Parser, ev event, off int64) {
	name := eventNames[ev]
	if s.finalEnd {
		p.violation(CodeEventAfterFinalEnd, name, off)
		return
	}
	var bad bool
	switch ev {
	case evSerpSummary:
		bad = s.summary || s.thinking || s.final
	case evThinkingStart:
		bad = s.thinking || s.final
	case evPhaseStart, evPhaseDelta, evThinkingEnd:
		bad = !s.thinkingOpen
	case evFinalDelta:
		bad = s.thinkingOpen || s.queries
	case evSerpQueries:
		bad = !s.final || s.queries
	case evFinalEnd:
		bad = !s.final
	}
	if bad {
		p.violation(CodeEventOrder, name, off)
	}
}

// open checks and opens a streaming event (phase_delta, final_delta).
func (s *sequence) open(p *Parser, o *object) {
	s.check(p, o.ev, o.off)
	if o.ev == evFinalDelta {
		s.final = true
		p.openAnswer()
		return
	}
	if s.phaseOpen && o.idOK && o.id == s.phase {
		return
	}
	p.violation(CodePhaseDeltaWithoutStart, nil, o.off)
	if s.phaseOpen {
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
		p.emit(transform.Event{Kind: transform.KindSerpSummary, Text: o.hold})
	case evThinkingStart:
		s.thinking = true
		if !s.thinkingOpen {
			s.thinkingOpen = true
			p.emit(transform.Event{Kind: transform.KindThinkingStart})
		}
	case evPhaseStart:
		title := o.title
		if len(title) == 0 {
			p.violation(CodeEmptyTitle, nil, o.off)
			title = p.title
		}
		id := o.id
		if !o.idOK || o.id <= s.lastPhase {
			p.violation(CodePhaseOrder, nil, o.off)
			if !o.idOK {
				id = s.lastPhase + 1
			}
		}
		s.closePhase(p)
		s.openPhase(p, id, title)
	case evThinkingEnd:
		if s.thinkingOpen {
			s.closePhase(p)
			s.thinkingOpen = false
			p.emit(transform.Event{Kind: transform.KindThinkingEnd})
		}
	case evSerpQueries:
		s.queries = true
		// specs/001 §1.1 and §6 item 5 ask for the query rules of
		// specs/000 §4, so the list is cleaned and reported as
		// thinkingml's is.
		serp.EmitQueries(o.queries, o.off, p.emit)
	case evFinalEnd:
		s.finalEnd = true
		if !s.answered {
			p.openAnswer()
		}
		s.closeAnswer(p)
	}
}

func (s *sequence) openPhase(p *Parser, id int, title []byte) {
	s.phaseOpen, s.phase = true, id
	s.lastPhase = max(s.lastPhase, id)
	p.emit(transform.Event{Kind: transform.KindPhaseStart, Index: id, Text: title})
}

func (s *sequence) closePhase(p *Parser) {
	if s.phaseOpen {
		s.phaseOpen = false
		p.emit(transform.Event{Kind: transform.KindPhaseEnd, Index: s.phase})
	}
}

func (s *sequence) closeAnswer(p *Parser) {
	if s.answerOpen {
		s.answerOpen = false
		p.emit(transform.Event{Kind: transform.KindAnswerEnd})
	}
}

// closeAll closes every open section.
func (s *sequence) closeAll(p *Parser) {
	s.closePhase(p)
	if s.thinkingOpen {
		s.thinkingOpen = false
		p.emit(transform.Event{Kind: transform.KindThinkingEnd})
	}
	s.closeAnswer(p)
}

// finish reports, at the end of the reply, the events it lacked, then
// closes what is open.
func (s *sequence) finish(p *Parser) {
	end := p.off
	if !s.thinking {
		p.violation(CodeMissingThinkingStart, nil, end)
	}
	if s.thinkingOpen {
		p.violation(CodeMissingThinkingEnd, nil, end)
	}
	if !s.finalEnd {
		p.violation(CodeMissingFinalEnd, nil, end)
	}
	s.closeAll(p)
}

// openAnswer opens the answer section if it is not open.
func (p *Parser) openAnswer() {
	if !p.seq.answerOpen {
		p.seq.answerOpen, p.seq.answered = true, true
		p.emit(transform.Event{Kind: transform.KindAnswerStart})
	}
}

// answerText emits answer text, opening the answer if needed.
func (p *Parser) answerText(text []byte) {
	if len(text) == 0 {
		return
	}
	p.openAnswer()
	p.emit(transform.Event{Kind: transform.KindAnswerDelta, Text: text})
}
