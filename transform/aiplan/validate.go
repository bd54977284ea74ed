package aiplan

import "github.com/llmstream/llmstream/transform/jsonstream"

// The response modes of specs/003 (AIResponseMode).
const (
	modeToolExecution = "TOOL_EXECUTION"
	modeKnowledgeQA   = "KNOWLEDGE_QA"
	modeGeneralChat   = "GENERAL_CHAT"
)

var (
	detailDirectNotNull = []byte("TOOL_EXECUTION needs direct_response null")
	detailNoToolCalls   = []byte("TOOL_EXECUTION needs at least one tool call")
	detailNoDirect      = []byte("KNOWLEDGE_QA and GENERAL_CHAT need a direct_response")
	detailToolCalls     = []byte("KNOWLEDGE_QA and GENERAL_CHAT need tool_calls empty")
)

// validate checks the complete object (specs/003 验证规则); off is its
// closing brace.
func (p *Parser) validate(off int64) {
	pl := &p.plan
	for _, f := range required {
		if !pl.seen[f] {
			p.Violation(CodeMissingField, fieldNames[f], off)
		}
	}
	if pl.seen[fThought] && pl.types[fThought] == jsonstream.TypeString && pl.thoughtLen == 0 {
		p.Violation(CodeEmptyThought, nil, off)
	}
	if !pl.seen[fMode] || pl.types[fMode] != jsonstream.TypeString {
		return
	}
	mode := pl.mode.Bytes()
	switch {
	case pl.mode.TooLong():
		p.Violation(CodeBadResponseMode, mode, off)
	case string(mode) == modeToolExecution:
		if pl.seen[fDirect] && pl.types[fDirect] != jsonstream.TypeNull {
			p.Violation(CodeInconsistentMode, detailDirectNotNull, off)
		}
		if pl.calls == 0 {
			p.Violation(CodeInconsistentMode, detailNoToolCalls, off)
		}
	case string(mode) == modeKnowledgeQA, string(mode) == modeGeneralChat:
		// A direct_response of the wrong type was reported as such, and
		// its text answered.
		if pl.directLen == 0 {
			p.Violation(CodeInconsistentMode, detailNoDirect, off)
		}
		if pl.calls > 0 {
			p.Violation(CodeInconsistentMode, detailToolCalls, off)
		}
	default:
		p.Violation(CodeBadResponseMode, mode, off)
	}
}
