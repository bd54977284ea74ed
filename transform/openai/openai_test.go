package openai_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
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
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return nil, err
	}
	a := &assembled{}
	var created any
	done := false
	opened := map[float64]int{}
	for i, e := range evs {
		if e.Comment {
			continue
		}
		if e.Name != "" {
			return nil, fmt.Errorf("event: line; the SDKs read data only")
		}
		if done || a.errCode != "" {
			return nil, fmt.Errorf("chunk %d after [DONE] or the error", i)
		}
		if e.Data == "[DONE]" {
			if a.finish == "" {
				return nil, fmt.Errorf("[DONE] before the finish chunk")
			}
			done = true
			continue
		}
		m, err := e.DecodeData()
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
				return nil, fmt.Errorf("error object: %s", e.Data)
			}
			continue
		}
		a.chunks++
		if m["object"] != "chat.completion.chunk" {
			return nil, fmt.Errorf("object %v", m["object"])
		}
		if a.chunks == 1 {
			a.id, _ = m["id"].(string)
			a.model, _ = m["model"].(string)
			created = m["created"]
			if !strings.HasPrefix(a.id, "chatcmpl-") {
				return nil, fmt.Errorf("id %q", a.id)
			}
		} else if m["id"] != a.id || m["model"] != a.model || m["created"] != created {
			return nil, fmt.Errorf("chunk %d: id, model or created changed: %s", i, e.Data)
		}
		choices, ok := m["choices"].([]any)
		if !ok {
			return nil, fmt.Errorf("choices is not an array: %s", e.Data)
		}
		if len(choices) == 0 {
			if a.finish == "" {
				return nil, fmt.Errorf("usage chunk before the finish chunk")
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
			return nil, fmt.Errorf("content chunk after the finish chunk")
		}
		c := choices[0].(map[string]any)
		if err := exactKeys(c, "index", "delta", "logprobs", "finish_reason"); err != nil {
			return nil, err
		}
		if len(choices) != 1 || c["index"] != 0.0 || c["logprobs"] != nil {
			return nil, fmt.Errorf("choice: %s", e.Data)
		}
		delta := c["delta"].(map[string]any)
		if a.chunks == 1 && (delta["role"] != "assistant" || delta["content"] != "") {
			return nil, fmt.Errorf("first chunk is not the role chunk: %s", e.Data)
		}
		if fr, ok := c["finish_reason"].(string); ok {
			if len(delta) != 0 {
				return nil, fmt.Errorf("finish chunk with a delta: %s", e.Data)
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
					return nil, fmt.Errorf("tool call %v opens without id, type, name and empty arguments: %s", idx, e.Data)
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
		return nil, fmt.Errorf("no [DONE] after the finish chunk")
	}
	return a, nil
}

func exactKeys(m map[string]any, keys ...string) error {
	if len(m) != len(keys) {
		return fmt.Errorf("fields %v, want %v", m, keys)
	}
	for _, k := range keys {
		if _, ok := m[k]; !ok {
			return fmt.Errorf("fields %v lack %s", m, k)
		}
	}
	return nil
}

// newEncoder returns an encoder of streamed completions, for encodertest's
// checks.
func newEncoder() transform.Encoder { return openai.New(encodertest.Meta()) }

// newWholeEncoder returns an encoder of one whole completion.
func newWholeEncoder() *openai.Encoder {
	meta := encodertest.Meta()
	meta.Stream = false
	return openai.New(meta)
}

func TestScenarios(t *testing.T) {
	encodertest.CheckScenarios(t, "", func(evs []transform.Event) ([]byte, error) {
		out := encodertest.Run(newEncoder(), evs)
		_, err := checkStream(out)
		return out, err
	})
	encodertest.CheckScenarios(t, "_whole", func(evs []transform.Event) ([]byte, error) {
		enc := newWholeEncoder()
		out := encodertest.Run(enc, evs)
		_, err := checkWhole(out, enc.Status())
		return out, err
	})
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
		{"thinkingml", encodertest.ScenarioEvents("thinkingml"), "# Plan\n- Day 1", "draft\n\n**Scope**\n\nDo X\n\n**Plan**\n\nThen Y", "stop", ""},
		{"native_reasoning", encodertest.ScenarioEvents("native_reasoning"), "Hello world", "first thought\n\nsecond thought", "stop", ""},
		{"tool_calls", encodertest.ScenarioEvents("tool_calls"), "Checking.", "", "tool_calls",
			`call_1 get_weather {"city":"Paris"}; call_2 ask_user {"questions":[{"question":"Which genre?","choices":["Fantasy","Sci-fi"]}]}; call_3 broken {"a": 1,; call_4 no_args {}; call_5 pretty {` + "\n" + `  "x": [1, 2]` + "\n}"},
		{"aiplan_stop_becomes_tool_calls", encodertest.ScenarioEvents("aiplan_tool_calls"), "", "**Thought**\n\nNeed the weather.", "tool_calls", `call_a get_weather {"city":"Oslo"}`},
		{"length", []transform.Event{encodertest.Routed("m", ""), encodertest.Event(transform.KindAnswerStart), encodertest.Answer("cut"), encodertest.Event(transform.KindAnswerEnd), encodertest.Finish("length")}, "cut", "", "length", ""},
		{"empty_finish_reason", []transform.Event{encodertest.Routed("m", ""), encodertest.Finish("")}, "", "", "stop", ""},
		{"unrouted", []transform.Event{encodertest.Answer("x"), encodertest.Finish("stop")}, "x", "", "stop", ""},
		{"phase_without_title", []transform.Event{encodertest.Routed("m", ""), encodertest.Phase(1, ""), encodertest.PhaseDelta(1, "x"), encodertest.PhaseEnd(1), encodertest.Phase(2, "T"), encodertest.PhaseEnd(2), encodertest.Finish("stop")}, "", "x\n\n**T**\n\n", "stop", ""},
		{"interleaved_tool_calls", []transform.Event{encodertest.Routed("m", ""),
			encodertest.ToolStart(0, "a", "f"), encodertest.ToolStart(1, "b", "g"), encodertest.ToolArgs(1, "b", "g", `{"y":`), encodertest.ToolArgs(0, "a", "f", `{"x":1}`),
			encodertest.ToolArgs(1, "b", "g", `2}`), encodertest.ToolEnd(1, "b", "g", `{"y":2}`), encodertest.ToolEnd(0, "a", "f", `{"x":1}`), encodertest.Finish("tool_calls")},
			"", "", "tool_calls", `a f {"x":1}; b g {"y":2}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := encodertest.Run(openai.New(encodertest.Meta()), tt.evs)
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

			enc := newWholeEncoder()
			w, err := checkWhole(encodertest.Run(enc, tt.evs), enc.Status())
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
		return nil, fmt.Errorf("body is not one line: %q", out)
	}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	dec.DisallowUnknownFields()
	var w whole
	if err := dec.Decode(&w); err != nil {
		return nil, fmt.Errorf("body: %v: %s", err, out)
	}
	if dec.More() {
		return nil, fmt.Errorf("body holds more than one value")
	}
	if w.Error != nil {
		if status != http.StatusBadGateway && status != http.StatusGatewayTimeout {
			return nil, fmt.Errorf("error body with status %d", status)
		}
		if w.Error.Code == "" || w.Error.Message == "" || w.Error.Type != openai.ErrorType {
			return nil, fmt.Errorf("error body: %s", out)
		}
		return &w, nil
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("completion with status %d", status)
	}
	if w.Object != "chat.completion" || !strings.HasPrefix(w.ID, "chatcmpl-") || w.Created == 0 || len(w.Choices) != 1 {
		return nil, fmt.Errorf("completion header: %s", out)
	}
	c := w.Choices[0]
	if c.Message.Role != "assistant" || c.Message.Refusal != nil || c.Logprobs != nil || c.FinishReason == "" {
		return nil, fmt.Errorf("choice: %s", out)
	}
	if c.Message.Content == nil && len(c.Message.ToolCalls) == 0 {
		return nil, fmt.Errorf("content null without tool calls: %s", out)
	}
	for _, tc := range c.Message.ToolCalls {
		if tc.ID == "" || tc.Type != "function" || tc.Function.Name == "" {
			return nil, fmt.Errorf("tool call: %s", out)
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
		{"provider_error", encodertest.Failure(transform.CodeProviderError, "upstream answered 401"),
			`data: {"error":{"message":"upstream answered 401","type":"upstream_error","param":null,"code":"provider_error"}}` + "\n\n",
			`{"error":{"message":"upstream answered 401","type":"upstream_error","param":null,"code":"provider_error"}}` + "\n", 502},
		{"timeout", encodertest.Failure(transform.CodeUpstreamTimeout, ""),
			`data: {"error":{"message":"upstream_timeout","type":"upstream_error","param":null,"code":"upstream_timeout"}}` + "\n\n",
			`{"error":{"message":"upstream_timeout","type":"upstream_error","param":null,"code":"upstream_timeout"}}` + "\n", 504},
		{"model_parsing_error", encodertest.Failure(transform.CodeModelParsingError, "<<ParsingError>>"),
			`data: {"error":{"message":"<<ParsingError>>","type":"upstream_error","param":null,"code":"model_parsing_error"}}` + "\n\n",
			`{"error":{"message":"<<ParsingError>>","type":"upstream_error","param":null,"code":"model_parsing_error"}}` + "\n", 502},
		{"no_code", encodertest.Failure("", "x"),
			`data: {"error":{"message":"x","type":"upstream_error","param":null,"code":"upstream_error"}}` + "\n\n",
			`{"error":{"message":"x","type":"upstream_error","param":null,"code":"upstream_error"}}` + "\n", 502},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := openai.New(encodertest.Meta())
			if got := string(encodertest.Run(enc, []transform.Event{tt.ev})); got != tt.stream {
				t.Errorf("stream %q, want %q", got, tt.stream)
			}
			if enc.Status() != http.StatusOK {
				t.Errorf("stream status %d", enc.Status())
			}
			enc = newWholeEncoder()
			if enc.Status() != http.StatusOK {
				t.Errorf("whole status %d before the error", enc.Status())
			}
			if got := string(encodertest.Run(enc, []transform.Event{encodertest.Routed("m", ""), encodertest.Heartbeat(), encodertest.Answer("partial"), tt.ev})); got != tt.body {
				t.Errorf("body %q, want %q", got, tt.body)
			}
			if enc.Status() != tt.status {
				t.Errorf("status %d, want %d", enc.Status(), tt.status)
			}
		})
	}
}

func TestWholeWritesNothingBeforeTheEnd(t *testing.T) {
	encodertest.CheckWholeWritesNothingBeforeTheEnd(t, newWholeEncoder(), "thinkingml")
}

func TestNothingAfterTerminal(t *testing.T) {
	t.Run("stream", func(t *testing.T) { encodertest.CheckNothingAfterTerminal(t, newEncoder) })
	t.Run("whole", func(t *testing.T) {
		encodertest.CheckNothingAfterTerminal(t, func() transform.Encoder { return newWholeEncoder() })
	})
}

func TestZeroAllocs(t *testing.T) {
	encodertest.CheckZeroAllocs(t, newEncoder, []transform.Event{encodertest.Routed("m", "id"), encodertest.ToolStart(0, "c", "f")})
}

func BenchmarkEncoder(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), []transform.Event{encodertest.Routed("m", "id")}, transform.KindReasoningDelta, transform.KindAnswerDelta)
}

// FuzzEncoder feeds arbitrary event sequences to both modes: the encoder
// must not panic, the stream must read as the SDKs read it, and the whole
// body must be one completion or error object.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{2, 0, 7, 3, 8, 0, 11, 0, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{19, 1, 14, 1, 15, 1, 16, 1, 20, 3, 22, 1}, `{"prompt_tokens":1}`)
	f.Add([]byte{24, 0, 13, 5, 4, 200, 9, 1, 23, 0}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		evs := encodertest.FuzzEvents(ops, pool)
		out := encodertest.Run(openai.New(encodertest.Meta()), evs)
		if _, err := checkStream(out); err != nil {
			t.Fatalf("%v\n%s", err, out)
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

// TestUsageChunkOnlyWhenAsked checks CONTRACT §7: the usage chunk, whose
// empty choices crash code that reads chunk.choices[0] unguarded, goes
// only to a client that sent stream_options.include_usage: true; a whole
// completion always carries usage, as OpenAI's does.
func TestUsageChunkOnlyWhenAsked(t *testing.T) {
	evs := []transform.Event{encodertest.Routed("m", ""), encodertest.Answer("hi"),
		{Kind: transform.KindUsage, Text: []byte(`{"prompt_tokens":3,"completion_tokens":1,"total_tokens":4}`)},
		encodertest.Finish("stop")}
	for _, tt := range []struct {
		name  string
		asked bool
	}{{"asked", true}, {"not_asked", false}} {
		t.Run(tt.name, func(t *testing.T) {
			meta := encodertest.Meta()
			meta.IncludeUsage = tt.asked
			out := encodertest.Run(openai.New(meta), evs)
			a, err := checkStream(out)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			if got := a.usage != nil; got != tt.asked {
				t.Errorf("usage chunk sent: %v, want %v\n%s", got, tt.asked, out)
			}
			meta.Stream = false
			enc := openai.New(meta)
			w, err := checkWhole(encodertest.Run(enc, evs), enc.Status())
			if err != nil {
				t.Fatal(err)
			}
			if w.Usage == nil {
				t.Errorf("whole completion without usage")
			}
		})
	}
}

// TestToolCallsOneAfterAnother checks that the fragments of interleaved
// parallel calls (Moonshot's shape) reach the client one call after
// another, never switching back to an earlier index: the SDKs' stream
// helpers read a change of index as the end of a call. The assembled
// calls stay byte for byte what the model wrote.
func TestToolCallsOneAfterAnother(t *testing.T) {
	evs := []transform.Event{encodertest.Routed("m", ""),
		encodertest.ToolStart(0, "a", "f"), encodertest.ToolStart(1, "b", "g"),
		encodertest.ToolArgs(0, "a", "f", `{"x":`), encodertest.ToolArgs(1, "b", "g", `{"y":`),
		encodertest.ToolArgs(0, "a", "f", `1}`), encodertest.Answer("text between"), encodertest.ToolArgs(1, "b", "g", `2}`),
		encodertest.ToolStart(2, "c", "h"), encodertest.ToolArgs(2, "c", "h", `{}`),
		encodertest.ToolEnd(0, "a", "f", `{"x":1}`), encodertest.ToolEnd(1, "b", "g", `{"y":2}`), encodertest.ToolEnd(2, "c", "h", `{}`),
		encodertest.Finish("tool_calls")}
	out := encodertest.Run(openai.New(encodertest.Meta()), evs)
	a, err := checkStream(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	var tools []string
	for _, tc := range a.tools {
		tools = append(tools, tc["id"]+" "+tc["name"]+" "+tc["arguments"])
	}
	if got, want := strings.Join(tools, "; "), `a f {"x":1}; b g {"y":2}; c h {}`; got != want || a.content != "text between" {
		t.Errorf("assembled %q and content %q, want %q", got, a.content, want)
	}
	last := -1
	for _, line := range strings.Split(string(out), "\n") {
		i := strings.Index(line, `"tool_calls":[{"index":`)
		if i < 0 {
			continue
		}
		idx := int(line[i+len(`"tool_calls":[{"index":`)] - '0')
		if idx < last {
			t.Fatalf("the stream went back from call %d to call %d:\n%s", last, idx, out)
		}
		last = idx
	}
}
