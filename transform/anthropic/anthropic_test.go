package anthropic_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/anthropic"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// meta is encodertest's Meta with the facts of a request that turned
// thinking on, opted in to the MCP connector's blocks and was estimated at
// 42 input tokens.
func meta(stream bool) transform.Meta {
	m := encodertest.Meta()
	m.MessageID = "msg_1"
	m.Stream = stream
	m.Request = anthropic.Request{Thinking: true, MCPBlocks: true, InputTokens: 42}
	return m
}

func newEncoder() transform.Encoder { return anthropic.New(meta(true)) }

func newWholeEncoder() *anthropic.Encoder { return anthropic.New(meta(false)) }

func TestScenarios(t *testing.T) {
	encodertest.CheckScenarios(t, "", func(evs []transform.Event) ([]byte, error) {
		out := encodertest.Run(newEncoder(), evs)
		a, err := checkStream(out)
		if err == nil && !a.ended {
			err = fmt.Errorf("the stream ends without message_stop or error")
		}
		return out, err
	})
	encodertest.CheckScenarios(t, "_whole", func(evs []transform.Event) ([]byte, error) {
		enc := newWholeEncoder()
		out := encodertest.Run(enc, evs)
		if len(out) == 0 {
			return out, nil
		}
		_, err := checkWhole(out, enc.Status())
		return out, err
	})
}

// TestMCPBlocksNeedTheBeta: a client that did not opt in to the MCP
// connector's blocks gets the rounds' text and thinking only, in blocks
// with contiguous indices, and the loop's calls leave no trace; the stop
// reason is its own calls' (mixed_turn's client call).
func TestMCPBlocksNeedTheBeta(t *testing.T) {
	for _, name := range []string{"server_tools", "mixed_turn", "max_rounds", "error_while_tool_runs"} {
		for _, stream := range []bool{true, false} {
			m := meta(stream)
			m.Request = anthropic.Request{Thinking: true, InputTokens: 42}
			enc := anthropic.New(m)
			out := encodertest.Run(enc, encodertest.ScenarioEvents(name))
			if strings.Contains(string(out), "mcp_tool") {
				t.Errorf("%s (stream %v): an MCP block without the beta:\n%s", name, stream, out)
			}
			var a *assembled
			var err error
			if stream {
				a, err = checkStream(out)
			} else {
				a, err = checkWhole(out, enc.Status())
			}
			if err != nil {
				t.Fatalf("%s (stream %v): %v\n%s", name, stream, err, out)
			}
			if name == "server_tools" {
				if stream {
					// What a client without the beta gets, for e2e's SDKs.
					encodertest.Golden(t, "server_tools_no_mcp", out)
				}
				want := []string{"thinking:Need data.", "text:Let me look.", "thinking:Got it.", "text:Caddy is a web server."}
				if got := blockStrings(a); !slices.Equal(got, want) || a.stopReason != "end_turn" {
					t.Errorf("server_tools (stream %v): %q %s, want %q end_turn", stream, got, a.stopReason, want)
				}
			}
			if name == "mixed_turn" && a.stopReason != "tool_use" {
				t.Errorf("mixed_turn (stream %v): stop_reason %s", stream, a.stopReason)
			}
		}
	}
	out := encodertest.Run(anthropic.New(meta(true)), encodertest.ScenarioEvents("server_tools"))
	a, err := checkStream(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"thinking:Need data.", "text:Let me look.",
		`mcp_tool_use:call_1 search_knowledge {"query":"caddy"}`, `mcp_tool_use:call_2 get_weather {"city":"Paris"}`,
		"mcp_tool_result:call_2 ok 18°C, sunny", "mcp_tool_result:call_1 ok Caddy is a web server.",
		"thinking:Got it.", "text:Caddy is a web server.",
	}
	if got := blockStrings(a); !slices.Equal(got, want) || a.stopReason != "end_turn" {
		t.Errorf("with the beta: %q %s, want %q end_turn", got, a.stopReason, want)
	}
}

// TestHeaderFacts: the anthropic-beta header, repeated or a list, opts in
// to the MCP blocks with any mcp-client beta; other facts are kept, and
// another format's facts pass through.
func TestHeaderFacts(t *testing.T) {
	tests := []struct {
		betas []string
		want  bool
	}{
		{nil, false},
		{[]string{"interleaved-thinking-2025-05-14"}, false},
		{[]string{"mcp-client-2025-04-04"}, true},
		{[]string{"interleaved-thinking-2025-05-14, mcp-client-2025-11-20"}, true},
		{[]string{"fine-grained-tool-streaming-2025-05-14", " mcp-client-2026-09-15 "}, true},
		{[]string{"mcp-client"}, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		for _, b := range tt.betas {
			h.Add("anthropic-beta", b)
		}
		got := anthropic.HeaderFacts(h, anthropic.Request{Thinking: true, InputTokens: 7})
		if got != (anthropic.Request{Thinking: true, InputTokens: 7, MCPBlocks: tt.want}) {
			t.Errorf("%q: %+v, want MCPBlocks %v", tt.betas, got, tt.want)
		}
	}
	if got := anthropic.HeaderFacts(http.Header{"Anthropic-Beta": {"mcp-client-2025-04-04"}}, "other"); got != "other" {
		t.Errorf("another format's facts became %v", got)
	}
}

// Shorthands for the tables below.
var (
	routed   = encodertest.Routed("up-model", "up-1")
	answer   = encodertest.Answer
	reason   = encodertest.Reasoning
	toolS    = encodertest.ToolStart
	toolA    = encodertest.ToolArgs
	toolE    = encodertest.ToolEnd
	finish   = encodertest.Finish
	rStart   = encodertest.Event(transform.KindReasoningStart)
	rEnd     = encodertest.Event(transform.KindReasoningEnd)
	ansStart = encodertest.Event(transform.KindAnswerStart)
	ansEnd   = encodertest.Event(transform.KindAnswerEnd)
)

// TestAssembled checks the blocks a client assembles from the stream, the
// stop reason, and that the whole Message says the same.
func TestAssembled(t *testing.T) {
	tests := []struct {
		name   string
		evs    []transform.Event
		blocks []string
		stop   string
	}{
		{"thinkingml", encodertest.ScenarioEvents("thinkingml"),
			[]string{"thinking:draft\n\n**Scope**\n\nDo X\n\n**Plan**\n\nThen Y", "text:# Plan\n- Day 1"}, "end_turn"},
		{"reasoning_between_answer_parts", encodertest.ScenarioEvents("native_reasoning"),
			[]string{"thinking:first thought", "text:Hello", "thinking:second thought", "text: world"}, "end_turn"},
		{"tool_calls", encodertest.ScenarioEvents("tool_calls"),
			[]string{"text:Checking.", `tool_use:call_1 get_weather {"city":"Paris"}`,
				`tool_use:call_2 ask_user {"questions":[{"question":"Which genre?","choices":["Fantasy","Sci-fi"]}]}`,
				`tool_use:call_3 broken {"a": 1,`, "tool_use:call_4 no_args {}", "tool_use:call_5 pretty {\n  \"x\": [1, 2]\n}"},
			"tool_use"},
		{"aiplan_stop_is_tool_use", encodertest.ScenarioEvents("aiplan_tool_calls"),
			[]string{"thinking:**Thought**\n\nNeed the weather.", `tool_use:call_a get_weather {"city":"Oslo"}`}, "tool_use"},
		{"length", []transform.Event{routed, ansStart, answer("cut"), ansEnd, finish("length")},
			[]string{"text:cut"}, "max_tokens"},
		{"content_filter", []transform.Event{routed, answer("no"), finish("content_filter")},
			[]string{"text:no"}, "refusal"},
		{"tool_calls_reason_without_calls", []transform.Event{routed, answer("x"), finish("tool_calls")},
			[]string{"text:x"}, "end_turn"},
		{"empty_finish_reason", []transform.Event{routed, finish("")}, nil, "end_turn"},
		{"unrouted", []transform.Event{answer("x"), finish("stop")}, []string{"text:x"}, "end_turn"},
		{"empty_deltas_open_nothing", []transform.Event{routed, rStart, reason(""), rEnd, answer(""), finish("stop")}, nil, "end_turn"},
		{"phase_without_title", []transform.Event{routed, encodertest.Phase(1, ""), encodertest.PhaseDelta(1, "x"),
			encodertest.PhaseEnd(1), encodertest.Phase(2, "T"), encodertest.PhaseEnd(2), finish("stop")},
			[]string{"thinking:x\n\n**T**\n\n"}, "end_turn"},
		// A second call's events wait while the first's arguments are
		// incomplete, so that each block streams whole and in order.
		{"interleaved_tool_calls", []transform.Event{routed,
			toolS(0, "a", "f"), toolS(1, "b", "g"), toolA(1, "b", "g", `{"y":`), toolA(0, "a", "f", `{"x":1`),
			toolA(1, "b", "g", `2}`), toolA(0, "a", "f", `}`), toolE(1, "b", "g", `{"y":2}`), toolE(0, "a", "f", `{"x":1}`), finish("tool_calls")},
			[]string{`tool_use:a f {"x":1}`, `tool_use:b g {"y":2}`}, "tool_use"},
		// Native calls end only at the finish: a call whose arguments are
		// complete stops when the next starts, so both stream at once.
		{"sequential_native_calls", []transform.Event{routed,
			toolS(0, "a", "f"), toolA(0, "a", "f", `{"x":1}`), toolS(1, "b", "g"), toolA(1, "b", "g", `{"y":2}`),
			toolE(0, "a", "f", `{"x":1}`), toolE(1, "b", "g", `{"y":2}`), finish("tool_calls")},
			[]string{`tool_use:a f {"x":1}`, `tool_use:b g {"y":2}`}, "tool_use"},
		{"text_inside_a_call_waits", []transform.Event{routed,
			toolS(0, "a", "f"), toolA(0, "a", "f", `{"x":`), answer("later"), rStart, reason("hm"), rEnd,
			toolA(0, "a", "f", `1}`), answer(" text"), toolE(0, "a", "f", `{"x":1}`), finish("stop")},
			[]string{`tool_use:a f {"x":1}`, "text:later", "thinking:hm", "text: text"}, "tool_use"},
		{"incomplete_call_holds_until_its_end", []transform.Event{routed,
			toolS(0, "a", "f"), toolA(0, "a", "f", `"scalar`), answer("after"), toolE(0, "a", "f", `"scalar`), finish("stop")},
			[]string{`tool_use:a f "scalar`, "text:after"}, "tool_use"},
		// Bytes a stopped call gets after its complete arguments could only
		// make them invalid; the client keeps the valid input.
		{"late_bytes_after_complete_arguments", []transform.Event{routed,
			toolS(0, "a", "f"), toolA(0, "a", "f", `{}`), answer("t"), toolA(0, "a", "f", `}`), toolE(0, "a", "f", `{}}`), finish("stop")},
			[]string{`tool_use:a f {}`, "text:t"}, "tool_use"},
		{"end_without_start", []transform.Event{routed, answer("a"), toolE(0, "a", "f", `{"q":1}`), finish("stop")},
			[]string{"text:a", `tool_use:a f {"q":1}`}, "tool_use"},
		{"duplicate_start_and_stray_args", []transform.Event{routed,
			toolA(5, "z", "f", `{"lost":1}`), toolS(0, "a", "f"), toolS(0, "a", "f"), toolA(0, "a", "f", `{}`), toolE(0, "a", "f", `{}`),
			toolE(0, "a", "f", `{}`), finish("stop")},
			[]string{`tool_use:a f {}`}, "tool_use"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := encodertest.Run(newEncoder(), tt.evs)
			a, err := checkStream(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := blockStrings(a); strings.Join(got, "|") != strings.Join(tt.blocks, "|") || a.stopReason != tt.stop {
				t.Errorf("stream assembled\n%q %s\nwant\n%q %s\n%s", got, a.stopReason, tt.blocks, tt.stop, out)
			}
			enc := newWholeEncoder()
			wout := encodertest.Run(enc, tt.evs)
			w, err := checkWhole(wout, enc.Status())
			if err != nil {
				t.Fatalf("%v\n%s", err, wout)
			}
			if got := wholeStrings(w); strings.Join(got, "|") != strings.Join(wantWhole(tt.blocks), "|") || w.stopReason != tt.stop {
				t.Errorf("whole Message\n%q %s\nwant\n%q %s", got, w.stopReason, wantWhole(tt.blocks), tt.stop)
			}
		})
	}
}

// blockStrings renders the assembled blocks.
func blockStrings(a *assembled) []string {
	var out []string
	for _, b := range a.blocks {
		out = append(out, b.String())
	}
	return out
}

// wholeStrings renders a whole Message's blocks, a tool's input in
// canonical JSON.
func wholeStrings(a *assembled) []string {
	out := blockStrings(a)
	for i, b := range a.blocks {
		if b.Type == "tool_use" || b.Type == "mcp_tool_use" {
			out[i] = b.Type + ":" + b.ID + " " + b.Name + " " + canonical([]byte(b.Text))
		}
	}
	return out
}

// canonical re-encodes a JSON value, so that escapes compare equal.
func canonical(raw []byte) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		return "invalid JSON " + string(raw)
	}
	out, _ := json.Marshal(v)
	return string(out)
}

// wantWhole is what the whole Message holds for the stream's blocks: tool
// inputs compacted when valid JSON, else the text as a JSON string.
func wantWhole(blocks []string) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b
		typ, rest, _ := strings.Cut(b, ":")
		if typ != "tool_use" && typ != "mcp_tool_use" {
			continue
		}
		parts := strings.SplitN(rest, " ", 3)
		out[i] = typ + ":" + parts[0] + " " + parts[1] + " " + canonical(appendOrString(parts[2]))
	}
	return out
}

// appendOrString is a whole Message's tool input for arguments s.
func appendOrString(s string) []byte {
	if strings.TrimSpace(s) == "" {
		return []byte("{}")
	}
	return jsonout.AppendOrString(nil, []byte(s))
}

// TestThinkingOff: a request that did not turn thinking on gets no
// thinking blocks, as from Anthropic; the answer is its first block.
func TestThinkingOff(t *testing.T) {
	m := meta(true)
	m.Request = anthropic.Request{}
	out := encodertest.Run(anthropic.New(m), encodertest.ScenarioEvents("thinkingml"))
	a, err := checkStream(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := blockStrings(a); len(got) != 1 || got[0] != "text:# Plan\n- Day 1" || a.blocks[0].Type != "text" {
		t.Errorf("blocks %q", got)
	}
	// Without facts (a route whose clients send OpenAI bodies) the
	// reasoning is shown.
	m.Request = nil
	a, _ = checkStream(encodertest.Run(anthropic.New(m), encodertest.ScenarioEvents("native_reasoning")))
	if a == nil || len(a.blocks) == 0 || a.blocks[0].Type != "thinking" {
		t.Errorf("no thinking without request facts: %+v", a)
	}
}

// TestUsage checks message_start's estimate and the usage the upstream
// reported, mapped onto Anthropic's fields.
func TestUsage(t *testing.T) {
	tests := []struct {
		name, usage string
		delta       string // message_delta's usage, as JSON
		whole       string
	}{
		{"openai", `{"prompt_tokens":100,"completion_tokens":20,"total_tokens":120}`,
			`{"input_tokens":100,"output_tokens":20}`, `{"input_tokens":100,"output_tokens":20}`},
		{"cached", `{"prompt_tokens":100,"completion_tokens":5,"prompt_tokens_details":{"cached_tokens":60}}`,
			`{"input_tokens":40,"cache_read_input_tokens":60,"output_tokens":5}`, `{"input_tokens":40,"cache_read_input_tokens":60,"output_tokens":5}`},
		{"none", ``, `{"output_tokens":0}`, `{"input_tokens":42,"output_tokens":0}`},
		{"not_json", `{"prompt_tokens":`, `{"output_tokens":0}`, `{"input_tokens":42,"output_tokens":0}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			evs := []transform.Event{routed, answer("hi")}
			if tt.usage != "" {
				evs = append(evs, encodertest.Text(transform.KindUsage, `{"prompt_tokens":1}`), encodertest.Text(transform.KindUsage, tt.usage))
			}
			evs = append(evs, finish("stop"))
			out := string(encodertest.Run(newEncoder(), evs))
			if !strings.Contains(out, `"usage":{"input_tokens":42,"output_tokens":0}}}`) {
				t.Errorf("message_start lacks the estimate:\n%s", out)
			}
			if !strings.Contains(out, `"usage":`+tt.delta+"}\n\n") {
				t.Errorf("message_delta usage, want %s:\n%s", tt.delta, out)
			}
			whole := string(encodertest.Run(newWholeEncoder(), evs))
			if !strings.Contains(whole, `"usage":`+tt.whole+"}\n") {
				t.Errorf("Message usage, want %s:\n%s", tt.whole, whole)
			}
		})
	}
}

// TestErrors checks the error event, the error body and the status of a
// whole Message.
func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		ev     transform.Event
		typ    string
		code   string
		msg    string
		status int
	}{
		{"provider_error", encodertest.Failure(transform.CodeProviderError, "upstream answered 401"), "api_error", "provider_error", "upstream answered 401", 502},
		{"timeout", encodertest.Failure(transform.CodeUpstreamTimeout, ""), "timeout_error", "upstream_timeout", "upstream_timeout", 504},
		{"limit", encodertest.Failure(transform.CodeReplyTooLarge, "too big"), "api_error", "reply_too_large", "too big", 502},
		{"no_code", encodertest.Failure("", "x"), "api_error", "upstream_error", "x", 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := anthropic.New(meta(true))
			out := encodertest.Run(enc, []transform.Event{routed, answer("partial"), tt.ev})
			a, err := checkStream(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := apiError{tt.typ, tt.msg, tt.code}
			if a.err == nil || *a.err != want || blockStrings(a)[0] != "text:partial" {
				t.Errorf("stream ended %+v, want %+v after the partial text\n%s", a.err, want, out)
			}
			if strings.Contains(string(out), "content_block_stop") {
				t.Errorf("the open block was stopped before the error:\n%s", out)
			}
			if enc.Status() != http.StatusOK {
				t.Errorf("stream status %d", enc.Status())
			}
			whole := newWholeEncoder()
			wout := encodertest.Run(whole, []transform.Event{routed, encodertest.Heartbeat(), answer("partial"), tt.ev})
			w, err := checkWhole(wout, whole.Status())
			if err != nil {
				t.Fatalf("%v\n%s", err, wout)
			}
			if w.err == nil || *w.err != want || whole.Status() != tt.status {
				t.Errorf("whole body %s with status %d, want %+v and %d", wout, whole.Status(), want, tt.status)
			}
		})
	}
}

// TestErrorLeavesAnIncompleteToolOpen: a tool_use block cut off by an
// error is not stopped (Claude Code would run it), but events held behind
// it are delivered first.
func TestErrorLeavesAnIncompleteToolOpen(t *testing.T) {
	out := encodertest.Run(newEncoder(), []transform.Event{routed,
		toolS(0, "a", "bash"), toolA(0, "a", "bash", `{"cmd":"rm`), encodertest.Failure(transform.CodeUpstreamError, "cut")})
	if strings.Contains(string(out), "content_block_stop") {
		t.Errorf("the cut tool_use block was stopped:\n%s", out)
	}
	out = encodertest.Run(newEncoder(), []transform.Event{routed,
		toolS(0, "a", "f"), toolA(0, "a", "f", `{"x":`), answer("held"), encodertest.Failure(transform.CodeUpstreamError, "cut")})
	a, err := checkStream(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := blockStrings(a); strings.Join(got, "|") != `tool_use:a f {"x":|text:held` || a.err == nil {
		t.Errorf("blocks %q, error %v", got, a.err)
	}
}

// TestSplitInvariance: however the pipeline cuts the reasoning, answer and
// arguments into deltas, the client assembles the same Message.
func TestSplitInvariance(t *testing.T) {
	whole := []transform.Event{routed, rStart, reason("想一想 \"quoted\"\n"), rEnd,
		ansStart, answer("Hello, 世界🌍 <b>"), ansEnd,
		toolS(0, "c1", "search"), toolA(0, "c1", "search", `{"q":"caf\u00e9 \"x\"","n":[1,2]}`), toolE(0, "c1", "search", `{"q":"caf\u00e9 \"x\"","n":[1,2]}`),
		finish("stop")}
	ref, err := checkStream(encodertest.Run(newEncoder(), whole))
	if err != nil {
		t.Fatal(err)
	}
	for i, ev := range whole {
		if !ev.Kind.IsDelta() {
			continue
		}
		for cut := 0; cut <= len(ev.Text); cut++ {
			if cut < len(ev.Text) && !utf8.RuneStart(ev.Text[cut]) {
				continue // the pipeline's deltas hold whole characters
			}
			a, b := ev.Clone(), ev.Clone()
			a.Text, b.Text = a.Text[:cut], b.Text[cut:]
			evs := append(append(append([]transform.Event{}, whole[:i]...), a, b), whole[i+1:]...)
			got, err := checkStream(encodertest.Run(newEncoder(), evs))
			if err != nil {
				t.Fatalf("event %d cut at %d: %v", i, cut, err)
			}
			if fmt.Sprint(blockStrings(got)) != fmt.Sprint(blockStrings(ref)) || got.stopReason != ref.stopReason {
				t.Fatalf("event %d cut at %d: %q, want %q", i, cut, blockStrings(got), blockStrings(ref))
			}
		}
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

// TestZeroAllocs measures each delta streamed into its block, and held
// behind a tool call whose arguments are incomplete (then the arguments
// stream and the rest waits).
func TestZeroAllocs(t *testing.T) {
	usage := encodertest.AllocsCase{Name: "usage", Event: encodertest.Text(transform.KindUsage, `{"prompt_tokens":10,"completion_tokens":2}`)}
	t.Run("streamed", func(t *testing.T) {
		encodertest.CheckZeroAllocs(t, newEncoder, []transform.Event{routed}, usage)
	})
	t.Run("held", func(t *testing.T) {
		encodertest.CheckZeroAllocs(t, newEncoder, []transform.Event{routed, toolS(0, "c", "f"), toolA(0, "c", "f", `{"a":`)}, usage)
	})
}

func BenchmarkEncoder(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), []transform.Event{routed}, transform.KindReasoningDelta, transform.KindAnswerDelta)
}

// FuzzEncoder feeds arbitrary event sequences to both modes: the encoder
// must not panic, the stream must read as the SDKs read it, and the whole
// body must be one Message or error object that says the same.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{19, 1, 14, 1, 15, 1, 16, 1, 20, 3, 22, 1}, `{"prompt_tokens":1}`)
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1, 23, 0}, "\xe4\xbd\xa0好")
	f.Add([]byte{14, 0, 14, 1, 15, 1, 15, 0, 11, 0, 16, 1, 16, 0, 22, 0}, `{"a":[1,"}"]}`)
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		evs := encodertest.FuzzEvents(ops, pool)
		out := encodertest.Run(newEncoder(), evs)
		a, err := checkStream(out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		terminal := slices.ContainsFunc(evs, func(ev transform.Event) bool {
			return ev.Kind == transform.KindFinish || ev.Kind == transform.KindError
		})
		if a.ended != terminal {
			t.Fatalf("ended %v, fed a terminal event %v\n%s", a.ended, terminal, out)
		}
		enc := newWholeEncoder()
		wout := encodertest.Run(enc, evs)
		if len(wout) == 0 {
			return // no terminal event
		}
		w, err := checkWhole(wout, enc.Status())
		if err != nil {
			t.Fatalf("%v\n%s", err, wout)
		}
		if a.err == nil && fmt.Sprint(wholeStrings(w)) != fmt.Sprint(wantWhole(blockStrings(a))) {
			t.Fatalf("whole Message %q, stream %q", wholeStrings(w), blockStrings(a))
		}
	})
}
