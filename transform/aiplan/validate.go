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
	for f := fThought; f <= fTools; f++ {
		if !pl.seen[f] {
			p.violation(CodeMissingField, fieldNames[f], off)
		}
	}
	if pl.seen[fThought] && pl.types[fThought] == jsonstream.TypeString && pl.thoughtLen == 0 {
		p.violation(CodeEmptyThought, nil, off)
	}
	if !pl.seen[fMode] || pl.types[fMode] != jsonstream.TypeString {
		return
	}
	mode := pl.mode.Bytes()
	switch {
	case pl.mode.TooLong():
		p.violation(CodeBadResponseMode, mode, off)
	case string(mode) == modeToolExecution:
		if pl.seen[fDirect] && pl.types[fDirect] != jsonstream.TypeNull {
			p.violation(CodeInconsistentMode, detailDirectNotNull, off)
		}
		if pl.calls == 0 {
			p.violation(CodeInconsistentMode, detailNoToolCalls, off)
		}
	case string(mode) == modeKnowledgeQA, string(mode) == modeGeneralChat:
		if pl.types[fDirect] != jsonstream.TypeString || pl.directLen == 0 {
			p.violation(CodeInconsistentMode, detailNoDirect, off)
		}
		if pl.calls > 0 {
			p.violation(CodeInconsistentMode, detailToolCalls, off)
		}
	default:
		p.violation(CodeBadResponseMode, mode, off)
	}
}
