package jsonformat

import "github.com/llmstream/llmstream/transform"

// sections tracks the sections open in the events emitted, so that every
// start gets its end (transform.Kind: starts and ends come in pairs).
type sections struct {
	thinking bool
	phaseOn  bool
	phase    int  // the open phase's id
	answerOn bool // the answer is open
	answered bool // the answer was opened in this reply
	texted   bool // answer text was emitted in this reply
}

// OpenThinking opens the phased reasoning section if it is not open.
func (b *Base) OpenThinking() {
	if !b.thinking {
		b.thinking = true
		b.emit(transform.Event{Kind: transform.KindThinkingStart})
	}
}

// CloseThinking closes the open phase, then the reasoning section, if
// they are open.
func (b *Base) CloseThinking() {
	b.ClosePhase()
	if b.thinking {
		b.thinking = false
		b.emit(transform.Event{Kind: transform.KindThinkingEnd})
	}
}

// ThinkingOpen reports whether the reasoning section is open.
func (b *Base) ThinkingOpen() bool { return b.thinking }

// OpenPhase opens phase id titled title. A phase must not be open.
func (b *Base) OpenPhase(id int, title []byte) {
	b.phaseOn, b.phase = true, id
	b.emit(transform.Event{Kind: transform.KindPhaseStart, Index: id, Text: title})
}

// PhaseText emits text of the open phase.
func (b *Base) PhaseText(text []byte) {
	b.emit(transform.Event{Kind: transform.KindPhaseDelta, Index: b.phase, Text: text})
}

// ClosePhase closes the open phase, if any.
func (b *Base) ClosePhase() {
	if b.phaseOn {
		b.phaseOn = false
		b.emit(transform.Event{Kind: transform.KindPhaseEnd, Index: b.phase})
	}
}

// Phase returns the open phase's id, and whether one is open.
func (b *Base) Phase() (id int, open bool) { return b.phase, b.phaseOn }

// OpenAnswer opens the answer if it is not open.
func (b *Base) OpenAnswer() {
	if !b.answerOn {
		b.answerOn, b.answered = true, true
		b.emit(transform.Event{Kind: transform.KindAnswerStart})
	}
}

// AnswerText emits answer text, opening the answer if needed. Empty text
// emits nothing and opens nothing.
func (b *Base) AnswerText(text []byte) {
	if len(text) == 0 {
		return
	}
	b.OpenAnswer()
	b.texted = true
	b.emit(transform.Event{Kind: transform.KindAnswerDelta, Text: text})
}

// proseText emits the model's text around its JSON as answer text. Blanks
// at the start of the answer are dropped: there they stand between markup
// (the object, its fence) and the answer's first text (issue 22).
func (b *Base) proseText(text []byte) {
	if !b.texted {
		i := 0
		for i < len(text) && isBlank(text[i]) {
			i++
		}
		text = text[i:]
	}
	b.AnswerText(text)
}

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// CloseAnswer closes the answer if it is open.
func (b *Base) CloseAnswer() {
	if b.answerOn {
		b.answerOn = false
		b.emit(transform.Event{Kind: transform.KindAnswerEnd})
	}
}

// Texted reports whether answer text was emitted in this reply: blanks
// the model wrote between markup and its text are the answer's only after
// it (issue 22).
func (b *Base) Texted() bool { return b.texted }

// Answered reports whether the answer was opened in this reply.
func (b *Base) Answered() bool { return b.answered }

// CloseSections closes every open section: the phase, the reasoning, the
// answer.
func (b *Base) CloseSections() {
	b.CloseThinking()
	b.CloseAnswer()
}
