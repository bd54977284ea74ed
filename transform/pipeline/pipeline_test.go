package pipeline

import (
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// recorder is an Encoder that keeps the events the pipeline delivered, in
// order, KindRaw left out (the parsers' own tests check the raw reply).
type recorder struct {
	events []transform.Event
}

func (r *recorder) Begin(dst []byte) []byte { return append(dst, 'B') }

func (r *recorder) AppendEvent(dst []byte, ev transform.Event) []byte {
	if ev.Kind != transform.KindRaw {
		r.events = append(r.events, ev.Clone())
	}
	return append(dst, 'E')
}

func (r *recorder) AppendHeartbeat(dst []byte, _ time.Time) []byte { return append(dst, 'H') }

// notation is the normal form of what r recorded (adjacent deltas merged),
// without the ROUTED event every stream starts with.
func (r *recorder) notation() string {
	norm, _ := transformtest.Normalize(r.events)
	if len(norm) > 0 && norm[0].Kind == transform.KindRouted {
		norm = norm[1:]
	}
	return transformtest.Format(norm)
}

// discard is an Encoder that writes nothing, for allocation counts.
type discard struct{}

func (discard) Begin(dst []byte) []byte                          { return dst }
func (discard) AppendEvent(dst []byte, _ transform.Event) []byte { return dst }
func (discard) AppendHeartbeat(dst []byte, _ time.Time) []byte   { return dst }

// sseBody builds an upstream SSE body from chunk deltas: each argument is the
// JSON of one choices[0].delta (or, when it starts with "{\"choices\"" or
// "{\"error\"", a whole chunk), then [DONE] unless the last is "-".
func sseBody(parts ...string) string {
	var b strings.Builder
	done := true
	for _, p := range parts {
		switch {
		case p == "-":
			done = false
			continue
		case strings.HasPrefix(p, "finish:"):
			p = `{"id":"c","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"` + strings.TrimPrefix(p, "finish:") + `"}]}`
		case strings.HasPrefix(p, "usage:"):
			p = `{"id":"c","model":"m","choices":[],"usage":` + strings.TrimPrefix(p, "usage:") + `}`
		case !strings.HasPrefix(p, `{"choices"`) && !strings.HasPrefix(p, `{"error"`) && !strings.HasPrefix(p, "!"):
			p = `{"id":"c","model":"m","choices":[{"index":0,"delta":` + p + `,"finish_reason":null}]}`
		}
		b.WriteString("data: " + strings.TrimPrefix(p, "!") + "\n\n")
	}
	if done {
		b.WriteString("data: [DONE]\n\n")
	}
	return b.String()
}

// run streams body through a pipeline for the format, cut into chunks,
// and returns the normal form of the events delivered.
func run(t *testing.T, f format.Name, contentType string, chunks ...string) string {
	t.Helper()
	return runConfig(t, Config{Format: f}, contentType, chunks...)
}

// runConfig is run with a whole route configuration.
func runConfig(t *testing.T, cfg Config, contentType string, chunks ...string) string {
	t.Helper()
	p, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p.Reset(rec, transform.Meta{MessageID: "m1"})
	p.Start(nil, contentType, "up-1")
	for _, c := range chunks {
		p.Feed(nil, []byte(c))
	}
	p.Close(nil)
	return rec.notation()
}

func TestRouting(t *testing.T) {
	const sseType = "text/event-stream"
	cases := []struct {
		name   string
		format format.Name
		body   string
		want   string
	}{
		{"OA01 native reasoning then content", format.Text,
			sseBody(`{"reasoning_content":"a"}`, `{"reasoning_content":"b"}`, `{"content":"c"}`, "finish:stop"),
			`R{ R"ab" R} F{ F"c" F} FIN(stop)`},
		{"OA02 mirrored reasoning once", format.Text,
			sseBody(`{"reasoning_content":"x","reasoning":"x"}`, `{"content":"y"}`, "finish:stop"),
			`R{ R"x" R} F{ F"y" F} FIN(stop)`},
		{"OA04 echoed <think> dropped", format.Text,
			sseBody(`{"content":"<think>"}`, `{"reasoning_content":"r"}`, `{"content":"Hello"}`, "finish:stop"),
			`R{ R"r" R} F{ F"Hello" F} FIN(stop)`},
		{"OA05 orphan </think> dropped", format.Text,
			sseBody(`{"reasoning_content":"r"}`, `{"content":"</th"}`, `{"content":"ink>\n\nHello"}`, "finish:stop"),
			`R{ R"r" R} F{ F"Hello" F} FIN(stop)`},
		{"a leading <think> never closed is repeated as the answer", format.Text,
			sseBody(`{"content":"<think>x"}`, "finish:stop"),
			`R{ R"x" R} V(think_unclosed@8:the reply never closed its reasoning with </think>: it is repeated as the answer) F{ F"x" F} FIN(stop)`},
		{"thinkingml owns <think> even with native reasoning", format.ThinkingML,
			sseBody(`{"reasoning_content":"n"}`, `{"content":"<think>t</think><thinking><phase id=\"1\"><title>T</title>p</phase></thinking><final>a</final>"}`, "finish:stop"),
			`R{ R"n" R} R{ R"t" R} TH{ P{1 "T"} P1"p" P1} TH} F{ F"a" V(missing_serp_queries@84) F} FIN(stop)`},
		{"native reasoning inside the parser's <think> joins it", format.ThinkingML,
			sseBody(`{"content":"<think>a"}`, `{"reasoning_content":"b"}`, `{"content":"c</think>"}`, "finish:stop"),
			`R{ R"abc" R} V(missing_thinking@17) V(missing_phase@17) V(missing_final@17) FIN(stop)`},
		{"OA17 a chunk's delta before its finish", format.Text,
			sseBody(`{"choices":[{"index":0,"delta":{"content":"last"},"finish_reason":"stop"}]}`),
			`F{ F"last" F} FIN(stop)`},
		{"native tool call with a generated id", format.Text,
			sseBody(`{"tool_calls":[{"index":0,"type":"function","function":{"name":"f","arguments":""}}]}`,
				`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\":1}"}}]}`, "finish:tool_calls"),
			`TC{0 call_m1_0 f} TA0"{\"a\":1}" TC}0 {"a":1} FIN(tool_calls)`},
		{"OA16 length cuts a tool call", format.Text,
			sseBody(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{\"a\":"}}]}`, "finish:length"),
			`TC{0 c1 f} TA0"{\"a\":" V(truncated_tool_args@0:finish_reason length cut a tool call's arguments) TC}0 {"a": FIN(length)`},
		{"aiplan and native tool calls share one index space", format.AIPlan,
			sseBody(`{"tool_calls":[{"index":0,"id":"n1","type":"function","function":{"name":"native","arguments":"{}"}}]}`,
				`{"content":"{\"thought\":\"t\",\"response_mode\":\"TOOL_EXECUTION\",\"direct_response\":null,\"tool_calls\":[{\"name\":\"plan\",\"args\":{}}]}"}`, "finish:stop"),
			`TC{0 n1 native} TA0"{}" TH{ P{1 "Thought"} P1"t" P1} TH} TC{1 call_m1_1 plan} TA1"{}" TC}1 {} TC}0 {} FIN(tool_calls)`},
		// An agent loop's tool-calling turn has no FinalResult yet (specs/004
		// §7.3): a reply of only native tool calls lacks nothing, in the
		// JSON formats as in text (issue 22).
		{"final_result: only native tool calls", format.FinalResult,
			sseBody(`{"content":"\n"}`, `{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "finish:tool_calls"),
			`TC{0 c1 f} TA0"{}" TC}0 {} FIN(tool_calls)`},
		{"aiplan: only native tool calls, no fallback", format.AIPlan,
			sseBody(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]}`, "finish:tool_calls"),
			`TC{0 c1 f} TA0"{}" TC}0 {} FIN(tool_calls)`},
		{"final_result: no text and no call is still no object", format.FinalResult,
			sseBody(`{"content":""}`, "finish:stop"),
			`V(not_json_object@0:the reply holds no JSON object) FIN(stop)`},
		{"usage is delivered", format.Text,
			sseBody(`{"content":"a"}`, "finish:stop", `usage:{"total_tokens":3}`),
			`F{ F"a" F} U{"total_tokens":3} FIN(stop)`},
		{"[DONE] without finish_reason still finishes", format.Text,
			sseBody(`{"content":"a"}`),
			`F{ F"a" F} FIN(stop)`},
		{"finish_reason without [DONE] still finishes", format.Text,
			sseBody(`{"content":"a"}`, "finish:stop", "-"),
			`F{ F"a" F} FIN(stop)`},
		{"cut off before finishing", format.Text,
			sseBody(`{"content":"a"}`, "-"),
			`F{ F"a" F} E(upstream_error)`},
		{"a held tag is delivered before the error", format.ThinkingML,
			sseBody(`{"content":"<final>x <fi"}`, "-"),
			`V(missing_thinking@0) V(missing_phase@0) F{ F"x <fi" V(missing_serp_queries@12) F} V(unterminated_final@12) E(upstream_error)`},
		{"in-stream error object", format.Text,
			sseBody(`{"content":"a"}`, `{"error":{"message":"overloaded","type":"server_error"}}`),
			`F{ F"a" F} E(upstream_error)`},
		{"malformed chunk", format.Text,
			sseBody(`{"content":"a"}`, `!{"choices":[`),
			`F{ F"a" F} E(upstream_error)`},
		{"model parsing error", format.ThinkingML,
			sseBody(`{"content":"<<ParsingError>>"}`, "finish:stop"),
			`E(model_parsing_error)`},
		{"OA05 under auto: an orphan </think> never starts ThinkingML", format.Auto,
			sseBody(`{"reasoning_content":"r"}`, `{"content":"</think>\n\n{\"status\":\"answer_ready\",\"message\":\"Hello\"}"}`, "finish:stop"),
			`R{ R"r" R} F{ F"Hello" F} FIN(stop)`},
		{"under auto a <think> block still opens ThinkingML", format.Auto,
			sseBody(`{"reasoning_content":"n"}`, `{"content":"<think>t</think><final>a</final>"}`, "finish:stop"),
			`R{ R"n" R} R{ R"t" R} V(missing_thinking@16) V(missing_phase@16) F{ F"a" V(missing_serp_queries@24) F} FIN(stop)`},
		{"native reasoning closes before the parser's last events", format.ThinkingML,
			sseBody(`{"content":"<final>Hi <"}`, `{"reasoning_content":"more"}`, "finish:stop"),
			`V(missing_thinking@0) V(missing_phase@0) F{ F"Hi" R{ R"more" R} F" <" V(missing_serp_queries@11) F} V(unterminated_final@11) FIN(stop)`},
		{"auto detects thinkingml", format.Auto,
			sseBody(`{"content":"<final>a</final>"}`, "finish:stop"),
			`V(missing_thinking@0) V(missing_phase@0) F{ F"a" V(missing_serp_queries@8) F} FIN(stop)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := run(t, tc.format, sseType, tc.body)
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			// The same body cut at every byte gives the same events once
			// adjacent deltas are merged.
			body := []byte(tc.body)
			for i := 1; i < len(body); i++ {
				if cut := run(t, tc.format, sseType, string(body[:i]), string(body[i:])); cut != got {
					t.Fatalf("cut at %d:\n got %s\nwant %s", i, cut, got)
				}
			}
		})
	}
}

func TestJSONCompletion(t *testing.T) {
	body := `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant",` +
		`"content":"hi","reasoning_content":"think","tool_calls":[{"id":"t1","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`"finish_reason":"tool_calls"}],"usage":{"total_tokens":2}}`
	for _, ct := range []string{"application/json", "application/json; charset=utf-8"} {
		got := run(t, format.Text, ct, body[:10], body[10:])
		want := `R{ R"think" R} F{ F"hi" TC{0 t1 f} TA0"{}" TC}0 {} F} U{"total_tokens":2} FIN(tool_calls)`
		if got != want {
			t.Errorf("%s:\n got  %s\n want %s", ct, got, want)
		}
	}
}

func TestLimits(t *testing.T) {
	cases := []struct {
		name   string
		limits transform.Limits
		body   string
		want   string
	}{
		{"reply too large", transform.Limits{MaxReplyBytes: 150},
			sseBody(`{"content":"aaaa"}`, "-") + strings.Repeat(" ", 100), `F{ F"aaaa" F} E(reply_too_large)`},
		{"sse line too long", transform.Limits{MaxSSELineBytes: 64},
			"data: " + strings.Repeat("x", 100), `E(sse_line_too_long)`},
		{"too many tool calls", transform.Limits{MaxToolCalls: 1},
			sseBody(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"g","arguments":"{}"}}]}`),
			`TC{0 a f} TA0"{}" E(too_many_tool_calls)`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, _ := New(Config{Format: format.Text, Parser: transform.ParserOptions{Limits: tc.limits}})
			rec := &recorder{}
			p.Reset(rec, transform.Meta{MessageID: "m"})
			p.Start(nil, "text/event-stream", "")
			p.Feed(nil, []byte(tc.body))
			if !p.Ended() {
				t.Fatal("the stream did not end at the limit")
			}
			if more := p.Feed(nil, []byte("data: {}\n\n")); len(more) != 0 {
				t.Errorf("wrote after the end: %q", more)
			}
			p.Close(nil)
			if got := rec.notation(); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

func TestViolationCap(t *testing.T) {
	p, _ := New(Config{Format: format.ThinkingML})
	rec := &recorder{}
	p.Reset(rec, transform.Meta{})
	p.Start(nil, "text/event-stream", "")
	reply := "<thinking>" + strings.Repeat(`<phase id=\"9\"><title>t</title>x</phase>`, 200) + "</thinking><final>a</final>"
	p.Feed(nil, []byte(sseBody(`{"content":"`+reply+`"}`, "finish:stop")))
	p.Close(nil)
	got := rec.notation()
	if n := strings.Count(got, "V("); n != MaxViolations {
		t.Errorf("%d violations delivered, want %d", n, MaxViolations)
	}
	if !strings.Contains(got, "V("+CodeTooManyViolations) {
		t.Errorf("no %s marker", CodeTooManyViolations)
	}
	sum := p.Summary()
	if sum.ViolationCount <= MaxViolations || len(sum.Violations) != MaxViolations {
		t.Errorf("summary counts %d, lists %d", sum.ViolationCount, len(sum.Violations))
	}
}

// TestRepairsInSummary checks that the repairs an encoder makes to keep
// its protocol's order (CONTRACT.md §7) are counted with the stream's
// violations: an aiplan thought after direct_response is left out of
// jsonseq.
func TestRepairsInSummary(t *testing.T) {
	p, _ := New(Config{Format: format.AIPlan})
	pr, _ := protocol.Lookup("jsonseq")
	p.Reset(pr.NewEncoder(transform.Meta{}), transform.Meta{})
	p.Start(nil, "text/event-stream", "")
	p.Feed(nil, []byte(sseBody(`{"content":"{\"direct_response\":\"x\",\"thought\":\"t\"}"}`, "finish:stop")))
	p.Close(nil)
	sum := p.Summary()
	if !slices.Contains(sum.Violations, transform.CodeReasoningLeftOut) || sum.ViolationCount != len(sum.Violations) {
		t.Errorf("summary violations %v (%d)", sum.Violations, sum.ViolationCount)
	}
}

func TestFailFlushesAndEndsOnce(t *testing.T) {
	p, _ := New(Config{Format: format.Text})
	rec := &recorder{}
	p.Reset(rec, transform.Meta{})
	out := p.Begin(nil)
	out = p.Begin(out) // once only
	out = p.Fail(out, transform.CodeProviderError, "refused")
	out = p.Fail(out, transform.CodeUpstreamError, "again")
	out = p.Close(out)
	out = p.Heartbeat(out, time.Now())
	if string(out) != "BE" {
		t.Errorf("wrote %q, want one Begin and one event", out)
	}
	if got := rec.notation(); got != "E(provider_error)" {
		t.Errorf("got %s", got)
	}
	if s := p.Summary(); s.ErrorCode != transform.CodeProviderError {
		t.Errorf("summary error %q", s.ErrorCode)
	}
}

func TestResetReuses(t *testing.T) {
	p, _ := New(Config{Format: format.Auto})
	for i, tc := range []struct{ content, format string }{
		{`{\"status\":\"answer_ready\",\"message\":\"hi\"}`, "final_result"},
		{"plain", "text"},
		{`{\"status\":\"answer_ready\",\"message\":\"hi\"}`, "final_result"},
	} {
		rec := &recorder{}
		p.Reset(rec, transform.Meta{MessageID: "m"})
		p.Start(nil, "text/event-stream", "")
		p.Feed(nil, []byte(sseBody(`{"content":"`+tc.content+`"}`, "finish:stop")))
		p.Close(nil)
		if got := p.Summary().Format; got != tc.format {
			t.Errorf("stream %d: format %q, want %q (%s)", i, got, tc.format, rec.notation())
		}
	}
}

// TestSteadyStateAllocs checks that streaming content through the whole
// pipeline allocates nothing per chunk once it runs.
func TestSteadyStateAllocs(t *testing.T) {
	p, _ := New(Config{Format: format.ThinkingML})
	p.Reset(discard{}, transform.Meta{})
	p.Start(nil, "text/event-stream", "")
	p.Feed(nil, []byte(sseBody(`{"content":"<thinking><phase id=\"1\"><title>t</title>"}`, "-")))
	chunk := []byte(sseBody(`{"content":"some reasoning text \u4e2d\u6587 and more"}`, "-"))
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(200, func() { _ = p.Feed(buf[:0], chunk) }); n != 0 {
		t.Errorf("%.1f allocations per chunk, want 0", n)
	}
}

// TestRoutedModel checks that the model the stream reports is the
// upstream's: a first chunk that says nothing (Azure's
// prompt_filter_results, with an empty model and no choices) does not
// route the stream, the next chunk does.
func TestRoutedModel(t *testing.T) {
	body, err := os.ReadFile("../upstream/testdata/azure_content_filter.sse")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{Format: format.Text})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p.Reset(rec, transform.Meta{MessageID: "m1", Model: "client-model"})
	p.Start(nil, "text/event-stream", "")
	p.Feed(nil, body)
	p.Close(nil)
	if got := p.Summary().Model; got != "gpt-4o-2024-11-20" {
		t.Errorf("routed model %q, want gpt-4o-2024-11-20", got)
	}
	if n := strings.Count(rec.notation(), "RT"); n > 1 {
		t.Errorf("routed %d times: %s", n, rec.notation())
	}
}
