package validate

import (
	"reflect"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/request"
)

// TestTerminal is the rule table of specs/004 §7.3.1: every rule with and
// without its evidence, and the router's expectation.
func TestTerminal(t *testing.T) {
	art := ArtifactTools{"generate_pptx", "render_pdf"}
	none := Evidence{}
	called := Evidence{ArtifactCalls: []string{"generate_pptx"}}
	made := Evidence{ArtifactCalls: []string{"generate_pptx"}, Artifacts: 1}
	answer := Result{Complete: true, Status: StatusAnswerReady}
	artifact := Result{Complete: true, Status: StatusArtifactReady}
	clarify := Result{Complete: true, Status: StatusClarifyNeeded, ClarifyQuestion: true}
	tests := []struct {
		name     string
		r        Result
		ev       Evidence
		expected string
		code     string // "" passes
		sev      Severity
	}{
		{"answer", answer, none, "", "", 0},
		{"answer_expected_answer", answer, none, ModeAnswer, "", 0},
		{"rule1_artifact_with_event", artifact, made, "", "", 0},
		{"rule1_event_without_call", artifact, Evidence{Artifacts: 1}, "", "", 0},
		{"rule1_no_event_no_tool", artifact, none, "", CodeArtifactWithoutEvidence, Hard},
		{"rule1_tool_without_event", artifact, called, "", CodeArtifactToolFailed, Hard},
		{"rule2_clarify_with_question", clarify, none, "", "", 0},
		{"rule2_clarify_without_question", Result{Complete: true, Status: StatusClarifyNeeded}, none, "", CodeClarifyWithoutQuestion, Hard},
		{"rule3_expected_artifact_no_tool", answer, none, ModeArtifact, CodeExpectedArtifact, Soft},
		{"rule3_tool_called_respects_the_model", answer, called, ModeArtifact, "", 0},
		{"rule3_event_respects_the_model", answer, made, ModeArtifact, "", 0},
		{"rule3_only_for_answer_ready", clarify, none, ModeArtifact, "", 0},
		{"rule0_not_a_final_result", Result{Why: "not_json_object"}, made, "", CodeNotFinalResult, Hard},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := Terminal(tt.r, tt.ev, art, tt.expected)
			if tt.code == "" {
				if len(fs) != 0 {
					t.Fatalf("Terminal = %+v, want none", fs)
				}
				return
			}
			if len(fs) != 1 || fs[0].Code != tt.code || fs[0].Severity != tt.sev || fs[0].Call != -1 {
				t.Fatalf("Terminal = %+v, want one %s of severity %d", fs, tt.code, tt.sev)
			}
			if fs[0].Correction == "" || fs[0].Detail == "" {
				t.Errorf("failure without detail or correction: %+v", fs[0])
			}
		})
	}
}

func TestTerminalCorrectionsNameTheTools(t *testing.T) {
	fs := Terminal(Result{Complete: true, Status: StatusArtifactReady}, Evidence{}, ArtifactTools{"generate_pptx"}, "")
	if !strings.Contains(fs[0].Correction, "generate_pptx") || !strings.Contains(fs[0].Correction, `"answer_ready"`) {
		t.Errorf("correction %q", fs[0].Correction)
	}
	fs = Terminal(Result{Complete: true, Status: StatusArtifactReady}, Evidence{ArtifactCalls: []string{"render_pdf"}}, nil, "")
	if !strings.Contains(fs[0].Correction, "(render_pdf)") {
		t.Errorf("correction %q", fs[0].Correction)
	}
	fs = Terminal(Result{Why: "missing_field bad_status"}, Evidence{}, nil, "")
	if !strings.Contains(fs[0].Correction, "(missing_field bad_status)") {
		t.Errorf("correction %q", fs[0].Correction)
	}
}

func TestReportsFailure(t *testing.T) {
	tests := []struct {
		name, msg string
		failed    bool
	}{
		{"plain_result", `{"role":"tool","content":"file-ready:pptx https://x/y.pptx"}`, false},
		{"json_result", `{"role":"tool","content":"{\"url\":\"https://x\",\"error\":null}"}`, false},
		{"parts", `{"role":"tool","content":[{"type":"text","text":"quiz done"}]}`, false},
		{"prose_mentioning_errors", `{"role":"tool","content":"Errors: none. Deck saved."}`, false},
		{"empty", `{"role":"tool","content":""}`, true},
		{"blank", `{"role":"tool","content":"  \n"}`, true},
		{"null", `{"role":"tool","content":null}`, true},
		{"no_content", `{"role":"tool"}`, true},
		{"error_prefix", `{"role":"tool","content":"Error: template not found"}`, true},
		{"error_upper", `{"role":"tool","content":"ERROR 500"}`, true},
		{"failed_prefix", `{"role":"tool","content":"failed to render the PDF"}`, true},
		{"failure_word", `{"role":"tool","content":"Failure"}`, true},
		{"json_error", `{"role":"tool","content":"{\"error\":\"quota exceeded\"}"}`, true},
		{"json_error_object", `{"role":"tool","content":"{\"error\":{\"code\":1}}"}`, true},
		{"json_error_empty", `{"role":"tool","content":"{\"error\":{},\"ok\":true}"}`, false},
		{"json_ok_false", `{"role":"tool","content":"{\"ok\":false}"}`, true},
		{"json_success_false", `{"role":"tool","content":"{\"success\":false,\"data\":1}"}`, true},
		{"json_status_failed", `{"role":"tool","content":"{\"status\":\"FAILED\"}"}`, true},
		{"json_status_done", `{"role":"tool","content":"{\"status\":\"done\"}"}`, false},
		{"json_is_error", `{"role":"tool","content":"{\"is_error\":true}"}`, true},
		{"message_is_error", `{"role":"tool","is_error":true,"content":"pdf.pdf"}`, true},
		{"message_status_error", `{"role":"tool","status":"error","content":"pdf.pdf"}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := request.Inspect([]byte(`{"messages":[{"role":"user","content":"u"},` + tt.msg + `]}`))
			if err != nil || len(in.Loop.Results) != 1 {
				t.Fatalf("Inspect: %v, %d results", err, len(in.Loop.Results))
			}
			if got := ReportsFailure(in.Loop.Results[0]); got != tt.failed {
				t.Errorf("ReportsFailure = %v, want %v", got, tt.failed)
			}
		})
	}
}

func TestNewEvidence(t *testing.T) {
	body := `{"messages":[
		{"role":"user","content":"old"},
		{"role":"assistant","tool_calls":[{"id":"o","type":"function","function":{"name":"generate_pptx","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"o","content":"old deck"},
		{"role":"user","content":"now"},
		{"role":"assistant","tool_calls":[
			{"id":"a","type":"function","function":{"name":"get_class","arguments":"{}"}},
			{"id":"b","type":"function","function":{"name":"generate_pptx","arguments":"{}"}},
			{"id":"c","type":"function","function":{"name":"generate_pptx","arguments":"{}"}},
			{"id":"d","type":"function","function":{"name":"render_pdf","arguments":"{}"}}]},
		{"role":"tool","tool_call_id":"a","content":"class"},
		{"role":"tool","tool_call_id":"b","content":"Error: timeout"},
		{"role":"tool","tool_call_id":"c","content":"deck.pptx"},
		{"role":"tool","tool_call_id":"z","content":"unattributed"}]}`
	in, err := request.Inspect([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		tools ArtifactTools
		want  Evidence
	}{
		{"configured", ArtifactTools{"generate_pptx", "render_pdf"}, Evidence{ArtifactCalls: []string{"generate_pptx", "render_pdf"}, Artifacts: 1}},
		{"pdf_only", ArtifactTools{"render_pdf"}, Evidence{ArtifactCalls: []string{"render_pdf"}}},
		{"every_tool", nil, Evidence{ArtifactCalls: []string{"get_class", "generate_pptx", "render_pdf"}, Artifacts: 3}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := NewEvidence(in.Loop, tt.tools); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("NewEvidence = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestFailureHelpers(t *testing.T) {
	fs := []Failure{
		{Code: CodeToolSchemaUnusable, Severity: Notice, Call: 0, Correction: "n"},
		{Code: CodeExpectedArtifact, Severity: Soft, Call: -1, Correction: "soft."},
		{Code: CodeToolArgsInvalid, Severity: Hard, Call: 1, Correction: "native."},
		{Code: CodeUnknownTool, Severity: Hard, Call: 2, Correction: "text."},
	}
	if sev, ok := Worst(fs); !ok || sev != Hard {
		t.Errorf("Worst = %d, %v", sev, ok)
	}
	if _, ok := Worst(fs[:1]); ok {
		t.Errorf("Worst of a notice asks for a retry")
	}
	if got := Reason(fs); got != CodeToolArgsInvalid {
		t.Errorf("Reason = %q", got)
	}
	if got := Codes(fs); got != "expected_artifact tool_args_invalid unknown_tool" {
		t.Errorf("Codes = %q", got)
	}
	got := Correction(fs, func(call int) bool { return call == 1 }, false)
	if got != "Your previous reply was not accepted, and the user did not see it. soft. text." {
		t.Errorf("Correction = %q", got)
	}
	// With show_retries the user saw the refused reply, and the model is
	// not told otherwise (issue 22).
	got = Correction(fs, func(call int) bool { return call == 1 }, true)
	if got != "Your previous reply was not accepted. The user saw it, and sees your next reply after it as a new attempt. soft. text." {
		t.Errorf("Correction, shown = %q", got)
	}
	if Correction(fs[:1], nil, false) != "" {
		t.Errorf("a notice made a correction")
	}
}
