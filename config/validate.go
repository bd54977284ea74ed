package config

import (
	"encoding/json"
	"strings"

	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/validate"
)

// Validate is the validate block (CONTRACT.md §10): it makes the checks of
// a reply act. Tool calls are always checked against the request's tools
// (a failure is a violation); with Validate, a reply that fails a check is
// held back and retried, and a FinalResult reply is checked against the
// terminal-state rules of specs/004 §7.3.1.
type Validate struct {
	// Retries is how many times a reply that failed is retried, the budget
	// shared by hard and soft rules (specs/004 §7.3.2). 0 acts at once: a
	// hard failure ends the stream with validation_failed, a soft one is
	// delivered with its violation. At most 5. Default 1.
	Retries *int `json:"retries,omitempty"`

	// ArtifactTools names the tools that make artifacts (specs/004
	// ARTIFACT_TOOL_SET): their successful results in the request's
	// current loop are the evidence artifact_ready needs. Default: every
	// tool counts.
	ArtifactTools []string `json:"artifact_tools,omitempty"`

	// ExpectedMode is what the router expects of the reply: "answer",
	// "artifact" or "clarify", or a placeholder such as
	// {http.request.header.X-Expected-Mode} expanded per request (empty
	// after expansion: no expectation; anything else is a 400). With
	// "artifact", an answer_ready reply without artifact evidence is
	// retried once and then accepted with a violation (rule 3, soft).
	// Default none.
	ExpectedMode string `json:"expected_mode,omitempty"`

	// ShowRetries streams each reply as it comes, and marks a retry with
	// the protocol's own restart event (skillpet round_start, an aisdk
	// data-retry part), instead of holding the reply until it passes.
	// Protocols without such an event hold as usual. Default false.
	ShowRetries bool `json:"show_retries,omitempty"`
}

// DefaultRetries is the retry budget of specs/004 §7.3.2.
const DefaultRetries = 1

// MaxRetries bounds the budget: each retry is one more upstream call.
const MaxRetries = 5

// ValidateSettings is the validate block resolved.
type ValidateSettings struct {
	// Retries is the budget.
	Retries int
	// ArtifactTools is the artifact tool set; empty means every tool.
	ArtifactTools validate.ArtifactTools
	// ExpectedMode is the value as configured: a mode, or text with
	// placeholders the Caddy layer expands per request (ExpectedModeFor).
	ExpectedMode string
	// Terminal says the terminal-state rules apply: the route's format
	// is final_result, or auto (when it detects final_result).
	Terminal bool
	// ShowRetries is as configured.
	ShowRetries bool
}

// ExpectedModeFor returns the expected mode of a request, given the
// configured value with its placeholders expanded, and false when it is
// no mode.
func ExpectedModeFor(expanded string) (string, bool) {
	m := strings.TrimSpace(expanded)
	return m, validate.ValidMode(m)
}

// loadValidate checks the validate block.
func (s *Settings) loadValidate(v *Validate) error {
	if v == nil {
		return nil
	}
	vs := &ValidateSettings{Retries: DefaultRetries, ExpectedMode: v.ExpectedMode, ShowRetries: v.ShowRetries}
	if v.Retries != nil {
		vs.Retries = *v.Retries
	}
	if vs.Retries < 0 || vs.Retries > MaxRetries {
		return errorf("validate.retries", "validate.retries: %d is out of range (0 to %d)", vs.Retries, MaxRetries)
	}
	for _, name := range v.ArtifactTools {
		if name == "" {
			return errorf("validate.artifact_tools", "validate.artifact_tools: empty tool name")
		}
		vs.ArtifactTools = append(vs.ArtifactTools, name)
	}
	if !strings.Contains(v.ExpectedMode, "{") && !validate.ValidMode(strings.TrimSpace(v.ExpectedMode)) {
		return errorf("validate.expected_mode", "validate.expected_mode: unknown mode %q (want %s, or a placeholder)",
			v.ExpectedMode, list([]string{validate.ModeAnswer, validate.ModeArtifact, validate.ModeClarify}))
	}
	vs.Terminal = s.Format == "final_result" || s.Format == "auto"
	if !vs.Terminal {
		// The terminal-state rules read a FinalResult; elsewhere these
		// settings would silently do nothing.
		if len(v.ArtifactTools) > 0 {
			return errorf("validate.artifact_tools", "validate.artifact_tools: applies to format final_result or auto, not %s", s.Format)
		}
		if v.ExpectedMode != "" {
			return errorf("validate.expected_mode", "validate.expected_mode: applies to format final_result or auto, not %s", s.Format)
		}
	}
	s.Validate = vs
	return nil
}

// compileTools compiles the configured tools' schemas once, for the
// checks of every request's tool calls (CONTRACT.md §10). A schema that
// does not compile is a configuration error: every call of that tool
// would fail its check.
func (s *Settings) compileTools(all []tool) error {
	if len(all) == 0 {
		return nil
	}
	s.ToolSchemas = &validate.Schemas{}
	for _, t := range all {
		var def struct {
			Function struct {
				Parameters json.RawMessage `json:"parameters"`
			} `json:"function"`
		}
		_ = json.Unmarshal(t.def, &def) // parseTool checked it
		d := request.ToolDef{Name: t.name}
		if p := def.Function.Parameters; len(p) > 0 && string(p) != "null" {
			d.Parameters = p
		}
		if err := s.ToolSchemas.Add(d); err != nil {
			setting := "tools"
			if strings.HasPrefix(t.from, "built-in") {
				setting = "tool"
			}
			return errorf(setting, "%s: %s: %w", setting, t.from, err)
		}
	}
	return nil
}
