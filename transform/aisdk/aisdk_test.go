package aisdk_test

import (
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/aisdk"
)

// checkStream checks a UI message stream the way ai@6 reads it: data lines
// only (and keep-alive comments), every chunk valid against the schema
// extract, start first, deltas and ends only for open parts of that id
// (processUIMessageStream throws otherwise), ids unique, at most one text
// or reasoning part open at a time and none at the terminal chunk, and
// [DONE] right after the terminal chunk, last.
func checkStream(out []byte) error {
	schema, err := loadSchema()
	if err != nil {
		return err
	}
	evs, err := readSSE(out)
	if err != nil {
		return err
	}
	openText, openReasoning := "", ""
	seen := map[string]bool{}
	tools := map[string]bool{}
	terminal, done := -1, -1
	for i, e := range evs {
		if e.comment {
			if e.data != "" {
				return errorf("comment with data")
			}
			continue
		}
		if e.name != "" {
			return errorf("event %d has an event: line; the SDK reads data only", i)
		}
		if done >= 0 {
			return errorf("chunk %d after [DONE]", i)
		}
		if e.data == "[DONE]" {
			if terminal != i-1 {
				return errorf("[DONE] does not follow finish or error")
			}
			done = i
			continue
		}
		if terminal >= 0 {
			return errorf("chunk %d after the terminal chunk: %s", i, e.data)
		}
		m, err := decodeData(e)
		if err != nil {
			return err
		}
		if err := validateChunk(schema, m); err != nil {
			return errorf("chunk %d: %v", i, err)
		}
		typ := m["type"].(string)
		if (i == 0) != (typ == "start") {
			return errorf("chunk %d is %s; start comes first and once", i, typ)
		}
		id, _ := m["id"].(string)
		switch typ {
		case "text-start", "reasoning-start":
			if openText != "" || openReasoning != "" {
				return errorf("%s while a part is open", typ)
			}
			if seen[typ+id] {
				return errorf("%s id %s reused", typ, id)
			}
			seen[typ+id] = true
			if typ == "text-start" {
				openText = id
			} else {
				openReasoning = id
			}
		case "text-delta", "text-end":
			if id != openText || id == "" {
				return errorf("%s for text part %q, open %q", typ, id, openText)
			}
			if typ == "text-end" {
				openText = ""
			}
		case "reasoning-delta", "reasoning-end":
			if id != openReasoning || id == "" {
				return errorf("%s for reasoning part %q, open %q", typ, id, openReasoning)
			}
			if typ == "reasoning-end" {
				openReasoning = ""
			}
		case "tool-input-start":
			tools[m["toolCallId"].(string)] = true
		case "tool-input-delta":
			if !tools[m["toolCallId"].(string)] {
				return errorf("tool-input-delta without tool-input-start")
			}
		case "finish", "error":
			terminal = i
			if openText != "" || openReasoning != "" {
				return errorf("%s with a part open", typ)
			}
		}
	}
	if terminal >= 0 && done < 0 {
		return errorf("no [DONE] after the terminal chunk")
	}
	return nil
}

func TestScenarios(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			out := run(aisdk.New(testMeta()), s.evs)
			if err := checkStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			golden(t, s.name, out)
		})
	}
}

// TestEvents checks the chunks of small sequences (data lines, without
// the start chunk).
func TestEvents(t *testing.T) {
	tests := []struct {
		name string
		evs  []transform.Event
		want []string
	}{
		{"lazy_parts", []transform.Event{
			ev(transform.KindReasoningStart), ev(transform.KindReasoningEnd),
			ev(transform.KindAnswerStart), ev(transform.KindAnswerEnd),
		}, nil},
		{"text_closed_by_data_part", []transform.Event{
			ev(transform.KindAnswerStart), text(F, "a"), {Kind: transform.KindSerpQueries, List: []string{"q"}}, text(F, "b"), ev(transform.KindAnswerEnd),
		}, []string{
			`{"type":"text-start","id":"text-0"}`, `{"type":"text-delta","id":"text-0","delta":"a"}`, `{"type":"text-end","id":"text-0"}`,
			`{"type":"data-serp-queries","data":{"queries":["q"]}}`,
			`{"type":"text-start","id":"text-1"}`, `{"type":"text-delta","id":"text-1","delta":"b"}`, `{"type":"text-end","id":"text-1"}`,
		}},
		{"phases", []transform.Event{
			ev(transform.KindThinkingStart), phase(1, "Scope"), phaseDelta(1, "x"), phaseEnd(1), phase(2, "Plan"), phaseEnd(2), ev(transform.KindThinkingEnd),
		}, []string{
			`{"type":"data-phase","data":{"id":1,"title":"Scope"}}`,
			`{"type":"reasoning-start","id":"reasoning-0"}`, `{"type":"reasoning-delta","id":"reasoning-0","delta":"x"}`, `{"type":"reasoning-end","id":"reasoning-0"}`,
			`{"type":"data-phase","data":{"id":2,"title":"Plan"}}`,
		}},
		{"serp_summary", []transform.Event{text(transform.KindSerpSummary, "s")},
			[]string{`{"type":"data-serp-summary","data":{"text":"s"}}`}},
		{"tool_input", []transform.Event{
			toolStart(0, "c1", "f"), toolArgs(0, "c1", "f", `{"a":`), toolArgs(0, "c1", "f", ""), toolArgs(0, "c1", "f", `1}`), toolEnd(0, "c1", "f", `{"a":1}`),
		}, []string{
			`{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}`,
			`{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"{\"a\":"}`,
			`{"type":"tool-input-delta","toolCallId":"c1","inputTextDelta":"1}"}`,
			`{"type":"tool-input-available","toolCallId":"c1","toolName":"f","input":{"a":1}}`,
		}},
		{"tool_input_invalid", []transform.Event{toolStart(0, "c1", "f"), toolEnd(0, "c1", "f", `{"a":`)},
			[]string{
				`{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}`,
				`{"type":"tool-input-error","toolCallId":"c1","toolName":"f","input":"{\"a\":","errorText":"invalid tool input: the arguments are not valid JSON"}`,
			}},
		{"tool_closes_text", []transform.Event{ev(transform.KindAnswerStart), text(F, "a"), toolStart(0, "c1", "f")},
			[]string{`{"type":"text-start","id":"text-0"}`, `{"type":"text-delta","id":"text-0","delta":"a"}`, `{"type":"text-end","id":"text-0"}`,
				`{"type":"tool-input-start","toolCallId":"c1","toolName":"f"}`}},
		{"clarify_artifacts", []transform.Event{
			{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Q?"}},
			text(transform.KindArtifacts, "[\n\"a\"\n]"), text(transform.KindArtifacts, "[oops"),
		}, []string{
			`{"type":"data-clarify","data":{"question":"Q?","options":[],"hint":null}}`,
			`{"type":"data-artifacts","data":{"items":["a"]}}`,
			`{"type":"data-artifacts","data":{"items":"[oops"}}`,
		}},
		{"violations_before_finish", []transform.Event{violation("a", 1, "x"), violation("b", 2, ""), finish("stop")},
			[]string{`{"type":"data-violations","data":{"violations":[{"code":"a","offset":1,"detail":"x"},{"code":"b","offset":2,"detail":""}]}}`,
				`{"type":"finish","finishReason":"stop"}`, `[DONE]`}},
		{"violations_before_error", []transform.Event{violation("a", 1, "x"), failure("upstream_error", "")},
			[]string{`{"type":"data-violations","data":{"violations":[{"code":"a","offset":1,"detail":"x"}]}}`,
				`{"type":"error","errorText":"upstream_error"}`, `[DONE]`}},
		{"error_closes_parts", []transform.Event{ev(transform.KindAnswerStart), text(F, "a"), failure("upstream_error", "cut")},
			[]string{`{"type":"text-start","id":"text-0"}`, `{"type":"text-delta","id":"text-0","delta":"a"}`, `{"type":"text-end","id":"text-0"}`,
				`{"type":"error","errorText":"cut"}`, `[DONE]`}},
		{"ignored_kinds", []transform.Event{routed("m", "u"), raw("x"), text(transform.KindUsage, `{"a":1}`), ev(transform.KindThinkingStart), ev(transform.KindThinkingEnd)}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(aisdk.New(testMeta()), tt.evs)
			if err := checkStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sse, _ := readSSE(out)
			var got []string
			for _, e := range sse[1:] {
				got = append(got, e.data)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("chunks:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestFinishReason checks the AI SDK spelling of each finish reason.
func TestFinishReason(t *testing.T) {
	tests := []struct {
		openai    string
		toolCalls bool
		want      string
	}{
		{"stop", false, "stop"},
		{"", false, "stop"},
		{"stop", true, "tool-calls"},
		{"length", false, "length"},
		{"length", true, "length"},
		{"tool_calls", true, "tool-calls"},
		{"function_call", false, "tool-calls"},
		{"content_filter", false, "content-filter"},
		{"eos", false, "other"},
	}
	for _, tt := range tests {
		t.Run(tt.openai+"_"+map[bool]string{true: "tools", false: "text"}[tt.toolCalls], func(t *testing.T) {
			evs := []transform.Event{}
			if tt.toolCalls {
				evs = append(evs, toolStart(0, "c", "f"), toolEnd(0, "c", "f", "{}"))
			}
			out := string(run(aisdk.New(testMeta()), append(evs, finish(tt.openai))))
			want := `data: {"type":"finish","finishReason":"` + tt.want + `"}` + "\n\ndata: [DONE]\n\n"
			if !strings.HasSuffix(out, want) {
				t.Errorf("got\n%s\nwant suffix\n%s", out, want)
			}
		})
	}
}

func TestBeginAndHeartbeat(t *testing.T) {
	meta := testMeta()
	enc := aisdk.New(meta)
	if got := string(enc.Begin(nil)); got != "data: {\"type\":\"start\",\"messageId\":\"msg-1\"}\n\n" {
		t.Errorf("start %q", got)
	}
	if got := string(enc.AppendHeartbeat(nil, created)); got != ": keep-alive\n\n" {
		t.Errorf("heartbeat %q", got)
	}
	meta.MessageID = ""
	if got := string(aisdk.New(meta).Begin(nil)); got != "data: {\"type\":\"start\"}\n\n" {
		t.Errorf("start without message id %q", got)
	}
	enc.AppendEvent(nil, finish("stop"))
	if got := enc.AppendHeartbeat(nil, created); len(got) != 0 {
		t.Errorf("heartbeat after finish: %q", got)
	}
	if got := enc.AppendEvent(nil, text(F, "late")); len(got) != 0 {
		t.Errorf("event after finish: %q", got)
	}
}

func TestZeroAllocs(t *testing.T) {
	tests := []struct {
		name string
		ev   transform.Event
	}{
		{"text_delta", text(F, "some answer text, with \"quotes\"\n")},
		{"text_delta_chinese", text(F, "三分化训练计划")},
		{"reasoning_delta", text(R, "reasoning text")},
		{"phase_delta", phaseDelta(1, "phase text")},
		{"tool_input_delta", toolArgs(0, "c", "f", `{"a":1}`)},
		{"heartbeat", heartbeat()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := aisdk.New(testMeta())
			buf := enc.Begin(make([]byte, 0, 64<<10))
			now := time.Now()
			allocs := testing.AllocsPerRun(1000, func() {
				if tt.ev.Kind == kindHeartbeat {
					buf = enc.AppendHeartbeat(buf[:0], now)
					return
				}
				buf = enc.AppendEvent(buf[:0], tt.ev)
			})
			if allocs != 0 {
				t.Errorf("%v allocations per event, want 0", allocs)
			}
		})
	}
}

func BenchmarkEncoder(b *testing.B) {
	deltas := []transform.Event{
		text(R, "Thinking about "), text(R, "the user's plan"),
		text(F, "Here is a plan:\n"), text(F, "- 第二天：拉\n"), text(F, "\"quoted\" \\ text"),
	}
	var size int64
	for _, d := range deltas {
		size += int64(len(d.Text))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	enc := aisdk.New(testMeta())
	buf := enc.Begin(make([]byte, 0, 64<<10))
	b.ResetTimer()
	for b.Loop() {
		for _, d := range deltas {
			buf = enc.AppendEvent(buf[:0], d)
		}
	}
	b.ReportMetric(float64(b.N*len(deltas))/b.Elapsed().Seconds(), "events/s")
}

// FuzzEncoder feeds arbitrary event sequences: the encoder must not panic
// and every chunk must validate and keep the SDK's part bookkeeping, since
// the encoder opens and closes text and reasoning parts itself.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{14, 1, 15, 1, 16, 1, 25, 4, 18, 3, 23, 1}, `{"questions":[{"text":"q","choices":["a"]}]}`)
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1, 21, 0}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		out := run(aisdk.New(testMeta()), fuzzEvents(ops, pool))
		if err := checkStream(out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
