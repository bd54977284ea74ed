package finalresult

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
)

// The statuses of specs/004 §7.2 (FinalResult.status).
const (
	statusAnswerReady   = "answer_ready"
	statusArtifactReady = "artifact_ready"
	statusClarifyNeeded = "clarify_needed"
)

// endResult checks the complete object (specs/004 §7.3.1 rules 1 and 2,
// and the model's required fields) and sends its clarify; off is its
// closing brace.
func (p *Parser) endResult(off int64) {
	r := &p.result
	r.ended = true
	for _, f := range [...]int{fStatus, fMessage} {
		if !r.seen[f] {
			p.Violation(CodeMissingField, fieldNames[f], off)
		}
	}
	if !r.seen[fStatus] || r.statusType != jsonstream.TypeString {
		return
	}
	status := r.status.Bytes()
	switch {
	case r.status.TooLong():
		p.Violation(CodeBadStatus, status, off)
	case string(status) == statusAnswerReady:
	case string(status) == statusArtifactReady:
		if !r.hasArtifacts {
			p.Violation(CodeArtifactReadyWithoutArtifacts, nil, off)
		}
	case string(status) == statusClarifyNeeded:
		if !r.clarify || len(r.question) == 0 {
			p.Violation(CodeClarifyWithoutQuestion, nil, off)
			return
		}
		p.Emit(transform.Event{Kind: transform.KindClarify, Clarify: &transform.Clarify{
			Question: string(r.question),
			Options:  append([]string(nil), r.options...),
			Hint:     string(r.hint),
		}})
	default:
		p.Violation(CodeBadStatus, status, off)
	}
}
