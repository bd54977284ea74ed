package caddymodule

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/caddyserver/caddy/v2"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/validate"
)

// What a request's reply is checked against (CONTRACT.md §10), read from
// the request sent upstream; the retry of a reply that fails is retry.go's.

// CodeInvalidExpectedMode is the 400 of a request whose expected_mode
// placeholder gave a value that is no mode.
const CodeInvalidExpectedMode = "invalid_expected_mode"

// validation returns the checks of one request's reply (CONTRACT.md
// §10), read from body, the request sent upstream; nil when nothing is
// checked: validate is off and the request declares no tool. body must
// outlive the stream (the checks borrow it).
func (h *Handler) validation(body []byte, repl *caddy.Replacer) (*pipeline.Validation, *request.Error) {
	vs := h.settings.Validate
	if vs == nil && !bytes.Contains(body, []byte(`"tools"`)) && !bytes.Contains(body, []byte(`"functions"`)) {
		return nil, nil // nothing to read: spare the scan
	}
	in, err := request.Inspect(body)
	if err != nil {
		return nil, nil // Rewrite made body; it is a chat request
	}
	if vs == nil {
		if len(in.Tools) == 0 {
			return nil, nil
		}
		return &pipeline.Validation{Tools: validate.NewTools(h.settings.ToolSchemas, in.Tools)}, nil
	}
	v := &pipeline.Validation{
		Tools:         validate.NewTools(h.settings.ToolSchemas, in.Tools),
		Act:           true,
		ShowRetries:   vs.ShowRetries,
		Retries:       vs.Retries,
		Terminal:      vs.Terminal,
		ArtifactTools: vs.ArtifactTools,
	}
	if vs.Terminal {
		v.Evidence = validate.NewEvidence(in.Loop, vs.ArtifactTools)
		mode := vs.ExpectedMode
		if repl != nil && strings.Contains(mode, "{") {
			mode = repl.ReplaceAll(mode, "")
		}
		m, ok := config.ExpectedModeFor(mode)
		if !ok {
			return nil, &request.Error{Status: http.StatusBadRequest, Code: CodeInvalidExpectedMode,
				Message: "expected_mode: " + quoteShort(m) + " is not answer, artifact or clarify"}
		}
		v.Expected = m
	}
	return v, nil
}

// quoteShort quotes at most 64 bytes of s, for an error message.
func quoteShort(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
