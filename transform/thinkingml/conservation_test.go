package thinkingml

import (
	"bytes"
	"fmt"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// conservation feeds chunks to a parser with the skipped hook set and
// checks that the text events interleaved with the skipped spans
// reproduce the input exactly, in order (a prefix of it after a fatal
// error), and that every skipped span is whitespace, a whitelisted tag or
// a serp_queries comment (PARSING.md §5.11: "concatenated text deltas +
// removed markup == input").
func conservation(opts transform.ParserOptions, chunks [][]byte) error {
	var input []byte
	for _, c := range chunks {
		input = append(input, c...)
	}
	var rebuilt []byte
	var evs []transform.Event
	var bad error
	p := New(opts)
	// A closing tag is skipped only if it closes something (CONTRACT.md
	// §7): the structural event right before or right after it ends a
	// section. lastClosed says the last one did; wantClose that the next
	// one must.
	lastClosed, wantClose := false, false
	p.skipped = func(span []byte) {
		if bad == nil {
			bad = checkSkipped(span)
		}
		if bytes.HasPrefix(span, []byte("</")) && !lastClosed {
			wantClose = true
		}
		rebuilt = append(rebuilt, span...)
	}
	synth := false // the last violation gives the next PhaseStart a made-up title
	emit := func(ev transform.Event) {
		evs = append(evs, ev)
		if ev.Kind != transform.KindViolation && ev.Kind != transform.KindRaw {
			lastClosed = closesSection(ev.Kind)
			if wantClose && !lastClosed && bad == nil {
				bad = fmt.Errorf("a closing tag was skipped but closed nothing; next event %s", transformtest.Token(ev))
			}
			wantClose = false
		}
		switch ev.Kind {
		case transform.KindViolation:
			synth = ev.Code == CodeMissingTitle || ev.Code == CodeEmptyTitle || ev.Code == CodeTextOutsidePhase
			return
		case transform.KindPhaseStart:
			if !synth {
				rebuilt = append(rebuilt, ev.Text...)
			}
		case transform.KindReasoningDelta, transform.KindSerpSummary, transform.KindPhaseDelta, transform.KindAnswerDelta:
			rebuilt = append(rebuilt, ev.Text...)
		}
		synth = false
	}
	for _, c := range chunks {
		p.Feed(c, emit)
	}
	p.Close(emit)
	if wantClose && bad == nil {
		bad = fmt.Errorf("the last closing tag was skipped but closed nothing")
	}
	if bad != nil {
		return bad
	}
	if isMarkerReply(input) {
		if len(rebuilt) > 0 {
			return fmt.Errorf("text %q for a <<ParsingError>> reply", rebuilt)
		}
		return nil
	}
	want := input
	if transformtest.Failed(evs) && len(rebuilt) <= len(input) {
		want = input[:len(rebuilt)]
	}
	if !bytes.Equal(rebuilt, want) {
		return fmt.Errorf("text and skipped spans do not rebuild the input:\n want %q\n  got %q", want, rebuilt)
	}
	return nil
}

// checkSkipped reports a skipped span that is not markup.
func checkSkipped(span []byte) error {
	switch {
	case skipSpace(span) == len(span):
		return nil
	case bytes.HasPrefix(span, []byte("<phase")) && span[len(span)-1] == '>':
		return nil
	case bytes.HasPrefix(span, []byte(commentOpen)) && bytes.HasSuffix(span, []byte("-->")) &&
		bytes.Contains(span, []byte(serpOpen)) && bytes.Contains(span, []byte(serpClose)):
		return nil
	}
	for _, t := range tagTable {
		s := "<" + t.name + ">"
		if t.closing {
			s = "</" + t.name + ">"
		}
		if string(span) == s {
			return nil
		}
	}
	return fmt.Errorf("skipped span %q is not whitespace, a whitelisted tag or a serp_queries comment", span)
}

// closesSection reports whether an event of kind k ends what a closing
// tag closes: </think>, </serp>, </title> (the phase starts), </phase>,
// </thinking>, </final>.
func closesSection(k transform.Kind) bool {
	switch k {
	case transform.KindReasoningEnd, transform.KindSerpSummary, transform.KindPhaseStart,
		transform.KindPhaseEnd, transform.KindThinkingEnd, transform.KindAnswerEnd:
		return true
	}
	return false
}
