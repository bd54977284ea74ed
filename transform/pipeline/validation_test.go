package pipeline

import (
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/transformtest"
	"github.com/llmstream/llmstream/transform/validate"
)

// The checks of CONTRACT.md §10 through the router: what the encoder is
// given for each reply of a stream, attempt after attempt, and what a
// retry appends to the request.

// validationRun is one stream through a pipeline with checks.
type validationRun struct {
	t   *testing.T
	p   *Pipeline
	rec *recorder
}

func newValidationRun(t *testing.T, f format.Name, v *Validation) *validationRun {
	t.Helper()
	p, err := New(Config{Format: f})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p.Reset(rec, transform.Meta{MessageID: "m1"})
	p.Validate(v)
	return &validationRun{t: t, p: p, rec: rec}
}

// reply streams one upstream reply (the SSE body of chunk deltas, cut
// into pieces of size bytes) and returns the events it delivered, in
// normal form.
func (r *validationRun) reply(size int, parts ...string) string {
	before := len(r.rec.events)
	body := sseBody(parts...)
	r.p.Start(nil, "text/event-stream", "up")
	for len(body) > 0 {
		n := min(size, len(body))
		r.p.Feed(nil, []byte(body[:n]))
		body = body[n:]
	}
	r.p.Close(nil)
	norm, _ := transformtest.Normalize(r.rec.events[before:])
	return transformtest.Format(norm)
}

// tools declares get_weather {city: string required, unit: c|f}.
func tools(t *testing.T) *validate.Tools {
	in, err := request.Inspect([]byte(`{"messages":[],"tools":[{"type":"function","function":{"name":"get_weather",` +
		`"parameters":{"type":"object","properties":{"city":{"type":"string"},"unit":{"enum":["c","f"]}},"required":["city"]}}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	return validate.NewTools(nil, in.Tools)
}

// nativeCall is the deltas of one native tool call whose arguments are
// cut in three.
func nativeCall(id, name, args string) []string {
	third := len(args) / 3
	q := func(s string) string { return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"` }
	return []string{
		`{"tool_calls":[{"index":0,"id":"` + id + `","function":{"name":"` + name + `","arguments":` + q(args[:third]) + `}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":` + q(args[third:2*third]) + `}}]}`,
		`{"tool_calls":[{"index":0,"function":{"arguments":` + q(args[2*third:]) + `}}]}`,
	}
}

func content(s string) string {
	return `{"content":"` + strings.ReplaceAll(s, `"`, `\"`) + `"}`
}

// TestToolChecksReport: without validate, a tool call that breaks its
// schema or names no declared tool is a violation and flows on, for
// native and aiplan calls, its arguments cut across deltas.
func TestToolChecksReport(t *testing.T) {
	tests := []struct {
		name   string
		format format.Name
		parts  []string
		want   string
	}{
		{"native_valid", format.Text, append(nativeCall("c1", "get_weather", `{"city":"Paris","unit":"c"}`), "finish:tool_calls"),
			`TC{0 c1 get_weather} TA0"{\"city\":\"Paris\",\"unit\":\"c\"}" TC}0 {"city":"Paris","unit":"c"} FIN(tool_calls)`},
		{"native_invalid", format.Text, append(nativeCall("c1", "get_weather", `{"city":7,"unit":"k"}`), "finish:tool_calls"),
			`TC{0 c1 get_weather} TA0"{\"city\":7,\"unit\":\"k\"}" V(tool_args_invalid@0:tool "get_weather": at /city: got number, want string; at /unit: value must be one of 'c', 'f') TC}0 {"city":7,"unit":"k"} FIN(tool_calls)`},
		{"native_unknown", format.Text, append(nativeCall("c1", "get_wether", `{"city":"x"}`), "finish:tool_calls"),
			`TC{0 c1 get_wether} TA0"{\"city\":\"x\"}" V(unknown_tool@0:tool "get_wether" is not among the request's tools) TC}0 {"city":"x"} FIN(tool_calls)`},
		{"aiplan_invalid", format.AIPlan, []string{
			content(`{"thought":"t","response_mode":"TOOL_EXECUTION","direct_response":null,"tool_calls":[{"name":"get_weather","args":{"unit":"c"}}]}`),
			"finish:stop"},
			`TH{ P{1 "Thought"} P1"t" P1} TH} TC{0 call_m1_0 get_weather} TA0"{\"unit\":\"c\"}" V(tool_args_invalid@129:tool "get_weather": at the top level: missing property 'city') TC}0 {"unit":"c"} FIN(tool_calls)`},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 7, 1 << 20} {
			r := newValidationRun(t, tt.format, &Validation{Tools: tools(t)})
			got := r.reply(size, tt.parts...)
			got = strings.TrimPrefix(got, "ROUTED(m,up) ")
			if got != tt.want {
				t.Errorf("%s, %d-byte pieces:\n got %s\nwant %s", tt.name, size, got, tt.want)
			}
		}
	}
}

// finalResult is the content delta of a FinalResult reply.
func finalResult(status, message, extra string) string {
	return content(`{"status":"` + status + `","message":"` + message + `"` + extra + `}`)
}

// TestValidationRules is the rule table of specs/004 §7.3.1 × the
// outcomes of §7.3.2 through the router: pass, retry then pass, retry then
// fail hard, retry then accept soft. Each attempt's events are what the
// encoder got for it.
func TestValidationRules(t *testing.T) {
	art := validate.ArtifactTools{"generate_pptx"}
	pass := []string{`{"reasoning_content":"again"}`, finalResult("answer_ready", "Here it is.", ""), "finish:stop"}
	passWant := `R{ R"again" R} F{ F"Here it is." F} FIN(stop)`
	tests := []struct {
		name     string
		format   format.Name
		evidence validate.Evidence
		expected string
		first    []string
		// firstWant is what the first reply delivers; second is the
		// retry's reply and secondWant what it delivers (no retry:
		// second is nil).
		firstWant  string
		second     []string
		secondWant string
		correction string // in the retry's user message
	}{
		{
			name: "pass", format: format.FinalResult,
			first:     []string{`{"reasoning_content":"r"}`, finalResult("answer_ready", "Done.", ""), "finish:stop"},
			firstWant: `R{ R"r" R} F{ F"Done." F} FIN(stop)`,
		},
		{
			name: "rule1_no_evidence_retry_then_pass", format: format.FinalResult,
			first:      []string{`{"reasoning_content":"r"}`, finalResult("artifact_ready", "PPT ready!", `,"artifacts":["file-ready:pptx"]`), "finish:stop"},
			firstWant:  `R{ R"r" R} V(artifact_without_evidence@82:artifact_ready, but no artifact tool was called in this turn) V(retried@82:attempt 1 of 2 failed (artifact_without_evidence); retried)`,
			second:     pass,
			secondWant: passWant,
			correction: `but no tool that makes an artifact (generate_pptx) was called in this turn`,
		},
		{
			name: "rule1_tool_failed_retry_then_fail_hard", format: format.FinalResult,
			evidence:   validate.Evidence{ArtifactCalls: []string{"generate_pptx"}},
			first:      []string{finalResult("artifact_ready", "PPT ready!", ""), "finish:stop"},
			firstWant:  `V(artifact_ready_without_artifacts@49) V(artifact_tool_failed@50:artifact_ready, but the artifact tools called (generate_pptx) produced no artifact) V(retried@50:attempt 1 of 2 failed (artifact_tool_failed); retried)`,
			second:     []string{finalResult("artifact_ready", "Really ready!", ""), "finish:stop"},
			secondWant: `V(artifact_ready_without_artifacts@52) V(artifact_tool_failed@53:artifact_ready, but the artifact tools called (generate_pptx) produced no artifact) E(validation_failed)`,
			correction: `the tools called in this turn (generate_pptx) produced no artifact`,
		},
		{
			name: "rule1_artifact_made_passes", format: format.FinalResult,
			evidence:  validate.Evidence{ArtifactCalls: []string{"generate_pptx"}, Artifacts: 1},
			first:     []string{finalResult("artifact_ready", "PPT ready!", `,"artifacts":["deck.pptx"]`), "finish:stop"},
			firstWant: `F{ F"PPT ready!" F} A["deck.pptx"] FIN(stop)`,
		},
		{
			name: "rule2_clarify_without_question_retry_then_pass", format: format.FinalResult,
			first:      []string{finalResult("clarify_needed", "Which class?", ""), "finish:stop"},
			firstWant:  `V(clarify_without_question@51) V(retried@52:attempt 1 of 2 failed (clarify_without_question); retried)`,
			second:     []string{finalResult("clarify_needed", "Which class?", `,"clarify":{"question":"Which class?","options":["3A","3B"]}`), "finish:stop"},
			secondWant: `F{ F"Which class?" F} C{"Which class?" ["3A","3B"] ""} FIN(stop)`,
			correction: `without a clarify question`,
		},
		{
			name: "rule3_soft_retry_then_accept", format: format.FinalResult, expected: validate.ModeArtifact,
			first:      []string{finalResult("answer_ready", "PPT is a format.", ""), "finish:stop"},
			firstWant:  `V(expected_artifact@54:an artifact was expected, and the reply is answer_ready with no artifact tool called) V(retried@54:attempt 1 of 2 failed (expected_artifact); retried)`,
			second:     []string{finalResult("answer_ready", "PPT is a file format.", ""), "finish:stop"},
			secondWant: `V(expected_artifact@59:an artifact was expected, and the reply is answer_ready with no artifact tool called) F{ F"PPT is a file format." F} FIN(stop)`,
			correction: `This request expects an artifact`,
		},
		{
			name: "rule0_prose_retry_then_pass", format: format.FinalResult,
			first:      []string{content("Sure, here is your quiz."), "finish:stop"},
			firstWant:  `V(not_json_object@0:the reply is not a JSON object) V(retried@24:attempt 1 of 2 failed (not_final_result); retried)`,
			second:     pass,
			secondWant: passWant,
			correction: `it was not (not_json_object)`,
		},
		{
			name: "auto_detected_final_result", format: format.Auto,
			first:      []string{finalResult("clarify_needed", "?", ""), "finish:stop"},
			firstWant:  `V(clarify_without_question@40) V(retried@41:attempt 1 of 2 failed (clarify_without_question); retried)`,
			second:     pass,
			secondWant: passWant,
			correction: `clarify`,
		},
		{
			name: "auto_prose_is_no_final_result", format: format.Auto, expected: validate.ModeArtifact,
			first:     []string{content("Plain prose."), "finish:stop"},
			firstWant: `F{ F"Plain prose." F} FIN(stop)`,
		},
		{
			name: "a_tool_call_reply_is_not_terminal", format: format.FinalResult, expected: validate.ModeArtifact,
			first: append(nativeCall("c9", "get_weather", `{"city":"Oslo"}`), "finish:tool_calls"),
			// Issue 22: and not a reply without its object either.
			firstWant: `TC{0 c9 get_weather} TA0"{\"city\":\"Oslo\"}" TC}0 {"city":"Oslo"} FIN(tool_calls)`,
		},
		{
			name: "native_args_invalid_retry_then_pass", format: format.Text,
			first: append(nativeCall("c1", "get_weather", `{"city":7}`), "finish:tool_calls"),
			firstWant: `V(tool_args_invalid@0:tool "get_weather": at /city: got number, want string) ` +
				`V(retried@0:attempt 1 of 2 failed (tool_args_invalid); retried)`,
			second:     append(nativeCall("c2", "get_weather", `{"city":"Oslo"}`), "finish:tool_calls"),
			secondWant: `TC{0 c2 get_weather} TA0"{\"city\":\"Oslo\"}" TC}0 {"city":"Oslo"} FIN(tool_calls)`,
		},
		{
			name: "aiplan_unknown_tool_retry_then_fail_hard", format: format.AIPlan,
			first: []string{content(`{"thought":"t","response_mode":"TOOL_EXECUTION","direct_response":null,"tool_calls":[{"name":"nope","args":{}}]}`), "finish:stop"},
			firstWant: `V(unknown_tool@112:tool "nope" is not among the request's tools) ` +
				`V(retried@112:attempt 1 of 2 failed (unknown_tool); retried)`,
			second:     []string{content(`{"thought":"t2","response_mode":"TOOL_EXECUTION","direct_response":null,"tool_calls":[{"name":"nope2","args":{}}]}`), "finish:stop"},
			secondWant: `V(unknown_tool@114:tool "nope2" is not among the request's tools) E(validation_failed)`,
			correction: `You called the tool "nope", which is not available. The available tools are: get_weather.`,
		},
	}
	for _, tt := range tests {
		for _, size := range []int{1, 13, 1 << 20} {
			r := newValidationRun(t, tt.format, &Validation{
				Tools: tools(t), Act: true, Retries: 1, Terminal: true,
				Evidence: tt.evidence, ArtifactTools: art, Expected: tt.expected,
			})
			got := strings.TrimPrefix(r.reply(size, tt.first...), "ROUTED(m,up) ")
			if got != tt.firstWant {
				t.Errorf("%s, %d-byte pieces, first reply:\n got %s\nwant %s", tt.name, size, got, tt.firstWant)
			}
			if tt.second == nil {
				if r.p.RetryPending() || !r.p.Ended() {
					t.Errorf("%s: retry pending %v, ended %v; want a finished stream", tt.name, r.p.RetryPending(), r.p.Ended())
				}
				continue
			}
			if !r.p.RetryPending() || r.p.Ended() {
				t.Fatalf("%s: retry pending %v, ended %v; want a retry", tt.name, r.p.RetryPending(), r.p.Ended())
			}
			if turn := r.p.RetryTurn(); !strings.Contains(turn.Correction+turnResults(turn), tt.correction) {
				t.Errorf("%s: correction %q (tool messages %q) lacks %q", tt.name, turn.Correction, turnResults(turn), tt.correction)
			}
			r.p.NextAttempt()
			if got := r.reply(size, tt.second...); got != tt.secondWant {
				t.Errorf("%s, %d-byte pieces, retry:\n got %s\nwant %s", tt.name, size, got, tt.secondWant)
			}
			if r.p.RetryPending() || !r.p.Ended() {
				t.Errorf("%s: after the retry: retry pending %v, ended %v", tt.name, r.p.RetryPending(), r.p.Ended())
			}
			if s := r.p.Summary(); len(s.Retries) != 1 {
				t.Errorf("%s: Summary.Retries = %q", tt.name, s.Retries)
			}
		}
	}
}

func turnResults(t request.RetryTurn) string {
	var b strings.Builder
	for _, c := range t.Calls {
		b.WriteString(c.Result)
	}
	return b.String()
}

// TestRetryTurn checks what a failed reply gives the retry request: its
// content as written, its native calls each answered, the correction.
func TestRetryTurn(t *testing.T) {
	r := newValidationRun(t, format.Text, &Validation{Tools: tools(t), Act: true, Retries: 1})
	parts := []string{content("Checking "), content("both.")}
	parts = append(parts, `{"tool_calls":[{"index":0,"id":"a","function":{"name":"get_weather","arguments":"{\"city\":\"Oslo\"}"}},`+
		`{"index":1,"id":"b","function":{"name":"get_weather","arguments":"{\"unit\":\"f\"}"}}]}`, "finish:tool_calls")
	r.reply(5, parts...)
	if !r.p.RetryPending() {
		t.Fatal("no retry")
	}
	turn := r.p.RetryTurn()
	if string(turn.Content) != "Checking both." {
		t.Errorf("Content = %q", turn.Content)
	}
	if len(turn.Calls) != 2 || turn.Calls[0].ID != "a" || string(turn.Calls[1].Arguments) != `{"unit":"f"}` {
		t.Fatalf("Calls = %+v", turn.Calls)
	}
	if turn.Calls[0].Result != notRun {
		t.Errorf("the valid call's tool message = %q, want notRun", turn.Calls[0].Result)
	}
	if !strings.Contains(turn.Calls[1].Result, `at the top level: missing property 'city'`) {
		t.Errorf("the invalid call's tool message = %q", turn.Calls[1].Result)
	}
	if turn.Correction != "" {
		t.Errorf("Correction = %q: the tool messages carry it", turn.Correction)
	}
	// The retry's reply: the refused calls were never shown, so the new
	// ones start at index 0 again, and the stream is routed once.
	r.p.NextAttempt()
	got := r.reply(1<<20, append(nativeCall("", "get_weather", `{"city":"Rome"}`), "finish:tool_calls")...)
	want := `TC{0 call_m1_0 get_weather} TA0"{\"city\":\"Rome\"}" TC}0 {"city":"Rome"} FIN(tool_calls)`
	if got != want {
		t.Errorf("retry:\n got %s\nwant %s", got, want)
	}
	routed := 0
	for _, ev := range r.rec.events {
		if ev.Kind == transform.KindRouted {
			routed++
		}
	}
	if routed != 1 {
		t.Errorf("%d ROUTED events, want 1", routed)
	}
}

// TestValidationNoRetries: retries 0 checks and acts at once.
func TestValidationNoRetries(t *testing.T) {
	r := newValidationRun(t, format.FinalResult, &Validation{Act: true, Terminal: true})
	got := r.reply(3, finalResult("clarify_needed", "x", ""), "finish:stop")
	if want := `ROUTED(m,up) V(clarify_without_question@40) E(validation_failed)`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	last := r.rec.events[len(r.rec.events)-1]
	if msg := string(last.Text); msg != "the reply failed validation: clarify_without_question: clarify_needed without a clarify question" {
		t.Errorf("message %q", msg)
	}
}

// TestHeldReleasedBeforeAnError: an upstream that breaks off mid-reply
// still gets what was decoded to the client, before the error.
func TestHeldReleasedBeforeAnError(t *testing.T) {
	r := newValidationRun(t, format.FinalResult, &Validation{Act: true, Retries: 1, Terminal: true})
	r.p.Start(nil, "text/event-stream", "up")
	r.p.Feed(nil, []byte(sseBody(content(`{"status":"answer_ready","message":"Half`), "-")))
	if n := len(r.rec.events); n != 1 {
		t.Fatalf("%d events before the end, want ROUTED only: %s", n, transformtest.Format(r.rec.events))
	}
	r.p.Fail(nil, transform.CodeUpstreamError, "broke")
	got := transformtest.Format(r.rec.events)
	// The parser's violation flows at once; the answer it held comes out
	// before the error.
	if want := `ROUTED(m,up) V(unterminated_json@40:the reply ended inside the JSON object) F{ F"Half" F} E(upstream_error)`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
}

// TestValidationHoldsAllocs checks that holding a long reply until it is
// validated costs no allocation per delta once the pipeline is warm: a
// stream allocates at most a few more times than without validation.
func TestValidationHoldsAllocs(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"status":"answer_ready","message":"`)
	for b.Len() < 64<<10 {
		b.WriteString("lorem ipsum ")
	}
	b.WriteString(`"}`)
	body := []byte(sseBody(content(b.String()), "finish:stop"))
	allocs := func(v *Validation) float64 {
		p, err := New(Config{Format: format.FinalResult})
		if err != nil {
			t.Fatal(err)
		}
		stream := func() {
			p.Reset(discard{}, transform.Meta{MessageID: "m"})
			p.Validate(v)
			p.Start(nil, "text/event-stream", "")
			for i := 0; i < len(body); i += 16 {
				p.Feed(nil, body[i:min(i+16, len(body))])
			}
			p.Close(nil)
			if !p.Ended() {
				t.Fatal("the stream did not end")
			}
		}
		stream()
		return testing.AllocsPerRun(5, stream)
	}
	plain, held := allocs(nil), allocs(&Validation{Act: true, Terminal: true, Retries: 1})
	if held > plain+4 {
		t.Errorf("%v allocations per stream of %d deltas held, %v without validation", held, len(body)/16, plain)
	}
}

// TestShowRetries: with show_retries, a protocol with a restart event
// streams each reply as it comes and marks the retry with it; one without
// holds the reply as usual.
func TestShowRetries(t *testing.T) {
	first := []string{finalResult("clarify_needed", "FIRST-TRY", ""), "finish:stop"}
	second := []string{finalResult("answer_ready", "SECOND-TRY", ""), "finish:stop"}
	tests := []struct {
		protocol string
		marker   string // "" holds
	}{
		{"aisdk", `data: {"type":"data-retry","data":{"attempt":2,"reason":"clarify_without_question"}}`},
		{"skillpet", "event: round_start\ndata: {\"round\":2}\n\n"},
		{"openai", ""},
		{"jsonseq", ""},
	}
	for _, tt := range tests {
		t.Run(tt.protocol, func(t *testing.T) {
			pr, _ := protocol.Lookup(tt.protocol)
			p, err := New(Config{Format: format.FinalResult})
			if err != nil {
				t.Fatal(err)
			}
			meta := transform.Meta{MessageID: "m1", Stream: true}
			p.Reset(pr.NewEncoder(meta), meta)
			p.Validate(&Validation{Act: true, ShowRetries: true, Retries: 1, Terminal: true})
			var out []byte
			feed := func(parts []string) {
				out = p.Start(out, "text/event-stream", "up")
				out = p.Feed(out, []byte(sseBody(parts...)))
				out = p.Close(out)
			}
			feed(first)
			if !p.RetryPending() {
				t.Fatal("no retry")
			}
			// The correction tells the model whether the user saw the
			// refused reply (issue 22: it said not, when they had).
			saw := strings.Contains(p.RetryTurn().Correction, "The user saw it")
			if saw != (tt.marker != "") {
				t.Errorf("shown %v, correction %q", tt.marker != "", p.RetryTurn().Correction)
			}
			p.NextAttempt()
			feed(second)
			got := string(out)
			shown, marker, last := strings.Index(got, "FIRST-TRY"), strings.Index(got, tt.marker), strings.Index(got, "SECOND-TRY")
			switch {
			case last < 0:
				t.Fatalf("the retry's reply is missing:\n%s", got)
			case tt.marker == "" && shown >= 0:
				t.Errorf("a protocol without a restart event showed the refused reply:\n%s", got)
			case tt.marker != "" && !(shown >= 0 && shown < marker && marker < last):
				t.Errorf("want the first reply, the marker, the second reply, in order:\n%s", got)
			}
		})
	}
}
