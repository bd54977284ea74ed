package agui_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agui"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/request"
)

// TestConvert checks what a RunAgentInput becomes upstream, message by
// message (compacted JSON), and what the encoder is told.
func TestConvert(t *testing.T) {
	user := `{"id":"u1","role":"user","content":"hi"}`
	tests := []struct {
		name, body string
		want       string // the converted body
		leftOut    string
	}{
		{"minimal", `{"threadId":"t","runId":"r","messages":[` + user + `]}`,
			`{"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"what HttpAgent sends", `{"threadId":"t","runId":"r","protocolVersion":"1.0","tools":[],"context":[],"forwardedProps":{},"state":{},"messages":[` + user + `]}`,
			`{"messages":[{"role":"user","content":"hi"}]}`, ""},
		{"roles", `{"messages":[{"id":"d","role":"developer","content":"dev"},{"id":"s","role":"system","content":"sys"},` + user +
			`,{"id":"r1","role":"reasoning","content":"thought"},{"id":"a1","role":"assistant","content":"hello"},` +
			`{"id":"x","role":"activity","activityType":"PLAN","content":{}},{"id":"z","role":"future","content":"?"}]}`,
			`{"messages":[{"role":"system","content":"dev"},{"role":"system","content":"sys"},{"role":"user","content":"hi"},{"role":"assistant","content":"hello"}]}`,
			"message:reasoning message:activity message:other"},
		{"context after the leading system messages", `{"messages":[{"id":"s","role":"system","content":"sys"},` + user + `],` +
			`"context":[{"description":"The user","value":"{\"name\":\"Ada\"}"},{"description":"Page","value":"settings"}]}`,
			`{"messages":[{"role":"system","content":"sys"},{"role":"system","content":"## Context from the application\n\nThe user:\n{\"name\":\"Ada\"}\n\nPage:\nsettings\n"},{"role":"user","content":"hi"}]}`, ""},
		{"context alone", `{"messages":[],"context":[{"description":"d","value":"v"}]}`,
			`{"messages":[{"role":"system","content":"## Context from the application\n\nd:\nv\n"}]}`, ""},
		{"tools", `{"messages":[` + user + `],"tools":[{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}},{"name":"ping","description":""}]}`,
			`{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"get_weather","description":"Weather","parameters":{"type":"object","properties":{"city":{"type":"string"}}}}},{"type":"function","function":{"name":"ping"}}]}`, ""},
		{"a client tool round trip", `{"messages":[` + user + `,{"id":"a1","role":"assistant","content":"Checking.","toolCalls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},` +
			`{"id":"t1","role":"tool","toolCallId":"call_1","content":"18°C"}]}`,
			`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"Checking.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]},{"role":"tool","tool_call_id":"call_1","content":"18°C"}]}`, ""},
		{"answers follow their calls, unanswered calls and orphans left out", `{"messages":[{"id":"a1","role":"assistant","toolCalls":[` +
			`{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"g","arguments":""}}]},` +
			user + `,{"id":"t0","role":"tool","toolCallId":"nope","content":"x"},{"id":"t1","role":"tool","toolCallId":"c1","content":"one","error":"timed out"},` +
			`{"id":"a2","role":"assistant","content":"","toolCalls":[{"id":"c3","type":"function","function":{"name":"h","arguments":{"a":1}}}]}]}`,
			`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c1","content":"one\n\nError: timed out"},{"role":"user","content":"hi"}]}`,
			"tool_call:unanswered message:tool_without_call"},
		{"content parts", `{"messages":[{"id":"u","role":"user","content":[{"type":"text","text":"look"},` +
			`{"type":"image","source":{"type":"data","value":"iVBO","mimeType":"image/png"}},{"type":"image","source":{"type":"url","value":"https://x/i.png"}},` +
			`{"type":"binary","mimeType":"image/jpeg","url":"https://x/j.jpg"},{"type":"audio","source":{"type":"url","value":"https://x/a.mp3"}},` +
			`{"type":"image","source":{"type":"file","value":"file-1","provider":"openai"}},{"type":"text","text":"here"}]},` +
			`{"id":"u2","role":"user","content":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"document","source":{"type":"url","value":"x"}}]},` +
			`{"id":"u3","role":"user","content":[{"type":"video","source":{"type":"url","value":"v"}}]}]}`,
			`{"messages":[{"role":"user","content":[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},` +
				`{"type":"image_url","image_url":{"url":"https://x/i.png"}},{"type":"image_url","image_url":{"url":"https://x/j.jpg"}},{"type":"text","text":"here"}]},` +
				`{"role":"user","content":"a\nb"}]}`,
			"part:audio part:image_file part:document part:video"},
		{"tool content parts", `{"messages":[{"id":"a","role":"assistant","toolCalls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
			`{"id":"t","role":"tool","toolCallId":"c","content":[{"type":"text","text":"r1"},{"type":"image","source":{"type":"url","value":"u"}},{"type":"text","text":"r2"}]}]}`,
			`{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"f","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"r1\nr2"}]}`,
			"part:image"},
		{"state and resume", `{"messages":[` + user + `],"state":{"count":1},"resume":[{"interruptId":"i","status":"resolved"}],"forwardedProps":{"x":1}}`,
			`{"messages":[{"role":"user","content":"hi"}]}`, "state resume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, e := agui.Convert([]byte(tt.body))
			if e != nil {
				t.Fatal(e)
			}
			if got := compact(t, out); got != tt.want {
				t.Errorf("converted\n %s\nwant\n %s", got, tt.want)
			}
			if !info.Stream || info.LeftOut != tt.leftOut {
				t.Errorf("stream %v, left out %q; want true, %q", info.Stream, info.LeftOut, tt.leftOut)
			}
		})
	}
}

// TestConvertFacts: the encoder learns the run's ids.
func TestConvertFacts(t *testing.T) {
	_, info, e := agui.Convert([]byte(`{"threadId":"th","runId":"ru","messages":[]}`))
	if e != nil {
		t.Fatal(e)
	}
	if info.Facts != (agui.Request{ThreadID: "th", RunID: "ru"}) {
		t.Errorf("facts %+v", info.Facts)
	}
}

// TestConvertRefuses: a body that is not a RunAgentInput is a 400 naming
// what is wrong, and nothing goes upstream.
func TestConvertRefuses(t *testing.T) {
	tests := []struct{ body, code, msg string }{
		{``, request.CodeInvalidJSON, "empty"},
		{`{"messages":`, request.CodeInvalidJSON, "not valid JSON"},
		{`[]`, request.CodeInvalidBody, "RunAgentInput"},
		{`{"threadId":"t"}`, request.CodeMissingMessages, "messages"},
		{`{"messages":{}}`, request.CodeInvalidMessages, "array"},
		{`{"threadId":1,"messages":[]}`, agui.CodeInvalidParameter, "threadId"},
		{`{"runId":false,"messages":[]}`, agui.CodeInvalidParameter, "runId"},
		{`{"messages":[1]}`, request.CodeInvalidMessages, "messages[0] must be an object"},
		{`{"messages":[{"content":"x"}]}`, request.CodeInvalidMessages, "messages[0].role"},
		{`{"messages":[{"role":"user","content":5}]}`, request.CodeInvalidMessages, "messages[0].content"},
		{`{"messages":[{"role":"user","content":[{"type":"text","text":1}]}]}`, request.CodeInvalidMessages, "messages[0].content[0].text"},
		{`{"messages":[{"role":"tool","content":"x"}]}`, request.CodeInvalidMessages, "messages[0].toolCallId"},
		{`{"messages":[{"role":"tool","toolCallId":"c","content":"x","error":3}]}`, request.CodeInvalidMessages, "messages[0].error"},
		{`{"messages":[{"role":"assistant","toolCalls":{}}]}`, request.CodeInvalidMessages, "messages[0].toolCalls must be an array"},
		{`{"messages":[{"role":"assistant","toolCalls":[{"id":"c"}]}]}`, request.CodeInvalidMessages, "toolCalls[0]"},
		{`{"messages":[{"role":"assistant","toolCalls":[{"function":{"name":"f"}}]}]}`, request.CodeInvalidMessages, "toolCalls[0].id"},
		{`{"messages":[],"tools":{}}`, request.CodeInvalidTools, "tools"},
		{`{"messages":[],"tools":[{"description":"d"}]}`, request.CodeInvalidTools, "tools[0].name"},
		{`{"messages":[],"tools":[{"name":"f","parameters":[1]}]}`, request.CodeInvalidTools, "tools[0].parameters"},
		{`{"messages":[],"tools":[{"name":"f","description":7}]}`, request.CodeInvalidTools, "tools[0].description"},
		{`{"messages":[],"context":[{"description":"d"}]}`, agui.CodeInvalidContext, "context[0]"},
		{`{"messages":[],"context":"x"}`, agui.CodeInvalidContext, "context"},
	}
	for _, tt := range tests {
		t.Run(tt.body, func(t *testing.T) {
			out, _, e := agui.Convert([]byte(tt.body))
			if e == nil {
				t.Fatalf("accepted: %s", out)
			}
			if e.Status != 400 || e.Code != tt.code || !strings.Contains(e.Message, tt.msg) || out != nil {
				t.Errorf("refused %d %s %q, want 400 %s with %q", e.Status, e.Code, e.Message, tt.code, tt.msg)
			}
		})
	}
}

// compact returns b without insignificant whitespace, members in their
// order, failing on invalid JSON.
func compact(t *testing.T, b []byte) string {
	t.Helper()
	var out bytes.Buffer
	if err := json.Compact(&out, b); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, b)
	}
	return out.String()
}

// TestHistoryCallIDs: a call the upstream gives the id of a call in the
// run's history (a server that numbers its calls per request) gets a new
// one, since the client keys calls by id across the thread; other ids
// stay the upstream's.
func TestHistoryCallIDs(t *testing.T) {
	_, info, e := agui.Convert([]byte(`{"threadId":"th","runId":"r2","messages":[{"id":"u","role":"user","content":"q"},` +
		`{"id":"a","role":"assistant","toolCalls":[{"id":"call_0","type":"function","function":{"name":"f","arguments":"{}"}}]},` +
		`{"id":"t","role":"tool","toolCallId":"call_0","content":"r"},{"id":"u2","role":"user","content":"again"}]}`))
	if e != nil {
		t.Fatal(e)
	}
	facts := info.Facts.(agui.Request)
	if !facts.History.HasCall("call_0") || facts.History.HasCall("call_1") {
		t.Fatalf("history %+v", facts.History)
	}
	meta := encodertest.Meta()
	meta.Request = facts
	out := encodertest.Run(agui.New(meta), []transform.Event{
		encodertest.ToolStart(0, "call_0", "f"), encodertest.ToolEnd(0, "call_0", "f", "{}"),
		encodertest.ToolStart(1, "call_1", "g"), encodertest.ToolEnd(1, "call_1", "g", "{}"),
		encodertest.Finish("tool_calls"),
	})
	if _, err := check(out); err != nil {
		t.Fatal(err)
	}
	if s := string(out); !strings.Contains(s, `"toolCallId":"msg-1-call-0","toolCallName":"f"`) || !strings.Contains(s, `"toolCallId":"call_1","toolCallName":"g"`) {
		t.Errorf("ids:\n%s", out)
	}
}
