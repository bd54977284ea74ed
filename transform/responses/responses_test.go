package responses_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/responses"
)

// newEncoder returns an encoder of streamed responses, for encodertest's
// checks.
func newEncoder() transform.Encoder { return responses.New(encodertest.Meta()) }

// newWholeEncoder returns an encoder of one whole Response.
func newWholeEncoder() *responses.Encoder {
	meta := encodertest.Meta()
	meta.Stream = false
	return responses.New(meta)
}

func TestScenarios(t *testing.T) {
	encodertest.CheckScenarios(t, "", func(evs []transform.Event) ([]byte, error) {
		out := encodertest.Run(newEncoder(), evs)
		a, err := accumulate(out)
		if err == nil && a.terminal == "" {
			err = errors.New("no terminal event")
		}
		return out, err
	})
	encodertest.CheckScenarios(t, "_whole", func(evs []transform.Event) ([]byte, error) {
		enc := newWholeEncoder()
		out := encodertest.Run(enc, evs)
		_, err := checkWhole(out, enc.Status())
		return out, err
	})
}

// TestAssembled checks what a client assembles from each scenario, and
// that the whole Response says the same as the stream's last event.
func TestAssembled(t *testing.T) {
	tests := []struct {
		name                string
		evs                 []transform.Event
		answer              string
		reasoning, summary  []string
		calls               []string
		status, why, errMsg string
		types               string // the output items' types, in order
	}{
		{name: "thinkingml", evs: encodertest.ScenarioEvents("thinkingml"), answer: "# Plan\n- Day 1",
			reasoning: []string{"draft"}, summary: []string{"**Scope**\n\nDo X", "**Plan**\n\nThen Y"},
			status: "completed", types: "reasoning reasoning message"},
		{name: "native_reasoning", evs: encodertest.ScenarioEvents("native_reasoning"), answer: "Hello world",
			reasoning: []string{"first thought", "second thought"}, status: "completed",
			types: "reasoning message reasoning message"},
		{name: "tool_calls", evs: encodertest.ScenarioEvents("tool_calls"), answer: "Checking.",
			calls: []string{`call_1 get_weather {"city":"Paris"}`,
				`call_2 ask_user {"questions":[{"question":"Which genre?","choices":["Fantasy","Sci-fi"]}]}`,
				`call_3 broken {"a": 1,`, `call_4 no_args {}`, "call_5 pretty {\n  \"x\": [1, 2]\n}"},
			status: "completed", types: "message function_call function_call function_call function_call function_call"},
		{name: "aiplan_tool_calls", evs: encodertest.ScenarioEvents("aiplan_tool_calls"),
			summary: []string{"**Thought**\n\nNeed the weather."}, calls: []string{`call_a get_weather {"city":"Oslo"}`},
			status: "completed", types: "reasoning function_call"},
		{name: "clarify_artifacts", evs: encodertest.ScenarioEvents("clarify_artifacts"), answer: "Which class?",
			status: "completed", types: "message"},
		{name: "chinese_length_is_incomplete", evs: encodertest.ScenarioEvents("chinese"), answer: "你好，世界🌍",
			summary: []string{"**理解需求**\n\n用户想要训练计划"}, status: "incomplete", why: "max_output_tokens",
			types: "reasoning message"},
		{name: "content_filter_is_incomplete", evs: encodertest.ScenarioEvents("escapes"),
			answer:    "line1\nline2 \"q\" \\ \u2028 \u2029 </script> <final>bad \ufffd\ufffd utf8 \x01\x1f",
			reasoning: []string{"say \"hi\"\\\n\ttab"}, status: "incomplete", why: "content_filter", types: "reasoning message"},
		{name: "empty_reply", evs: encodertest.ScenarioEvents("empty_reply"), status: "completed"},
		{name: "unrouted", evs: []transform.Event{encodertest.Answer("x"), encodertest.Finish("stop")}, answer: "x",
			status: "completed", types: "message"},
		{name: "phase_without_title", evs: []transform.Event{encodertest.Routed("m", ""), encodertest.Phase(1, ""),
			encodertest.PhaseDelta(1, "x"), encodertest.PhaseEnd(1), encodertest.Phase(2, "T"), encodertest.PhaseEnd(2), encodertest.Finish("stop")},
			summary: []string{"x", "**T**\n\n"}, status: "completed", types: "reasoning"},
		{name: "interleaved_tool_calls", evs: []transform.Event{encodertest.Routed("m", ""),
			encodertest.ToolStart(0, "a", "f"), encodertest.ToolStart(1, "b", "g"), encodertest.ToolArgs(1, "b", "g", `{"y":`),
			encodertest.ToolArgs(0, "a", "f", `{"x":1}`), encodertest.ToolArgs(1, "b", "g", `2}`),
			encodertest.ToolEnd(1, "b", "g", `{"y":2}`), encodertest.ToolEnd(0, "a", "f", `{"x":1}`), encodertest.Finish("tool_calls")},
			calls: []string{`a f {"x":1}`, `b g {"y":2}`}, status: "completed", types: "function_call function_call"},
		{name: "text_around_a_call", evs: []transform.Event{encodertest.Routed("m", ""),
			encodertest.Answer("Let me look. "), encodertest.ToolStart(0, "a", "f"), encodertest.Answer("Meanwhile…"),
			encodertest.ToolEnd(0, "a", "f", `{}`), encodertest.Event(transform.KindAnswerEnd), encodertest.Finish("stop")},
			answer: "Let me look. Meanwhile…", calls: []string{`a f {}`}, status: "completed", types: "message function_call message"},
		{name: "delta_without_start", evs: []transform.Event{encodertest.Reasoning("r"), encodertest.PhaseDelta(3, "p"),
			encodertest.ToolArgs(0, "a", "f", `{"k":`), encodertest.ToolEnd(0, "a", "f", `{"k":1}`), encodertest.Finish("stop")},
			reasoning: []string{"r"}, summary: []string{"p"}, calls: []string{`a f {"k":`}, status: "completed",
			types: "reasoning function_call"},
		{name: "failure_keeps_the_output_so_far", evs: encodertest.ScenarioEvents("error_mid_tool"), answer: "Searching",
			calls: []string{`call_x search {"q":"par`}, status: "failed", errMsg: "upstream broke off", types: "message function_call"},
		{name: "timeout", evs: encodertest.ScenarioEvents("timeout"), reasoning: []string{"hmm"}, status: "failed",
			errMsg: "upstream_timeout", types: "reasoning"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := encodertest.Run(newEncoder(), tt.evs)
			a, err := accumulate(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if a.terminal == "" {
				t.Fatalf("no terminal event:\n%s", out)
			}
			var types []string
			for _, it := range a.output {
				types = append(types, it["type"].(string))
			}
			got := []any{a.answer, a.reasoning, a.summary, a.calls, a.status, a.incomplete, a.errMessage, strings.Join(types, " ")}
			want := []any{tt.answer, tt.reasoning, tt.summary, tt.calls, tt.status, tt.why, tt.errMsg, tt.types}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("stream assembled\n %q\nwant\n %q\n%s", got, want, out)
			}
			if tt.status == "failed" {
				return
			}
			enc := newWholeEncoder()
			body := encodertest.Run(enc, tt.evs)
			w, err := checkWhole(body, enc.Status())
			if err != nil {
				t.Fatal(err)
			}
			last := lastResponse(t, out)
			for _, k := range []string{"status", "output", "usage", "incomplete_details", "model"} {
				if !reflect.DeepEqual(w[k], last[k]) {
					t.Errorf("whole %s %v, stream %v", k, w[k], last[k])
				}
			}
		})
	}
}

// lastResponse returns the Response of the stream's terminal event.
func lastResponse(t *testing.T, out []byte) map[string]any {
	t.Helper()
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		t.Fatal(err)
	}
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Data == "[DONE]" || evs[i].Name == "error" {
			continue
		}
		m, err := evs[i].DecodeData()
		if err != nil {
			t.Fatal(err)
		}
		r, _ := m["response"].(map[string]any)
		return r
	}
	t.Fatal("no event")
	return nil
}

// TestEcho checks that the Response repeats the request's parameters, and
// the API's defaults for those the request left out.
func TestEcho(t *testing.T) {
	body := `{"model":"gpt-x","input":"hi","instructions":"Be brief.","temperature":0.2,"top_p":0.9,
		"max_output_tokens":100,"parallel_tool_calls":false,"tool_choice":{"type":"function","name":"f"},
		"tools":[{"type":"function","name":"f","parameters":{"type":"object"}},{"type":"web_search"}],
		"metadata":{"k":"v"},"text":{"format":{"type":"json_object"}},"reasoning":{"effort":"low"},
		"truncation":"auto","user":"u1","store":true}`
	_, info, e := responses.Convert([]byte(body))
	if e != nil {
		t.Fatal(e)
	}
	meta := encodertest.Meta()
	meta.Request = info.Facts
	out := encodertest.Run(responses.New(meta), encodertest.ScenarioEvents("empty_reply"))
	if _, err := accumulate(out); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"instructions": `"Be brief."`, "temperature": `0.2`, "top_p": `0.9`, "max_output_tokens": `100`,
		"parallel_tool_calls": `false`, "tool_choice": `{"type":"function","name":"f"}`,
		// Function tools in the spec's FunctionTool shape; hosted tools,
		// which no chat upstream runs, are not repeated.
		"tools":    `[{"type":"function","name":"f","description":null,"parameters":{"type":"object"},"strict":false}]`,
		"metadata": `{"k":"v"}`, "text": `{"format":{"type":"json_object"},"verbosity":"medium"}`,
		"reasoning":  `{"effort":"low","summary":null}`,
		"truncation": `"auto"`, "user": `"u1"`,
		"store": `true`, "previous_response_id": `null`,
		"presence_penalty": `0`, "frequency_penalty": `0`, "top_logprobs": `0`, "max_tool_calls": `null`,
		"service_tier": `"default"`, "safety_identifier": `null`, "prompt_cache_key": `null`, "background": `false`,
	}
	for _, r := range []map[string]any{lastResponse(t, out)} {
		for k, v := range want {
			got, _ := json.Marshal(r[k])
			var w any
			_ = json.Unmarshal([]byte(v), &w)
			wb, _ := json.Marshal(w)
			if string(got) != string(wb) {
				t.Errorf("%s: %s, want %s", k, got, wb)
			}
		}
	}
	// Without a Request, the defaults.
	out = encodertest.Run(newEncoder(), encodertest.ScenarioEvents("empty_reply"))
	r := lastResponse(t, out)
	for k, v := range map[string]any{"instructions": nil, "tools": []any{}, "tool_choice": "auto", "parallel_tool_calls": true,
		"metadata": map[string]any{}, "text": map[string]any{"format": map[string]any{"type": "text"}, "verbosity": "medium"},
		"truncation": "disabled", "temperature": 1.0, "top_p": 1.0, "store": false,
		"reasoning": map[string]any{"effort": nil, "summary": nil}} {
		if !reflect.DeepEqual(r[k], v) {
			t.Errorf("default %s: %v, want %v", k, r[k], v)
		}
	}
	if _, ok := r["user"]; ok {
		t.Errorf("user without one in the request: %v", r["user"])
	}
}

// TestUsage checks how a chat usage object maps onto a Response's usage.
func TestUsage(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"plain", `{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}`,
			`{"input_tokens":10,"input_tokens_details":{"cached_tokens":0},"output_tokens":20,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":30}`},
		{"details", `{"prompt_tokens":100,"completion_tokens":50,"total_tokens":150,"prompt_tokens_details":{"cached_tokens":64},"completion_tokens_details":{"reasoning_tokens":30}}`,
			`{"input_tokens":100,"input_tokens_details":{"cached_tokens":64},"output_tokens":50,"output_tokens_details":{"reasoning_tokens":30},"total_tokens":150}`},
		{"no_total_floats_null_details", `{"prompt_tokens":3.0,"completion_tokens":4,"prompt_tokens_details":null}`,
			`{"input_tokens":3,"input_tokens_details":{"cached_tokens":0},"output_tokens":4,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":7}`},
		{"not_an_object", `[1]`, `null`},
		{"strings", `{"prompt_tokens":"3"}`, `null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := encodertest.Run(newEncoder(), []transform.Event{encodertest.Routed("m", ""),
				encodertest.Text(transform.KindUsage, `{"prompt_tokens":1}`), encodertest.Text(transform.KindUsage, tt.in), encodertest.Finish("stop")})
			got, _ := json.Marshal(lastResponse(t, out)["usage"])
			if string(got) != tt.want {
				t.Errorf("usage %s, want %s", got, tt.want)
			}
		})
	}
}

// TestErrors checks the failure shapes and the status of a whole
// response.
func TestErrors(t *testing.T) {
	tests := []struct {
		name, code, msg string
		wantCode        string
		wantMsg         string
		status          int
	}{
		{"provider_error", transform.CodeProviderError, "upstream answered 401", "provider_error", "upstream answered 401", 502},
		{"timeout", transform.CodeUpstreamTimeout, "", "upstream_timeout", "upstream_timeout", 504},
		{"no_code", "", "x", "upstream_error", "x", 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := responses.New(encodertest.Meta())
			out := encodertest.Run(enc, []transform.Event{encodertest.Failure(tt.code, tt.msg)})
			a, err := accumulate(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if a.errCode != tt.wantCode || a.errMessage != tt.wantMsg || enc.Status() != http.StatusOK {
				t.Errorf("stream failed with %q %q, status %d", a.errCode, a.errMessage, enc.Status())
			}
			w := newWholeEncoder()
			if w.Status() != http.StatusOK {
				t.Errorf("whole status %d before the error", w.Status())
			}
			body := encodertest.Run(w, []transform.Event{encodertest.Routed("m", ""), encodertest.Heartbeat(), encodertest.Answer("partial"),
				encodertest.Failure(tt.code, tt.msg)})
			m, err := checkWhole(body, w.Status())
			if err != nil {
				t.Fatal(err)
			}
			e := m["error"].(map[string]any)
			if e["code"] != tt.wantCode || e["message"] != tt.wantMsg || w.Status() != tt.status {
				t.Errorf("whole %s with status %d, want %s %q %d", body, w.Status(), tt.wantCode, tt.wantMsg, tt.status)
			}
		})
	}
}

func TestWholeWritesNothingBeforeTheEnd(t *testing.T) {
	encodertest.CheckWholeWritesNothingBeforeTheEnd(t, newWholeEncoder(), "tool_calls")
}

func TestNothingAfterTerminal(t *testing.T) {
	t.Run("stream", func(t *testing.T) { encodertest.CheckNothingAfterTerminal(t, newEncoder) })
	t.Run("whole", func(t *testing.T) {
		encodertest.CheckNothingAfterTerminal(t, func() transform.Encoder { return newWholeEncoder() })
	})
}

// TestZeroAllocs: a delta costs no allocation, the texts kept for the
// .done events and the final Response included (they grow by doubling,
// which AllocsPerRun's average rounds to 0 over its runs; max_reply bounds
// them).
func TestZeroAllocs(t *testing.T) {
	encodertest.CheckZeroAllocs(t, newEncoder, []transform.Event{encodertest.Routed("m", "id"), encodertest.ToolStart(0, "c", "f")},
		encodertest.AllocsCase{Name: "phase_delta_in_a_phase", Event: encodertest.PhaseDelta(1, "phase text")})
}

// BenchmarkEncoder measures answer deltas streaming into one message:
// the steady state of a reply. (encodertest's reply alternates reasoning
// and answer on every iteration, which for this protocol opens two new
// output items each time; BenchmarkStream measures items as streams have
// them.)
func BenchmarkEncoder(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), []transform.Event{encodertest.Routed("m", "id")}, transform.KindAnswerDelta, transform.KindAnswerDelta)
}

// BenchmarkEncoderReasoning measures reasoning deltas streaming into one
// reasoning_text part.
func BenchmarkEncoderReasoning(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), []transform.Event{encodertest.Routed("m", "id")}, transform.KindReasoningDelta, transform.KindReasoningDelta)
}

// BenchmarkStream encodes a whole stream per operation, with a new
// encoder: 200 reasoning deltas, 800 answer deltas, a tool call, usage
// and response.completed with the whole output. allocs/op is per stream
// (the kept texts grow by doubling); ns/delta the cost per delta, the
// items' opening and closing and the final Response included.
func BenchmarkStream(b *testing.B) {
	evs := []transform.Event{encodertest.Routed("m", "id"), encodertest.Event(transform.KindReasoningStart)}
	for range 200 {
		evs = append(evs, encodertest.Reasoning("Thinking about the user's plan, "))
	}
	evs = append(evs, encodertest.Event(transform.KindReasoningEnd), encodertest.Event(transform.KindAnswerStart))
	for range 800 {
		evs = append(evs, encodertest.Answer("- 第二天：拉 \"quoted\" text\n"))
	}
	evs = append(evs, encodertest.Event(transform.KindAnswerEnd), encodertest.ToolStart(0, "call_1", "search"),
		encodertest.ToolArgs(0, "call_1", "search", `{"q":"split"}`), encodertest.ToolEnd(0, "call_1", "search", `{"q":"split"}`),
		encodertest.Text(transform.KindUsage, `{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}`), encodertest.Finish("stop"))
	var size int64
	for _, ev := range evs {
		size += int64(len(ev.Text))
	}
	meta := encodertest.Meta()
	buf := make([]byte, 0, 1<<20)
	b.SetBytes(size)
	b.ReportAllocs()
	for b.Loop() {
		enc := responses.New(meta)
		buf = enc.Begin(buf[:0])
		for _, ev := range evs {
			buf = enc.AppendEvent(buf[:0], ev)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*1000), "ns/delta")
}

// FuzzEncoder feeds arbitrary event sequences to both modes: the encoder
// must not panic, the stream must accumulate as the SDKs accumulate it,
// and the whole body must be one Response or error object.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{19, 1, 14, 1, 15, 1, 16, 1, 20, 3, 22, 1}, `{"prompt_tokens":1}`)
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1, 23, 0}, "\xe4\xbd\xa0好")
	f.Add([]byte{1, 0, 2, 1, 3, 0, 5, 0, 7, 1, 8, 1, 9, 1, 6, 0, 11, 2, 12, 0, 14, 2, 15, 2, 16, 2, 22, 0}, "abcdefghijklmnop")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		evs := encodertest.FuzzEvents(ops, pool)
		out := encodertest.Run(newEncoder(), evs)
		a, err := accumulate(out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		// What the stream said is what the encoder was given, when the
		// pieces are whole UTF-8 (a character cut between two deltas is
		// U+FFFD twice in the deltas, and whole in the text).
		var answer strings.Builder
		whole := true
		for _, ev := range evs {
			if ev.Kind == transform.KindFinish || ev.Kind == transform.KindError {
				break
			}
			if ev.Kind == transform.KindAnswerDelta {
				answer.Write(ev.Text)
				whole = whole && utf8.Valid(ev.Text)
			}
		}
		if whole && a.answer != answer.String() {
			t.Fatalf("answer %q, want %q\n%s", a.answer, answer.String(), out)
		}
		enc := newWholeEncoder()
		out = encodertest.Run(enc, evs)
		if len(out) == 0 {
			return // no terminal event
		}
		if _, err := checkWhole(out, enc.Status()); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}

// TestItemStatus checks the Open Responses item state machine: an item
// the upstream was writing when it stopped at its limit, or broke off,
// ends incomplete (and for a cut reply it is the last item); the items
// ended before stay completed.
func TestItemStatus(t *testing.T) {
	r := encodertest.Routed("m", "")
	tests := []struct {
		name     string
		evs      []transform.Event
		statuses string // each output_item.done's status, in order
		terminal string
	}{
		{"answer_cut_by_the_limit", []transform.Event{r, encodertest.Reasoning("r"), encodertest.Event(transform.KindReasoningEnd),
			encodertest.Answer("a"), encodertest.Event(transform.KindAnswerEnd), encodertest.Text(transform.KindUsage, `{}`),
			encodertest.Finish("length")}, "completed incomplete", "response.incomplete"},
		{"call_cut_by_the_limit", []transform.Event{r, encodertest.Answer("a"), encodertest.ToolStart(0, "c", "f"),
			encodertest.ToolArgs(0, "c", "f", `{"x":`), encodertest.ToolEnd(0, "c", "f", `{"x":`), encodertest.Finish("length")},
			"completed incomplete", "response.incomplete"},
		{"answer_then_stop", []transform.Event{r, encodertest.Answer("a"), encodertest.Event(transform.KindAnswerEnd),
			encodertest.Finish("stop")}, "completed", "response.completed"},
		{"broken_mid_answer", []transform.Event{r, encodertest.Answer("a"), encodertest.Event(transform.KindAnswerEnd),
			{Kind: transform.KindError, Code: transform.CodeUpstreamError, Text: []byte("broke")}}, "incomplete", "response.failed"},
		{"broken_mid_call_after_reasoning", []transform.Event{r, encodertest.Reasoning("r"), encodertest.ToolStart(0, "c", "f"),
			encodertest.ToolArgs(0, "c", "f", `{"x":`), {Kind: transform.KindError, Code: transform.CodeUpstreamTimeout}},
			"completed incomplete", "response.failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := encodertest.Run(newEncoder(), tt.evs)
			if _, err := accumulate(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			evs, _ := encodertest.ReadSSE(out)
			var statuses []string
			terminal := ""
			for _, ev := range evs {
				switch ev.Name {
				case "response.output_item.done":
					m, _ := ev.DecodeData()
					statuses = append(statuses, m["item"].(map[string]any)["status"].(string))
				case "response.completed", "response.incomplete", "response.failed":
					terminal = ev.Name
					if len(statuses) != len(strings.Fields(tt.statuses)) {
						t.Errorf("%s before every item was done", ev.Name)
					}
				}
			}
			if got := strings.Join(statuses, " "); got != tt.statuses || terminal != tt.terminal {
				t.Errorf("items %q then %s, want %q then %s\n%s", got, terminal, tt.statuses, tt.terminal, out)
			}
			if last := evs[len(evs)-1]; last.Data != "[DONE]" {
				t.Errorf("the stream ends with %s, want data: [DONE]", last.Name)
			}
		})
	}
}
