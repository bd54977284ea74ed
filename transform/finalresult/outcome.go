package finalresult

import "github.com/llmstream/llmstream/transform/jsonstream"

// Outcome is what the reply's FinalResult object said, as the
// terminal-state rules of specs/004 §7.3.1 read it (transform/validate).
type Outcome struct {
	// Ended says the reply held an object read to its closing brace.
	Ended bool
	// Status is the object's status when it is one of the three of
	// specs/004 §7.2, else "".
	Status string
	// Message says the object has a "message" string.
	Message bool
	// ClarifyQuestion says the object has a clarify object with a
	// non-empty question.
	ClarifyQuestion bool
}

// Outcome returns what the reply said; call it after Close, before Reset.
func (p *Parser) Outcome() Outcome {
	r := &p.result
	o := Outcome{
		Ended:           r.ended,
		Message:         r.seen[fMessage] && r.messageType == jsonstream.TypeString,
		ClarifyQuestion: r.clarify && len(r.question) > 0,
	}
	if r.seen[fStatus] && r.statusType == jsonstream.TypeString && !r.status.TooLong() {
		switch s := string(r.status.Bytes()); s {
		case statusAnswerReady, statusArtifactReady, statusClarifyNeeded:
			o.Status = s
		}
	}
	return o
}
