package skillpet_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/skillpet"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// shapes are the exact data fields of each skillpet event (specs/002 §3):
// required fields, then optional ones after a "?".
var shapes = map[string]string{
	"thinking":            "content",
	"thinking_done":       "",
	"token":               "content",
	"status":              "message",
	"round_start":         "round",
	"tool_start":          "id name label ? args agentId agentAvatarUrl",
	"tool_result":         "id name label mode status message ? options",
	"tool_args_heartbeat": "status",
	"ask_user":            "questions",
	"resource":            "resourceType data ? fallbackText",
	"resource_updated":    "key ? snapshot",
	"image_generating":    "id ? prompt",
	"image_generation":    "id images mode ? prompt minSelect maxSelect actions",
	"agent_thinking":      "id t agentName agentId",
	"agent_token":         "id t agentName agentId",
	"agent_tool_start":    "parentId name label",
	"agent_tool_result":   "parentId name summary status",
	"agent_round":         "id",
	"done":                "conversationId",
	"error":               "message",
}

// checkFields reports whether m has exactly the fields of shape.
func checkFields(name string, m map[string]any, shape string) error {
	req, opt, _ := strings.Cut(shape, "?")
	allowed := map[string]bool{}
	for _, k := range strings.Fields(req) {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("%s lacks %s: %v", name, k, m)
		}
		allowed[k] = true
	}
	for _, k := range strings.Fields(opt) {
		allowed[k] = true
	}
	for k := range m {
		if !allowed[k] {
			return fmt.Errorf("%s has field %s outside the spec's shape: %v", name, k, m)
		}
	}
	return nil
}

// checkStream checks a skillpet stream against specs/002 §3: known events
// with exactly the spec's fields and types, thinking_done only after
// thinking, no token while thinking is open, ask_user questions normalised,
// and done or error once and last.
func checkStream(out []byte) error {
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return err
	}
	terminal := -1
	thinking := false
	for i, e := range evs {
		if e.Comment {
			continue
		}
		if terminal >= 0 {
			return fmt.Errorf("event %d %s after the terminal event", i, e.Name)
		}
		shape, ok := shapes[e.Name]
		if !ok {
			return fmt.Errorf("event %d: unknown event %q", i, e.Name)
		}
		m, err := e.DecodeData()
		if err != nil {
			return err
		}
		if err := checkFields(e.Name, m, shape); err != nil {
			return err
		}
		switch e.Name {
		case "thinking":
			if _, ok := m["content"].(string); !ok {
				return fmt.Errorf("thinking content is not a string")
			}
			thinking = true
		case "thinking_done":
			if !thinking {
				return fmt.Errorf("thinking_done without thinking before it")
			}
			thinking = false
		case "token", "tool_start", "ask_user", "resource":
			if thinking {
				return fmt.Errorf("%s while thinking is open (no thinking_done)", e.Name)
			}
			if e.Name == "tool_start" {
				if args, ok := m["args"]; ok {
					if _, ok := args.(map[string]any); !ok {
						return fmt.Errorf("tool_start args is not an object")
					}
				}
			}
			if e.Name == "ask_user" {
				if err := checkQuestions(m["questions"]); err != nil {
					return err
				}
			}
		case "round_start":
			if thinking {
				return fmt.Errorf("round_start while thinking is open")
			}
		case "tool_result":
			switch {
			case m["mode"] == "auto" && (m["status"] == "completed" || m["status"] == "error"):
			case m["mode"] == "interactive" && m["status"] == "awaiting_user":
				// specs/002 §3.3: the user picks one of the options.
				if opts, ok := m["options"].([]any); !ok || len(opts) == 0 {
					return fmt.Errorf("an interactive tool_result without options")
				}
			case m["mode"] == "ask_user" && m["status"] == "awaiting_user":
			default:
				return fmt.Errorf("tool_result mode %v status %v", m["mode"], m["status"])
			}
		case "tool_args_heartbeat":
			if m["status"] != "generating_tool_args" {
				return fmt.Errorf("tool_args_heartbeat status %v", m["status"])
			}
		case "done", "error":
			terminal = i
			if thinking {
				return fmt.Errorf("%s while thinking is open", e.Name)
			}
			for _, v := range m {
				if _, ok := v.(string); !ok {
					return fmt.Errorf("%s: field is not a string: %v", e.Name, m)
				}
			}
		}
	}
	return nil
}

// checkQuestions checks AskUserQuestion objects (specs/002 §3.4, §5); a
// clarification's question may carry its hint (specs/004 §7.2).
func checkQuestions(v any) error {
	qs, ok := v.([]any)
	if !ok {
		return fmt.Errorf("questions is not an array")
	}
	for _, q := range qs {
		m, ok := q.(map[string]any)
		if !ok {
			return fmt.Errorf("question is not an object")
		}
		if err := checkFields("question", m, "id prompt options ? allowMultiple allowFreeText freeTextPlaceholder hint"); err != nil {
			return err
		}
		if _, ok := m["hint"]; ok && m["id"] != "clarify" {
			return fmt.Errorf("a hint on a question that is not a clarification: %v", m)
		}
		opts, _ := m["options"].([]any)
		if len(opts) == 0 && m["allowFreeText"] != true {
			return fmt.Errorf("question without options nor free text: %v", m)
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

// newEncoder returns a skillpet encoder for encodertest's checks.
func newEncoder() transform.Encoder { return skillpet.New(encodertest.Meta()) }

func TestScenarios(t *testing.T) {
	encodertest.CheckScenarios(t, "", func(evs []transform.Event) ([]byte, error) {
		out := encodertest.Run(newEncoder(), evs)
		return out, checkStream(out)
	})
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
			encodertest.Event(transform.KindReasoningStart), encodertest.Reasoning("a"), encodertest.Reasoning("b"), encodertest.Event(transform.KindReasoningEnd),
			encodertest.Event(transform.KindThinkingStart), encodertest.Phase(1, "Scope"), encodertest.PhaseDelta(1, "x"), encodertest.PhaseEnd(1),
			encodertest.Phase(2, "Plan"), encodertest.PhaseEnd(2), encodertest.Event(transform.KindThinkingEnd),
			encodertest.Event(transform.KindAnswerStart), encodertest.Answer("hi"), encodertest.Event(transform.KindAnswerEnd), encodertest.Finish("stop"),
		}, []string{
			`thinking {"content":"a"}`, `thinking {"content":"b"}`,
			`thinking {"content":"\n\n**Scope**\n\n"}`, `thinking {"content":"x"}`,
			`thinking {"content":"\n\n**Plan**\n\n"}`,
			`thinking_done {}`, `token {"content":"hi"}`, `done {"conversationId":"msg-1"}`,
		}},
		{"empty_reasoning_block_no_separator", nil, []transform.Event{
			encodertest.Event(transform.KindReasoningStart), encodertest.Event(transform.KindReasoningEnd),
			encodertest.Event(transform.KindReasoningStart), encodertest.Reasoning("a"), encodertest.Event(transform.KindReasoningEnd), encodertest.Finish("stop"),
		}, []string{`thinking {"content":"a"}`, `thinking_done {}`, `done {"conversationId":"msg-1"}`}},
		{"no_thinking", func(m *transform.Meta) { m.Request = request.SkillpetFacts{NoThinking: true} }, []transform.Event{
			encodertest.Event(transform.KindReasoningStart), encodertest.Reasoning("a"), encodertest.Event(transform.KindReasoningEnd),
			encodertest.Phase(1, "T"), encodertest.PhaseDelta(1, "x"), encodertest.PhaseEnd(1),
			encodertest.Event(transform.KindAnswerStart), encodertest.Answer("hi"), encodertest.Event(transform.KindAnswerEnd), encodertest.Finish("stop"),
		}, []string{`token {"content":"hi"}`, `done {"conversationId":"msg-1"}`}},
		{"thinking_done_at_tool_call", nil, []transform.Event{
			encodertest.Reasoning("plan"), encodertest.ToolStart(0, "c", "f"), encodertest.ToolEnd(0, "c", "f", `{"a":1}`), encodertest.Finish("stop"),
		}, []string{`thinking {"content":"plan"}`, `thinking_done {}`, `tool_start {"id":"c","name":"f","label":"f","args":{"a":1}}`, `done {"conversationId":"msg-1"}`}},
		{"thinking_done_at_end", nil, []transform.Event{encodertest.Reasoning("only"), encodertest.Finish("stop")},
			[]string{`thinking {"content":"only"}`, `thinking_done {}`, `done {"conversationId":"msg-1"}`}},
		{"thinking_done_before_error", nil, []transform.Event{encodertest.Reasoning("only"), encodertest.Failure("upstream_error", "cut")},
			[]string{`thinking {"content":"only"}`, `thinking_done {}`, `error {"message":"cut"}`}},
		{"reasoning_resumes_after_answer", nil, []transform.Event{
			encodertest.Reasoning("a"), encodertest.Event(transform.KindAnswerStart), encodertest.Answer("x"),
			encodertest.Event(transform.KindReasoningStart), encodertest.Reasoning("b"), encodertest.Event(transform.KindReasoningEnd), encodertest.Answer("y"), encodertest.Finish("stop"),
			// CONTRACT.md §7: no thinking after thinking_done; "b" is left
			// out of this protocol (reported in the log).
		}, []string{`thinking {"content":"a"}`, `thinking_done {}`, `token {"content":"x"}`,
			`token {"content":"y"}`, `done {"conversationId":"msg-1"}`}},
		{"conversation_id", func(m *transform.Meta) { m.Request = request.SkillpetFacts{ConversationID: "conv_123"} }, []transform.Event{encodertest.Finish("stop")},
			[]string{`done {"conversationId":"conv_123"}`}},
		{"serp_summary_status", nil, []transform.Event{encodertest.Text(transform.KindSerpSummary, "正在理解需求")},
			[]string{`status {"message":"正在理解需求"}`}},
		{"serp_queries_resource", nil, []transform.Event{encodertest.Answer("x"), {Kind: transform.KindSerpQueries, List: []string{"q1", "q\"2"}}},
			[]string{`token {"content":"x"}`, `resource {"resourceType":"serp_queries","data":["q1","q\"2"],"fallbackText":"相关搜索：q1、q\"2"}`}},
		// Before the reply, the serp queries wait for the end (see order).
		{"serp_queries_before_reply", nil, []transform.Event{{Kind: transform.KindSerpQueries, List: []string{"q"}}, encodertest.Reasoning("r"), encodertest.Answer("x"), encodertest.Finish("stop")},
			[]string{`thinking {"content":"r"}`, `thinking_done {}`, `token {"content":"x"}`, `resource {"resourceType":"serp_queries","data":["q"],"fallbackText":"相关搜索：q"}`, `done {"conversationId":"msg-1"}`}},
		{"serp_queries_empty", nil, []transform.Event{{Kind: transform.KindSerpQueries, List: []string{}}}, nil},
		{"artifacts_resource", nil, []transform.Event{encodertest.Text(transform.KindArtifacts, "[\"file-ready:pptx\", 3, \"quiz:1\"]")},
			[]string{`resource {"resourceType":"artifacts","data":["file-ready:pptx",3,"quiz:1"],"fallbackText":"产物：file-ready:pptx、quiz:1"}`}},
		{"artifacts_objects", nil, []transform.Event{encodertest.Text(transform.KindArtifacts, `[{"type":"code"}]`)},
			[]string{`resource {"resourceType":"artifacts","data":[{"type":"code"}]}`}},
		{"artifacts_empty", nil, []transform.Event{encodertest.Text(transform.KindArtifacts, " [ \n ] ")}, nil},
		{"artifacts_invalid", nil, []transform.Event{encodertest.Text(transform.KindArtifacts, `["a",`)},
			[]string{`resource {"resourceType":"artifacts","data":"[\"a\","}`}},
		{"artifacts_trailing_bracket", nil, []transform.Event{encodertest.Text(transform.KindArtifacts, `["a"]]`)},
			[]string{`resource {"resourceType":"artifacts","data":"[\"a\"]]"}`}},
		{"tool_start_invalid_args", nil, []transform.Event{encodertest.ToolEnd(0, "c", "f", `{"a":`)},
			[]string{`tool_start {"id":"c","name":"f","label":"f"}`}},
		{"tool_start_array_args", nil, []transform.Event{encodertest.ToolEnd(0, "c", "f", `[1]`)},
			[]string{`tool_start {"id":"c","name":"f","label":"f"}`}},
		{"tool_start_pretty_args", nil, []transform.Event{encodertest.ToolEnd(0, "c", "f", "{\n \"a\": [1, 2]\n}")},
			[]string{`tool_start {"id":"c","name":"f","label":"f","args":{"a":[1,2]}}`}},
		{"ask_user_no_tool_start", nil, []transform.Event{
			encodertest.ToolStart(0, "c", "ask_user"), encodertest.ToolArgs(0, "c", "ask_user", `{"questions":[`), encodertest.ToolEnd(0, "c", "ask_user", `{"questions":[{"prompt":"Q?","options":["a"]}]}`),
		}, []string{`tool_args_heartbeat {"status":"generating_tool_args"}`, `ask_user {"questions":[{"id":"q-0","prompt":"Q?","options":[{"id":"opt-0","label":"a"}]}]}`}},
		{"ask_user_invalid_args", nil, []transform.Event{encodertest.ToolEnd(0, "c", "ask_user", `{"questions":`)},
			[]string{`ask_user {"questions":[]}`}},
		{"clarify_ask_user", nil, []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Which class?", Options: []string{"7A", "7B"}, Hint: "needClassId"}}},
			[]string{`ask_user {"questions":[{"id":"clarify","prompt":"Which class?","options":[{"id":"opt-0","label":"7A"},{"id":"opt-1","label":"7B"}],"allowFreeText":true,"hint":"needClassId"}]}`}},
		{"clarify_without_options", nil, []transform.Event{{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Which?"}}},
			[]string{`ask_user {"questions":[{"id":"clarify","prompt":"Which?","options":[],"allowFreeText":true}]}`}},
		{"interactive_tool_awaits", nil, []transform.Event{
			encodertest.ToolRun(0, "c1", "choose", `{}`, "选方向", "demo", 1),
			encodertest.ToolAwait(0, "c1", "choose", transform.Await{Kind: transform.AwaitChoice, Message: "请确认创意方向",
				Options: []transform.Option{{ID: "approve", Label: "确认可行", Description: "继续推进"}, {ID: "revise", Label: "需要调整"}}}),
			encodertest.Finish("tool_calls"),
		}, []string{`tool_start {"id":"c1","name":"choose","label":"选方向","args":{}}`,
			`tool_result {"id":"c1","name":"choose","label":"选方向","mode":"interactive","status":"awaiting_user","message":"请确认创意方向","options":[{"id":"approve","label":"确认可行","description":"继续推进"},{"id":"revise","label":"需要调整"}]}`,
			`done {"conversationId":"msg-1"}`}},
		{"artifact_resources", nil, []transform.Event{
			encodertest.ToolRun(0, "c1", "generate_pptx", `{}`, "PPT", "s", 1),
			{Kind: transform.KindToolResult, Index: 0, ID: "c1", Name: "generate_pptx", Tool: &transform.Tool{Status: transform.ToolCompleted, Output: "ok",
				Artifacts: []transform.Artifact{{Kind: "file-ready", URL: "/a?llmstream_file=f1", Name: "deck.pptx", Type: "application/pptx"},
					{Kind: "quiz-complete", Data: []byte(`{"n":2}`)}}}},
		}, []string{`tool_start {"id":"c1","name":"generate_pptx","label":"PPT","args":{}}`,
			`tool_result {"id":"c1","name":"generate_pptx","label":"PPT","mode":"auto","status":"completed","message":"ok"}`,
			`resource {"resourceType":"file-ready","data":{"url":"/a?llmstream_file=f1","name":"deck.pptx","type":"application/pptx"},"fallbackText":"文件：deck.pptx"}`,
			`resource {"resourceType":"quiz-complete","data":{"n":2}}`}},
		{"image_tool", nil, []transform.Event{
			{Kind: transform.KindToolRun, Index: 0, ID: "c1", Name: "generate_image", Text: []byte(`{"prompt":"一只猫","count":2}`),
				Tool: &transform.Tool{Label: "生成图片", Server: "demo", Round: 1, Image: "single_select"}},
			{Kind: transform.KindToolResult, Index: 0, ID: "c1", Name: "generate_image", Tool: &transform.Tool{Status: transform.ToolCompleted, Output: "2 images",
				Images: []transform.Image{{ID: "img-0", URL: "/s?llmstream_file=a"}, {ID: "img-1", URL: "/s?llmstream_file=b", Label: "B"}}}},
		}, []string{`tool_start {"id":"c1","name":"generate_image","label":"生成图片","args":{"prompt":"一只猫","count":2}}`,
			`image_generating {"id":"img-c1","prompt":"一只猫"}`,
			`tool_result {"id":"c1","name":"generate_image","label":"生成图片","mode":"auto","status":"completed","message":"2 images"}`,
			`image_generation {"id":"img-c1","prompt":"一只猫","images":[{"id":"img-0","url":"/s?llmstream_file=a"},{"id":"img-1","url":"/s?llmstream_file=b","label":"B"}],"mode":"single_select","minSelect":1,"maxSelect":1}`}},
		{"agent_tool_start_and_stream", nil, []transform.Event{
			{Kind: transform.KindToolRun, Index: 0, ID: "c1", Name: "consult_agent", Text: []byte(`{"agent":"analyst"}`),
				Tool: &transform.Tool{Label: "委托分析师", AgentID: "analyst", AgentName: "分析师", AgentAvatar: "/a.png"}},
			{Kind: transform.KindAgent, ID: "c1", Code: transform.AgentThinking, Text: []byte("想"), Tool: &transform.Tool{AgentID: "analyst", AgentName: "分析师"}},
			{Kind: transform.KindAgent, ID: "c1", Code: transform.AgentToolStart, Name: "save", Tool: &transform.Tool{Label: "保存", AgentID: "analyst"}},
			{Kind: transform.KindAgent, ID: "c1", Code: transform.AgentToolResult, Name: "save", Tool: &transform.Tool{Status: transform.ToolCompleted, Output: "ok\nmore", AgentID: "analyst"}},
			{Kind: transform.KindAgent, ID: "c1", Code: transform.AgentRound, Tool: &transform.Tool{AgentID: "analyst"}},
			{Kind: transform.KindAgent, ID: "c1", Code: transform.AgentToken, Text: []byte("结论"), Tool: &transform.Tool{AgentID: "analyst", AgentName: "分析师"}},
			{Kind: transform.KindAgent, ID: "other", Code: transform.AgentToken, Text: []byte("x"), Tool: &transform.Tool{}},
		}, []string{`tool_start {"id":"c1","name":"consult_agent","label":"委托分析师","args":{"agent":"analyst"},"agentId":"analyst","agentAvatarUrl":"/a.png"}`,
			`agent_thinking {"id":"c1","t":"想","agentName":"分析师","agentId":"analyst"}`,
			`agent_tool_start {"parentId":"c1","name":"save","label":"保存"}`,
			`agent_tool_result {"parentId":"c1","name":"save","summary":"ok","status":"completed"}`,
			`agent_round {"id":"c1"}`,
			`agent_token {"id":"c1","t":"结论","agentName":"分析师","agentId":"analyst"}`}},
		{"resource_updated", nil, []transform.Event{
			{Kind: transform.KindResourceUpdated, Name: "bookPlan", Text: []byte(`{"status": "planning"}`)},
			{Kind: transform.KindResourceUpdated, Name: "units", Text: []byte(`[1,2]`)},
			{Kind: transform.KindResourceUpdated, Name: "x", Text: []byte(`not json`)},
		}, []string{`resource_updated {"key":"bookPlan","snapshot":{"status":"planning"}}`,
			`resource_updated {"key":"units","snapshot":{"value":[1,2]}}`, `resource_updated {"key":"x"}`}},
		{"json_resource_part", nil, []transform.Event{
			encodertest.ToolRun(0, "c1", "extract", `{}`, "提取", "s", 1),
			{Kind: transform.KindToolResult, Index: 0, ID: "c1", Name: "extract", Tool: &transform.Tool{Status: transform.ToolCompleted, Output: "ok",
				Artifacts: []transform.Artifact{{Kind: "resource", Name: "characters", Data: []byte(`[{"name":"叶无锋"}]`)}}}},
		}, []string{`tool_start {"id":"c1","name":"extract","label":"提取","args":{}}`,
			`tool_result {"id":"c1","name":"extract","label":"提取","mode":"auto","status":"completed","message":"ok"}`,
			`resource {"resourceType":"characters","data":[{"name":"叶无锋"}]}`}},
		{"elicited_form_awaits", nil, []transform.Event{
			encodertest.ToolRun(0, "c1", "signup", `{}`, "signup", "ev", 1),
			encodertest.ToolAwait(0, "c1", "signup", transform.Await{Kind: transform.AwaitForm, Message: "Fill in",
				Questions: []transform.Question{{ID: "name", Prompt: "Name", AllowFreeText: true, Placeholder: "Your name"},
					{ID: "pets", Prompt: "Pets", AllowMultiple: true, Options: []transform.Option{{ID: "p1", Label: "Cats"}}}}}),
			encodertest.Finish("tool_calls"),
		}, []string{`tool_start {"id":"c1","name":"signup","label":"signup","args":{}}`,
			`tool_result {"id":"c1","name":"signup","label":"signup","mode":"ask_user","status":"awaiting_user","message":"Fill in"}`,
			`ask_user {"questions":[{"id":"name","prompt":"Name","options":[],"allowFreeText":true,"freeTextPlaceholder":"Your name"},{"id":"pets","prompt":"Pets","options":[{"id":"p1","label":"Cats"}],"allowMultiple":true}]}`,
			`done {"conversationId":"msg-1"}`}},
		{"error_without_text", nil, []transform.Event{encodertest.Failure("upstream_timeout", "")},
			[]string{`error {"message":"upstream_timeout"}`}},
		{"ignored_kinds", nil, []transform.Event{
			encodertest.Routed("m", "u"), encodertest.Raw("<final>"), encodertest.Text(transform.KindUsage, `{"a":1}`), encodertest.Violation("x", 1, "d"),
			encodertest.Event(transform.KindThinkingStart), encodertest.Event(transform.KindThinkingEnd),
		}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := encodertest.Meta()
			if tt.meta != nil {
				tt.meta(&meta)
			}
			out := encodertest.Run(skillpet.New(meta), tt.evs)
			if err := checkStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sse, _ := encodertest.ReadSSE(out)
			var got []string
			for _, e := range sse {
				got = append(got, e.Name+" "+e.Data)
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
			meta := encodertest.Meta()
			meta.Now = func() time.Time { return encodertest.Created.Add(tt.steps[i]) }
			enc := skillpet.New(meta)
			out := enc.AppendEvent(enc.Begin(nil), encodertest.ToolStart(0, "c", "f"))
			for i = range tt.steps {
				out = enc.AppendEvent(out, encodertest.ToolArgs(0, "c", "f", "x"))
			}
			if got := strings.Count(string(out), "event: tool_args_heartbeat\n"); got != tt.want {
				t.Errorf("%d tool_args_heartbeat, want %d\n%s", got, tt.want, out)
			}
		})
	}
}

func TestHeartbeatIsComment(t *testing.T) {
	enc := skillpet.New(encodertest.Meta())
	if got := string(enc.AppendHeartbeat(enc.Begin(nil), encodertest.Created)); got != ": keep-alive\n\n" {
		t.Errorf("heartbeat %q", got)
	}
}

func TestNothingAfterTerminal(t *testing.T) {
	encodertest.CheckNothingAfterTerminal(t, newEncoder)
}

func TestZeroAllocs(t *testing.T) {
	encodertest.CheckZeroAllocs(t, newEncoder, nil)
}

func BenchmarkEncoder(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), nil, transform.KindReasoningDelta, transform.KindAnswerDelta)
}

// FuzzEncoder feeds arbitrary event sequences: the encoder must not panic
// and must write events with exactly the spec's shapes.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{14, 1, 15, 1, 16, 1, 25, 4, 18, 3, 23, 1}, `{"questions":[{"text":"q","choices":["a"]}]}`)
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1}, "\xe4\xbd\xa0好")
	f.Add([]byte{11, 0, 1, 0, 2, 3, 3, 0, 5, 0, 7, 1, 8, 2, 9, 1, 6, 0}, "answer before thought")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		meta := encodertest.Meta()
		meta.Limits.MaxBlockBytes = 8
		// Whatever the order of the events, the stream keeps the spec's
		// (CONTRACT.md §7); the pipeline's other promises stand.
		evs := encodertest.Promised(encodertest.FuzzEvents(ops, pool))
		out := encodertest.Run(skillpet.New(meta), evs)
		if err := checkStream(out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if _, err := wiretest.Check("skillpet", out, meta); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}

func TestAppendChatFailed(t *testing.T) {
	got := string(skillpet.AppendChatFailed(nil, "upstream answered 401: \"bad key\""))
	want := `{"error":"CHAT_FAILED","message":"upstream answered 401: \"bad key\""}` + "\n"
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
