package openai_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/openai"
)

// assembled is a streamed completion put together the way the OpenAI SDKs'
// stream helpers do (openai-node ChatCompletionStream#accumulateChatCompletion).
type assembled struct {
	id, model           string
	content, reasoning  string
	tools               []map[string]string // id, name, arguments
	finish              string
	usage               map[string]any
	errCode, errMessage string
	chunks              int
}

// checkStream checks a chat.completion.chunk stream (openai@6
// ChatCompletionChunk): data lines only, every chunk a JSON object with the
// same id, object, created and model, one choice at index 0 with delta,
// logprobs null and finish_reason, tool call deltas that open with index,
// id, type and name before their arguments, the finish chunk, an optional
// usage chunk with empty choices, then [DONE]; or an error object last,
// without [DONE]. It returns the assembled completion.
func checkStream(out []byte) (*assembled, error) {
	evs, err := readSSE(out)
	if err != nil {
		return nil, err
	}
	a := &assembled{}
	var created any
	done := false
	opened := map[float64]int{}
	for i, e := range evs {
		if e.comment {
			continue
		}
		if e.name != "" {
			return nil, errorf("event: line; the SDKs read data only")
		}
		if done || a.errCode != "" {
			return nil, errorf("chunk %d after [DONE] or the error", i)
		}
		if e.data == "[DONE]" {
			if a.finish == "" {
				return nil, errorf("[DONE] before the finish chunk")
			}
			done = true
			continue
		}
		m, err := decodeData(e)
		if err != nil {
			return nil, err
		}
		if eo, ok := m["error"].(map[string]any); ok {
			if err := exactKeys(eo, "message", "type", "param", "code"); err != nil {
				return nil, err
			}
			a.errCode, _ = eo["code"].(string)
			a.errMessage, _ = eo["message"].(string)
			if a.errCode == "" || a.errMessage == "" || eo["type"] != openai.ErrorType || eo["param"] != nil {
				return nil, errorf("error object: %s", e.data)
			}
			continue
		}
		a.chunks++
		if m["object"] != "chat.completion.chunk" {
			return nil, errorf("object %v", m["object"])
		}
		if a.chunks == 1 {
			a.id, _ = m["id"].(string)
			a.model, _ = m["model"].(string)
			created = m["created"]
			if !strings.HasPrefix(a.id, "chatcmpl-") {
				return nil, errorf("id %q", a.id)
			}
		} else if m["id"] != a.id || m["model"] != a.model || m["created"] != created {
			return nil, errorf("chunk %d: id, model or created changed: %s", i, e.data)
		}
		choices, ok := m["choices"].([]any)
		if !ok {
			return nil, errorf("choices is not an array: %s", e.data)
		}
		if len(choices) == 0 {
			if a.finish == "" {
				return nil, errorf("usage chunk before the finish chunk")
			}
			if err := exactKeys(m, "id", "object", "created", "model", "choices", "usage"); err != nil {
				return nil, err
			}
			a.usage, _ = m["usage"].(map[string]any)
			continue
		}
		if err := exactKeys(m, "id", "object", "created", "model", "choices"); err != nil {
			return nil, err
		}
		if a.finish != "" {
			return nil, errorf("content chunk after the finish chunk")
		}
		c := choices[0].(map[string]any)
		if err := exactKeys(c, "index", "delta", "logprobs", "finish_reason"); err != nil {
			return nil, err
		}
		if len(choices) != 1 || c["index"] != 0.0 || c["logprobs"] != nil {
			return nil, errorf("choice: %s", e.data)
		}
		delta := c["delta"].(map[string]any)
		if a.chunks == 1 && (delta["role"] != "assistant" || delta["content"] != "") {
			return nil, errorf("first chunk is not the role chunk: %s", e.data)
		}
		if fr, ok := c["finish_reason"].(string); ok {
			if len(delta) != 0 {
				return nil, errorf("finish chunk with a delta: %s", e.data)
			}
			a.finish = fr
		}
		s, _ := delta["content"].(string)
		a.content += s
		s, _ = delta["reasoning_content"].(string)
		a.reasoning += s
		tcs, _ := delta["tool_calls"].([]any)
		for _, tc := range tcs {
			t := tc.(map[string]any)
			idx := t["index"].(float64)
			fn, _ := t["function"].(map[string]any)
			k, ok := opened[idx]
			if !ok {
				if t["id"] == nil || t["type"] != "function" || fn["name"] == nil || fn["arguments"] != "" {
					return nil, errorf("tool call %v opens without id, type, name and empty arguments: %s", idx, e.data)
				}
				k = len(a.tools)
				opened[idx] = k
				a.tools = append(a.tools, map[string]string{"id": t["id"].(string), "name": fn["name"].(string)})
				continue
			}
			if err := exactKeys(t, "index", "function"); err != nil {
				return nil, err
			}
			a.tools[k]["arguments"] += fn["arguments"].(string)
		}
	}
	if a.finish != "" && !done {
		return nil, errorf("no [DONE] after the finish chunk")
	}
	return a, nil
}

func exactKeys(m map[string]any, keys ...string) error {
	if len(m) != len(keys) {
		return errorf("fields %v, want %v", m, keys)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return errorf("fields %v lack %s", m, k)
		}
	}
	return nil
}

func TestScenarios(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			out := run(openai.New(testMeta()), s.evs)
			if _, err := checkStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			golden(t, s.name, out)
		})
		t.Run(s.name+"_whole", func(t *testing.T) {
			meta := testMeta()
			meta.Stream = false
			enc := openai.New(meta)
			out := run(enc, s.evs)
			if _, err := checkWhole(out, enc.Status()); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			golden(t, s.name+"_whole", out)
		})
	}
}

// TestAssembled checks what a client assembles from the stream, and that
// the whole completion says the same.
func TestAssembled(t *testing.T) {
	tests := []struct {
		name                       string
		evs                        []transform.Event
		content, reasoning, finish string
		tools                      string // id name arguments; …
	}{
		{"thinkingml", scenarios[0].evs, "# Plan\n- Day 1", "draft\n\n**Scope**\n\nDo X\n\n**Plan**\n\nThen Y", "stop", ""},
		{"native_reasoning", scenarios[1].evs, "Hello world", "first thought\n\nsecond thought", "stop", ""},
		{"tool_calls", scenarios[2].evs, "Checking.", "", "tool_calls",
			`call_1 get_weather {"city":"Paris"}; call_2 ask_user {"questions":[{"question":"Which genre?","choices":["Fantasy","Sci-fi"]}]}; call_3 broken {"a": 1,; call_4 no_args {}; call_5 pretty {` + "\n" + `  "x": [1, 2]` + "\n}"},
		{"aiplan_stop_becomes_tool_calls", scenarios[3].evs, "", "**Thought**\n\nNeed the weather.", "tool_calls", `call_a get_weather {"city":"Oslo"}`},
		{"length", []transform.Event{routed("m", ""), ev(transform.KindAnswerStart), text(F, "cut"), ev(transform.KindAnswerEnd), finish("length")}, "cut", "", "length", ""},
		{"empty_finish_reason", []transform.Event{routed("m", ""), finish("")}, "", "", "stop", ""},
		{"unrouted", []transform.Event{text(F, "x"), finish("stop")}, "x", "", "stop", ""},
		{"phase_without_title", []transform.Event{routed("m", ""), phase(1, ""), phaseDelta(1, "x"), phaseEnd(1), phase(2, "T"), phaseEnd(2), finish("stop")}, "", "x\n\n**T**\n\n", "stop", ""},
		{"interleaved_tool_calls", []transform.Event{routed("m", ""),
			toolStart(0, "a", "f"), toolStart(1, "b", "g"), toolArgs(1, "b", "g", `{"y":`), toolArgs(0, "a", "f", `{"x":1}`),
			toolArgs(1, "b", "g", `2}`), toolEnd(1, "b", "g", `{"y":2}`), toolEnd(0, "a", "f", `{"x":1}`), finish("tool_calls")},
			"", "", "tool_calls", `a f {"x":1}; b g {"y":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := run(openai.New(testMeta()), tt.evs)
			a, err := checkStream(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			var tools []string
			for _, tc := range a.tools {
				tools = append(tools, tc["id"]+" "+tc["name"]+" "+tc["arguments"])
			}
			if a.content != tt.content || a.reasoning != tt.reasoning || a.finish != tt.finish || strings.Join(tools, "; ") != tt.tools {
				t.Errorf("stream assembled\n content %q\n reasoning %q\n finish %q\n tools %q\nwant\n content %q\n reasoning %q\n finish %q\n tools %q",
					a.content, a.reasoning, a.finish, strings.Join(tools, "; "), tt.content, tt.reasoning, tt.finish, tt.tools)
			}

			meta := testMeta()
			meta.Stream = false
			enc := openai.New(meta)
			w, err := checkWhole(run(enc, tt.evs), enc.Status())
			if err != nil {
				t.Fatal(err)
			}
			msg := w.Choices[0].Message
			content := ""
			if msg.Content != nil {
				content = *msg.Content
			}
			var wtools []string
			for _, tc := range msg.ToolCalls {
				wtools = append(wtools, tc.ID+" "+tc.Function.Name+" "+tc.Function.Arguments)
			}
			if content != tt.content || msg.ReasoningContent != tt.reasoning || w.Choices[0].FinishReason != tt.finish || strings.Join(wtools, "; ") != tt.tools {
				t.Errorf("whole completion %+v differs from the stream", w)
			}
		})
	}
}

// whole is a chat.completion as openai@6's ChatCompletion types it.
type whole struct {
	ID      string `json:"id"`
	Object  string `json:"object"`
	Created int64  `json:"created"`
	Model   string `json:"model"`
	Choices []struct {
		Index   int `json:"index"`
		Message struct {
			Role             string  `json:"role"`
			Content          *string `json:"content"`
			ReasoningContent string  `json:"reasoning_content"`
			Refusal          *string `json:"refusal"`
			ToolCalls        []struct {
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"message"`
		Logprobs     any    `json:"logprobs"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage map[string]any `json:"usage"`
	Error *struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Param   any    `json:"param"`
		Code    string `json:"code"`
	} `json:"error"`
}

// checkWhole checks a non-streamed body: one JSON object and a newline,
// a chat.completion with status 200 or an error object with 502/504.
func checkWhole(out []byte, status int) (*whole, error) {
	if len(out) == 0 || out[len(out)-1] != '\n' || strings.Count(string(out), "\n") != 1 {
		return nil, errorf("body is not one line: %q", out)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.DisallowUnknownFields()
	var w whole
	if err := dec.Decode(&w); err != nil {
		return nil, errorf("body: %v: %s", err, out)
	}
	if dec.More() {
		return nil, errorf("body holds more than one value")
	}
	if w.Error != nil {
		if status != http.StatusBadGateway && status != http.StatusGatewayTimeout {
			return nil, errorf("error body with status %d", status)
		}
		if w.Error.Code == "" || w.Error.Message == "" || w.Error.Type != openai.ErrorType {
			return nil, errorf("error body: %s", out)
		}
		return &w, nil
	}
	if status != http.StatusOK {
		return nil, errorf("completion with status %d", status)
	}
	if w.Object != "chat.completion" || !strings.HasPrefix(w.ID, "chatcmpl-") || w.Created == 0 || len(w.Choices) != 1 {
		return nil, errorf("completion header: %s", out)
	}
	c := w.Choices[0]
	if c.Message.Role != "assistant" || c.Message.Refusal != nil || c.Logprobs != nil || c.FinishReason == "" {
		return nil, errorf("choice: %s", out)
	}
	if c.Message.Content == nil && len(c.Message.ToolCalls) == 0 {
		return nil, errorf("content null without tool calls: %s", out)
	}
	for _, tc := range c.Message.ToolCalls {
		if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
			return nil, errorf("tool call: %s", out)
		}
	}
	return &w, nil
}

// TestErrors checks the error shapes and the status a whole completion
// needs.
func TestErrors(t *testing.T) {
	tests := []struct {
		name   string
		ev     transform.Event
		stream string
		body   string
		status int
	}{
		{"provider_error", failure(transform.CodeProviderError, "upstream answered 401"),
			`data: {"error":{"message":"upstream answered 401","type":"upstream_error","param":null,"code":"provider_error"}}` + "\n\n",
			`{"error":{"message":"upstream answered 401","type":"upstream_error","param":null,"code":"provider_error"}}` + "\n", 502},
		{"timeout", failure(transform.CodeUpstreamTimeout, ""),
			`data: {"error":{"message":"upstream_timeout","type":"upstream_error","param":null,"code":"upstream_timeout"}}` + "\n\n",
			`{"error":{"message":"upstream_timeout","type":"upstream_error","param":null,"code":"upstream_timeout"}}` + "\n", 504},
		{"model_parsing_error", failure(transform.CodeModelParsingError, "<<ParsingError>>"),
			`data: {"error":{"message":"<<ParsingError>>","type":"upstream_error","param":null,"code":"model_parsing_error"}}` + "\n\n",
			`{"error":{"message":"<<ParsingError>>","type":"upstream_error","param":null,"code":"model_parsing_error"}}` + "\n", 502},
		{"no_code", failure("", "x"),
			`data: {"error":{"message":"x","type":"upstream_error","param":null,"code":"upstream_error"}}` + "\n\n",
			`{"error":{"message":"x","type":"upstream_error","param":null,"code":"upstream_error"}}` + "\n", 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := openai.New(testMeta())
			if got := string(run(enc, []transform.Event{tt.ev})); got != tt.stream {
				t.Errorf("stream %q, want %q", got, tt.stream)
			}
			if enc.Status() != http.StatusOK || enc.ContentType() != openai.ContentType {
				t.Errorf("stream status %d, content type %s", enc.Status(), enc.ContentType())
			}
			meta := testMeta()
			meta.Stream = false
			enc = openai.New(meta)
			if enc.Status() != http.StatusOK || enc.ContentType() != openai.ContentTypeJSON {
				t.Errorf("whole status %d before the error, content type %s", enc.Status(), enc.ContentType())
			}
			if got := string(run(enc, []transform.Event{routed("m", ""), heartbeat(), text(F, "partial"), tt.ev})); got != tt.body {
				t.Errorf("body %q, want %q", got, tt.body)
			}
			if enc.Status() != tt.status {
				t.Errorf("status %d, want %d", enc.Status(), tt.status)
			}
		})
	}
}

func TestWholeWritesNothingBeforeTheEnd(t *testing.T) {
	meta := testMeta()
	meta.Stream = false
	enc := openai.New(meta)
	out := enc.Begin(nil)
	for _, e := range scenarios[0].evs[:len(scenarios[0].evs)-1] {
		out = enc.AppendEvent(out, e)
	}
	out = enc.AppendHeartbeat(out, created)
	if len(out) != 0 {
		t.Errorf("wrote %q before the terminal event", out)
	}
}

func TestNothingAfterTerminal(t *testing.T) {
	for _, stream := range []bool{true, false} {
		meta := testMeta()
		meta.Stream = stream
		enc := openai.New(meta)
		enc.AppendEvent(nil, finish("stop"))
		if out := enc.AppendEvent(nil, text(F, "late")); len(out) != 0 {
			t.Errorf("stream=%v: event after finish wrote %q", stream, out)
		}
		if out := enc.AppendHeartbeat(nil, created); len(out) != 0 {
			t.Errorf("stream=%v: heartbeat after finish wrote %q", stream, out)
		}
	}
}

func TestZeroAllocs(t *testing.T) {
	tests := []struct {
		name string
		ev   transform.Event
	}{
		{"content", text(F, "some answer text, with \"quotes\"\n")},
		{"content_chinese", text(F, "三分化训练计划")},
		{"reasoning", text(R, "reasoning text")},
		{"phase_delta", phaseDelta(1, "phase text")},
		{"tool_args", toolArgs(0, "c", "f", `{"a":1}`)},
		{"heartbeat", heartbeat()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := openai.New(testMeta())
			buf := enc.Begin(make([]byte, 0, 64<<10))
			buf = enc.AppendEvent(buf, routed("m", "id"))
			buf = enc.AppendEvent(buf, toolStart(0, "c", "f"))
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
	enc := openai.New(testMeta())
	buf := enc.Begin(make([]byte, 0, 64<<10))
	buf = enc.AppendEvent(buf, routed("m", "id"))
	b.ResetTimer()
	for b.Loop() {
		for _, d := range deltas {
			buf = enc.AppendEvent(buf[:0], d)
		}
	}
	b.ReportMetric(float64(b.N*len(deltas))/b.Elapsed().Seconds(), "events/s")
}

// FuzzEncoder feeds arbitrary event sequences to both modes: the encoder
// must not panic, the stream must read as the SDKs read it, and the whole
// body must be one completion or error object.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{19, 1, 14, 1, 15, 1, 16, 1, 20, 3, 22, 1}, `{"prompt_tokens":1}`)
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1, 23, 0}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		evs := fuzzEvents(ops, pool)
		out := run(openai.New(testMeta()), evs)
		if _, err := checkStream(out); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		meta := testMeta()
		meta.Stream = false
		enc := openai.New(meta)
		out = run(enc, evs)
		if len(out) == 0 {
			return // no terminal event
		}
		if _, err := checkWhole(out, enc.Status()); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
