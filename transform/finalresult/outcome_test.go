package finalresult

import (
	"testing"

	"github.com/llmstream/llmstream/transform"
)

func TestOutcome(t *testing.T) {
	tests := []struct {
		reply string
		want  Outcome
	}{
		{`{"status":"answer_ready","message":"m"}`, Outcome{Ended: true, Status: "answer_ready", Message: true}},
		{"```json\n{\"message\":\"m\",\"status\":\"artifact_ready\",\"artifacts\":[\"a\"]}\n```", Outcome{Ended: true, Status: "artifact_ready", Message: true}},
		{`{"status":"clarify_needed","message":"?","clarify":{"question":"which?"}}`, Outcome{Ended: true, Status: "clarify_needed", Message: true, ClarifyQuestion: true}},
		{`{"status":"clarify_needed","message":"?","clarify":{"question":""}}`, Outcome{Ended: true, Status: "clarify_needed", Message: true}},
		{`{"status":"done","message":"m"}`, Outcome{Ended: true, Message: true}},
		{`{"status":7,"message":null}`, Outcome{Ended: true}},
		{`{"status":"answer_ready","message":"cut`, Outcome{Status: "answer_ready", Message: true}},
		{`prose`, Outcome{}},
	}
	p := New(transform.ParserOptions{})
	for _, tt := range tests {
		p.Reset()
		emit := func(transform.Event) {}
		p.Feed([]byte(tt.reply), emit)
		p.Close(emit)
		if got := p.Outcome(); got != tt.want {
			t.Errorf("Outcome(%q) = %+v, want %+v", tt.reply, got, tt.want)
		}
	}
}
