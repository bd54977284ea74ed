package validate

import (
	"slices"
	"strconv"
	"strings"
)

// The statuses of a FinalResult (specs/004 §7.2).
const (
	StatusAnswerReady   = "answer_ready"
	StatusArtifactReady = "artifact_ready"
	StatusClarifyNeeded = "clarify_needed"
)

// The modes a router may expect (specs/004 §7.2 RouterResult.expected_mode).
const (
	ModeAnswer   = "answer"
	ModeArtifact = "artifact"
	ModeClarify  = "clarify"
)

// ValidMode reports whether m is an expected_mode value; "" (no
// expectation) is valid.
func ValidMode(m string) bool {
	switch m {
	case "", ModeAnswer, ModeArtifact, ModeClarify:
		return true
	}
	return false
}

// Result is what a FinalResult reply said, as the terminal-state rules
// read it.
type Result struct {
	// Complete says the reply was one whole FinalResult object with a
	// valid status and a string message.
	Complete bool
	// Status is the object's status.
	Status string
	// ClarifyQuestion says the object has a clarify with a non-empty
	// question.
	ClarifyQuestion bool
	// Why names what made an incomplete reply incomplete (the format
	// parser's violation codes), for the correction.
	Why string
}

// Terminal checks a FinalResult that ends the turn against the
// terminal-state rules of specs/004 §7.3.1, with ev the loop's evidence,
// tools the artifact tools and expected the router's expectation ("" for
// none). An incomplete reply breaks rule 0 (it is no FinalResult), and
// the others are not checked.
func Terminal(r Result, ev Evidence, tools ArtifactTools, expected string) []Failure {
	if !r.Complete {
		why := ""
		if r.Why != "" {
			why = " (" + r.Why + ")"
		}
		return []Failure{{
			Code: CodeNotFinalResult, Severity: Hard, Call: -1,
			Detail: "the reply is not one complete FinalResult object" + why,
			Correction: "Your reply must be exactly one JSON object " +
				`{"status": "answer_ready" | "artifact_ready" | "clarify_needed", "message": "…", "artifacts": […], "clarify": {"question": "…", "options": […]}}` +
				", and it was not" + why + ". Reply again with that object only.",
		}}
	}
	hasEvent, hasTool := ev.Artifacts > 0, len(ev.ArtifactCalls) > 0
	var fs []Failure
	switch r.Status {
	case StatusArtifactReady:
		// Rule 1: the events decide, the calls only help (§7.3.1 设计原则).
		switch {
		case !hasEvent && !hasTool:
			fs = append(fs, Failure{
				Code: CodeArtifactWithoutEvidence, Severity: Hard, Call: -1,
				Detail: "artifact_ready, but no artifact tool was called in this turn",
				Correction: `You answered with status "artifact_ready", but ` + tools.noCall() +
					` was called in this turn, so there is no artifact. Call the tool that makes it first, or answer with status "answer_ready".`,
			})
		case !hasEvent:
			called := strings.Join(ev.ArtifactCalls, ", ")
			fs = append(fs, Failure{
				Code: CodeArtifactToolFailed, Severity: Hard, Call: -1,
				Detail: "artifact_ready, but the artifact tools called (" + called + ") produced no artifact",
				Correction: `You answered with status "artifact_ready", but the tools called in this turn (` + called +
					`) produced no artifact: their results are missing or report a failure. Do not claim an artifact: ` +
					`call the tool again if it can succeed, or answer with status "answer_ready" and report the failure.`,
			})
		}
	case StatusClarifyNeeded:
		// Rule 2.
		if !r.ClarifyQuestion {
			fs = append(fs, Failure{
				Code: CodeClarifyWithoutQuestion, Severity: Hard, Call: -1,
				Detail: "clarify_needed without a clarify question",
				Correction: `You answered with status "clarify_needed" without a clarify question. ` +
					`Include "clarify": {"question": "…", "options": […]} with the question to ask the user.`,
			})
		}
	case StatusAnswerReady:
		// Rule 3, soft: the router may have been wrong (§7.7).
		if expected == ModeArtifact && !hasEvent && !hasTool {
			fs = append(fs, Failure{
				Code: CodeExpectedArtifact, Severity: Soft, Call: -1,
				Detail: "an artifact was expected, and the reply is answer_ready with no artifact tool called",
				Correction: `This request expects an artifact, but you answered with status "answer_ready" and ` + tools.noCall() +
					` was called. Call the tool that makes the artifact; if none applies, answer again with status "answer_ready".`,
			})
		}
	}
	return fs
}

// Evidence is what the request shows of the current loop (specs/004
// §7.3.1): called_tools restricted to the artifact tools, and the
// artifact events, which a proxy sees as the artifact tools' results.
type Evidence struct {
	// ArtifactCalls names the artifact tools the loop called, each once,
	// in order.
	ArtifactCalls []string
	// Artifacts counts the artifact tools' results that report no failure.
	Artifacts int
}

// AddCall records a call to the artifact tool name, once per name: the
// agent loop's own calls are evidence as the request's are (CONTRACT.md
// §12).
func (ev *Evidence) AddCall(name string) {
	if !slices.Contains(ev.ArtifactCalls, name) {
		ev.ArtifactCalls = append(ev.ArtifactCalls, name)
	}
}

// String describes the evidence for tests and debugging.
func (ev Evidence) String() string {
	return "calls=[" + strings.Join(ev.ArtifactCalls, " ") + "] artifacts=" + strconv.Itoa(ev.Artifacts)
}

// ArtifactTools is the set of tools that make artifacts (specs/004
// ARTIFACT_TOOL_SET). Empty means every tool does.
type ArtifactTools []string

// Has reports whether name is an artifact tool. A result that cannot be
// attributed to a tool (name "") counts only when every tool does.
func (a ArtifactTools) Has(name string) bool {
	if len(a) == 0 {
		return true
	}
	for _, t := range a {
		if t == name {
			return name != ""
		}
	}
	return false
}

// noCall says which calls were missing, for a correction.
func (a ArtifactTools) noCall() string {
	if len(a) == 0 {
		return "no tool"
	}
	return "no tool that makes an artifact (" + strings.Join(a, ", ") + ")"
}
