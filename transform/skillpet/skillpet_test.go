package skillpet_test

import (
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/skillpet"
)

// shapes are the exact data fields of each skillpet event (specs/002 §3):
// required fields, then optional ones after a "?".
var shapes = map[string]string{
	"thinking":            "content",
	"thinking_done":       "",
	"token":               "content",
	"status":              "message",
	"tool_start":          "id name label ? args",
	"tool_args_heartbeat": "status",
	"ask_user":            "questions",
	"resource":            "resourceType data ? fallbackText",
	"done":                "conversationId",
	"error":               "message",
}

// checkFields reports whether m has exactly the fields of shape.
func checkFields(name string, m map[string]any, shape string) error {
	req, opt, _ := strings.Cut(shape, "?")
	allowed := map[string]bool{}
	for _, k := range strings.Fields(req) {
		if _, ok := m[k]; !ok {
			return errorf("%s lacks %s: %v", name, k, m)
		}
		allowed[k] = true
	}
	for _, k := range strings.Fields(opt) {
		allowed[k] = true
	}
	for k := range m {
		if !allowed[k] {
			return errorf("%s has field %s outside the spec's shape: %v", name, k, m)
		}
	}
	return nil
}

// checkStream checks a skillpet stream against specs/002 §3: known events
// with exactly the spec's fields and types, thinking_done only after
// thinking, no token while thinking is open, ask_user questions normalised,
// and done or error once and last.
func checkStream(out []byte) error {
	evs, err := readSSE(out)
	if err != nil {
		return err
	}
	terminal := -1
	thinking := false
	for i, e := range evs {
		if e.comment {
			continue
		}
		if terminal >= 0 {
			return errorf("event %d %s after the terminal event", i, e.name)
		}
		shape, ok := shapes[e.name]
		if !ok {
			return errorf("event %d: unknown event %q", i, e.name)
		}
		m, err := decodeData(e)
		if err != nil {
			return err
		}
		if err := checkFields(e.name, m, shape); err != nil {
			return err
		}
		switch e.name {
		case "thinking":
			if _, ok := m["content"].(string); !ok {
				return errorf("thinking content is not a string")
			}
			thinking = true
		case "thinking_done":
			if !thinking {
				return errorf("thinking_done without thinking before it")
			}
			thinking = false
		case "token", "tool_start", "ask_user", "resource":
			if thinking {
				return errorf("%s while thinking is open (no thinking_done)", e.name)
			}
			if e.name == "tool_start" {
				if args, ok := m["args"]; ok {
					if _, ok := args.(map[string]any); !ok {
						return errorf("tool_start args is not an object")
					}
				}
			}
			if e.name == "ask_user" {
				if err := checkQuestions(m["questions"]); err != nil {
					return err
				}
			}
		case "tool_args_heartbeat":
			if m["status"] != "generating_tool_args" {
				return errorf("tool_args_heartbeat status %v", m["status"])
			}
		case "done", "error":
			terminal = i
			if thinking {
				return errorf("%s while thinking is open", e.name)
			}
			for _, v := range m {
				if _, ok := v.(string); !ok {
					return errorf("%s: field is not a string: %v", e.name, m)
				}
			}
		}
	}
	return nil
}

// checkQuestions checks AskUserQuestion objects (specs/002 §3.4, §5).
func checkQuestions(v any) error {
	qs, ok := v.([]any)
	if !ok {
		return errorf("questions is not an array")
	}
	for _, q := range qs {
		m, ok := q.(map[string]any)
		if !ok {
			return errorf("question is not an object")
		}
		if err := checkFields("question", m, "id prompt options ? allowMultiple allowFreeText freeTextPlaceholder"); err != nil {
			return err
		}
		opts, _ := m["options"].([]any)
		if len(opts) == 0 && m["allowFreeText"] != true {
			return errorf("question without options nor free text: %v", m)
		}
		for _, o := range opts {
			om, _ := o.(map[string]any)
			if err := checkFields("option", om, "id label"); err != nil {
				return err
			}
		}
	}
	return nil
}

func TestScenarios(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			out := run(skillpet.New(testMeta()), s.evs)
			if err := checkStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			golden(t, s.name, out)
		})
	}
}

// TestEvents checks the events of small sequences, as "event data" lines.
func TestEvents(t *testing.T) {
	tests := []struct {
		name string
		meta func(*transform.Meta)
		evs  []transform.Event
		want []string
	}{
		{"reasoning_blocks_separated", nil, []transform.Event{
			ev(transform.KindReasoningStart), text(R, "a"), text(R, "b"), ev(transform.KindReasoningEnd),
			ev(transform.KindThinkingStart), phase(1, "Scope"), phaseDelta(1, "x"), phaseEnd(1),
			phase(2, "Plan"), phaseEnd(2), ev(transform.KindThinkingEnd),
			ev(transform.KindAnswerStart), text(F, "hi"), ev(transform.KindAnswerEnd), finish("stop"),
		}, []string{
			`thinking {"content":"a"}`, `thinking {"content":"b"}`,
			`thinking {"content":"\n\n**Scope**\n\n"}`, `thinking {"content":"x"}`,
			`thinking {"content":"\n\n**Plan**\n\n"}`,
			`thinking_done {}`, `token {"content":"hi"}`, `done {"conversationId":"msg-1"}`,
		}},
		{"empty_reasoning_block_no_separator", nil, []transform.Event{
			ev(transform.KindReasoningStart), ev(transform.KindReasoningEnd),
			ev(transform.KindReasoningStart), text(R, "a"), ev(transform.KindReasoningEnd), finish("stop"),
		}, []string{`thinking {"content":"a"}`, `thinking_done {}`, `done {"conversationId":"msg-1"}`}},
		{"no_thinking", func(m *transform.Meta) { m.NoThinking = true }, []transform.Event{
			ev(transform.KindReasoningStart), text(R, "a"), ev(transform.KindReasoningEnd),
			phase(1, "T"), phaseDelta(1, "x"), phaseEnd(1),
			ev(transform.KindAnswerStart), text(F, "hi"), ev(transform.KindAnswerEnd), finish("stop"),
		}, []string{`token {"content":"hi"}`, `done {"conversationId":"msg-1"}`}},
		{"thinking_done_at_tool_call", nil, []transform.Event{
			text(R, "plan"), toolStart(0, "c", "f"), toolEnd(0, "c", "f", `{"a":1}`), finish("stop"),
		}, []string{`thinking {"content":"plan"}`, `thinking_done {}`, `tool_start {"id":"c","name":"f","label":"f","args":{"a":1}}`, `done {"conversationId":"msg-1"}`}},
		{"thinking_done_at_end", nil, []transform.Event{text(R, "only"), finish("stop")},
			[]string{`thinking {"content":"only"}`, `thinking_done {}`, `done {"conversationId":"msg-1"}`}},
		{"thinking_done_before_error", nil, []transform.Event{text(R, "only"), failure("upstream_error", "cut")},
			[]string{`thinking {"content":"only"}`, `thinking_done {}`, `error {"message":"cut"}`}},
		{"reasoning_resumes_after_answer", nil, []transform.Event{
			text(R, "a"), ev(transform.KindAnswerStart), text(F, "x"),
			ev(transform.KindReasoningStart), text(R, "b"), ev(transform.KindReasoningEnd), text(F, "y"), finish("stop"),
		}, []string{`thinking {"content":"a"}`, `thinking_done {}`, `token {"content":"x"}`,
			`thinking {"content":"\n\nb"}`, `thinking_done {}`, `token {"content":"y"}`, `done {"conversationId":"msg-1"}`}},
		{"conversation_id", func(m *transform.Meta) { m.ConversationID = "conv_123" }, []transform.Event{finish("stop")},
			[]string{`done {"conversationId":"conv_123"}`}},
		{"serp_summary_status", nil, []transform.Event{text(transform.KindSerpSummary, "正在理解需求")},
			[]string{`status {"message":"正在理解需求"}`}},
		{"serp_queries_resource", nil, []transform.Event{{Kind: transform.KindSerpQueries, List: []string{"q1", "q\"2"}}},
			[]string{`resource {"resourceType":"serp_queries","data":["q1","q\"2"],"fallbackText":"相关搜索：q1、q\"2"}`}},
		{"serp_queries_empty", nil, []transform.Event{{Kind: transform.KindSerpQueries, List: []string{}}}, nil},
		{"artifacts_resource", nil, []transform.Event{text(transform.KindArtifacts, "[\"file-ready:pptx\", 3, \"quiz:1\"]")},
			[]string{`resource {"resourceType":"artifacts","data":["file-ready:pptx",3,"quiz:1"],"fallbackText":"产物：file-ready:pptx、quiz:1"}`}},
		{"artifacts_objects", nil, []transform.Event{text(transform.KindArtifacts, `[{"type":"code"}]`)},
			[]string{`resource {"resourceType":"artifacts","data":[{"type":"code"}]}`}},
		{"artifacts_empty", nil, []transform.Event{text(transform.KindArtifacts, " [ \n ] ")}, nil},
		{"artifacts_invalid", nil, []transform.Event{text(transform.KindArtifacts, `["a",`)},
			[]string{`resource {"resourceType":"artifacts","data":"[\"a\","}`}},
		{"artifacts_trailing_bracket", nil, []transform.Event{text(transform.KindArtifacts, `["a"]]`)},
			[]string{`resource {"resourceType":"artifacts","data":"[\"a\"]]"}`}},
		{"tool_start_invalid_args", nil, []transform.Event{toolEnd(0, "c", "f", `{"a":`)},
			[]string{`tool_start {"id":"c","name":"f","label":"f"}`}},
		{"tool_start_array_args", nil, []transform.Event{toolEnd(0, "c", "f", `[1]`)},
			[]string{`tool_start {"id":"c","name":"f","label":"f"}`}},
		{"tool_start_pretty_args", nil, []transform.Event{toolEnd(0, "c", "f", "{\n \"a\": [1, 2]\n}")},
			[]string{`tool_start {"id":"c","name":"f","label":"f","args":{"a":[1,2]}}`}},
		{"ask_user_no_tool_start", nil, []transform.Event{
			toolStart(0, "c", "ask_user"), toolArgs(0, "c", "ask_user", `{"questions":[`), toolEnd(0, "c", "ask_user", `{"questions":[{"prompt":"Q?","options":["a"]}]}`),
		}, []string{`tool_args_heartbeat {"status":"generating_tool_args"}`, `ask_user {"questions":[{"id":"q-0","prompt":"Q?","options":[{"id":"opt-0","label":"a"}]}]}`}},
		{"ask_user_invalid_args", nil, []transform.Event{toolEnd(0, "c", "ask_user", `{"questions":`)},
			[]string{`ask_user {"questions":[]}`}},
		{"clarify_ask_user", nil, []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Which class?", Options: []string{"7A", "7B"}, Hint: "needClassId"}}},
			[]string{`ask_user {"questions":[{"id":"clarify","prompt":"Which class?","options":[{"id":"opt-0","label":"7A"},{"id":"opt-1","label":"7B"}],"allowFreeText":true}]}`}},
		{"clarify_without_options", nil, []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Which?"}}},
			[]string{`ask_user {"questions":[{"id":"clarify","prompt":"Which?","options":[],"allowFreeText":true}]}`}},
		{"error_without_text", nil, []transform.Event{failure("upstream_timeout", "")},
			[]string{`error {"message":"upstream_timeout"}`}},
		{"ignored_kinds", nil, []transform.Event{
			routed("m", "u"), raw("<final>"), text(transform.KindUsage, `{"a":1}`), violation("x", 1, "d"),
			ev(transform.KindThinkingStart), ev(transform.KindThinkingEnd),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := testMeta()
			if tt.meta != nil {
				tt.meta(&meta)
			}
			out := run(skillpet.New(meta), tt.evs)
			if err := checkStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sse, _ := readSSE(out)
			var got []string
			for _, e := range sse {
				got = append(got, e.name+" "+e.data)
			}
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestArgsHeartbeatPacing checks tool_args_heartbeat: the first argument
// delta sends one, later ones at most once per second.
func TestArgsHeartbeatPacing(t *testing.T) {
	tests := []struct {
		name  string
		steps []time.Duration // clock reading at each argument delta
		want  int
	}{
		{"first_at_once", []time.Duration{0}, 1},
		{"within_a_second", []time.Duration{0, 300 * time.Millisecond, 999 * time.Millisecond}, 1},
		{"each_second", []time.Duration{0, time.Second, 1500 * time.Millisecond, 2 * time.Second}, 3},
		{"slow_deltas", []time.Duration{0, 5 * time.Second, 10 * time.Second}, 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			i := 0
			meta := testMeta()
			meta.Now = func() time.Time { return created.Add(tt.steps[i]) }
			enc := skillpet.New(meta)
			out := enc.AppendEvent(enc.Begin(nil), toolStart(0, "c", "f"))
			for i = range tt.steps {
				out = enc.AppendEvent(out, toolArgs(0, "c", "f", "x"))
			}
			if got := strings.Count(string(out), "event: tool_args_heartbeat\n"); got != tt.want {
				t.Errorf("%d tool_args_heartbeat, want %d\n%s", got, tt.want, out)
			}
		})
	}
}

func TestHeartbeatIsComment(t *testing.T) {
	enc := skillpet.New(testMeta())
	if got := string(enc.AppendHeartbeat(enc.Begin(nil), created)); got != ": keep-alive\n\n" {
		t.Errorf("heartbeat %q", got)
	}
	enc.AppendEvent(nil, finish("stop"))
	if got := enc.AppendHeartbeat(nil, created); len(got) != 0 {
		t.Errorf("heartbeat after done: %q", got)
	}
	if got := enc.AppendEvent(nil, text(F, "late")); len(got) != 0 {
		t.Errorf("event after done: %q", got)
	}
}

func TestZeroAllocs(t *testing.T) {
	tests := []struct {
		name string
		ev   transform.Event
	}{
		{"token", text(F, "some answer text, with \"quotes\"\n")},
		{"token_chinese", text(F, "三分化训练计划")},
		{"thinking", text(R, "reasoning text")},
		{"phase_delta", phaseDelta(1, "phase text")},
		{"tool_args", toolArgs(0, "c", "f", `{"a":1}`)},
		{"heartbeat", heartbeat()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := skillpet.New(testMeta())
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
	enc := skillpet.New(testMeta())
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
// and must write events with exactly the spec's shapes.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{14, 1, 15, 1, 16, 1, 25, 4, 18, 3, 23, 1}, `{"questions":[{"text":"q","choices":["a"]}]}`)
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		out := run(skillpet.New(testMeta()), fuzzEvents(ops, pool))
		if err := checkStream(out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}

func TestAppendChatFailed(t *testing.T) {
	got := string(skillpet.AppendChatFailed(nil, "upstream answered 401: \"bad key\""))
	want := `{"error":"CHAT_FAILED","message":"upstream answered 401: \"bad key\""}` + "\n"
	if got != want || skillpet.ChatFailedStatus != 502 {
		t.Errorf("got %q (status %d), want %q (502)", got, skillpet.ChatFailedStatus, want)
	}
}
