package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"testing"
)

const fuzzPrompt = "Be brief.\n\"quoted\" \u2028 {http.request.header.X} </final>"

// fuzzShapers are the routes each fuzz input is rewritten for: every format,
// every mode, with tools, a forced tool and a model.
var fuzzShapers = []Shaper{
	{Format: OpenAI, Mode: ModePrepend},
	{Format: OpenAI, Mode: ModeAppend, Tools: [][]byte{[]byte(askUser)}, ToolChoice: "required"},
	{Format: OpenAI, Mode: ModeReplace, Tools: [][]byte{[]byte(askUser), []byte(search)}, ToolChoice: "search", Model: "m"},
	{Format: AISDK, Mode: ModeAppend, Model: "m", Tools: [][]byte{[]byte(askUser)}},
	{Format: AISDK, Mode: ModeReplace, Model: "m"},
	{Format: Skillpet, Model: "m", Tools: [][]byte{[]byte(askUser)}, ToolChoice: "auto"},
}

var fuzzSeeds = []string{
	`{"model":"gpt","messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}],"stream":false}`,
	"{ \"temperature\" :\t1.0e+2 ,\"x\\u00e9\":\"\\ud83d\\ude00\", \"messages\" : [ {\"role\":\"user\",\"content\":\"u\"} ] }",
	`{"messages":[{"role":"user","role":"system"}],"tools":[{"type":"function","function":{"name":"ask_user"}},{"function":{"name":"x"}}],"stream_options":{"a":1}}`,
	`{"messages":[],"tools":null,"tool_choice":"none","stream_options":null}`,
	`{"id":"c","messages":[{"role":"user","parts":[{"type":"text","text":"a"},{"type":"file","mediaType":"image/png","url":"u"}]},{"role":"system","parts":[{"type":"text","text":"s"}]}],"trigger":"submit-message"}`,
	`{"projectId":"p","message":"m","enableThinking":false,"attachments":[{"name":"a","type":"image/png","url":"u"},{"name":"b","type":"text/plain","url":"v"}]}`,
	`{"messages":[],"messages":[]}`,
	`[]`, `"x"`, `{`, ``, `{"mess\u0061ges":[{"role":"sys\u0074em","content":1}]}`,
	// An aisdk turn with the gateway's tool rounds and the page's own
	// tools, as useChat sends it back (CONTRACT.md §12).
	`{"id":"c","messages":[{"id":"a","role":"assistant","parts":[{"type":"text","text":"Let me look."},` +
		`{"type":"dynamic-tool","toolName":"search","toolCallId":"call_1","state":"output-available","input":{"q":"caddy"},"output":"ok","providerExecuted":true,"title":"S"},` +
		`{"type":"dynamic-tool","toolName":"w","toolCallId":"call_2","state":"output-error","input":"{\"bad","errorText":"timed out","providerExecuted":true},` +
		`{"type":"step-start"},{"type":"text","text":"Done."},{"type":"tool-f","toolCallId":"call_3","state":"output-available","input":{},"output":{"x":[1]}},` +
		`{"type":"tool-g","toolCallId":"call_4","state":"input-available","input":{}},{"type":"tool-h","toolCallId":"call_5","state":"output-denied","input":{}},` +
		`{"type":"tool-f","toolCallId":"call_3","state":"output-available","input":{},"output":{"x":[1]}}]}],"trigger":"submit-message"}`,
}

func FuzzRewrite(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		orig := bytes.Clone(body)
		for i := range fuzzShapers {
			s := &fuzzShapers[i]
			out, _, err := s.Rewrite(body, fuzzPrompt)
			if !bytes.Equal(body, orig) {
				t.Fatalf("%s/%s: Rewrite modified its input", s.Format, s.Mode)
			}
			if err != nil {
				var e *Error
				if !errors.As(err, &e) || e.Status < 400 || e.Status > 499 {
					t.Fatalf("%s/%s: error %v is not a 4xx *Error", s.Format, s.Mode, err)
				}
				if out != nil {
					t.Fatalf("%s/%s: body returned with an error", s.Format, s.Mode)
				}
				continue
			}
			u := checkUpstream(t, s, out)
			checkPrompt(t, s, u)
			checkTools(t, s, u)
			if s.Format == AISDK {
				checkToolAnswers(t, u)
			}
			if s.Format == OpenAI {
				checkUntouched(t, body, out)
				checkMessagesKept(t, s, body, u)
			}
		}
	})
}

// checkPrompt checks that the prompt is there once, as a system message.
func checkPrompt(t *testing.T, s *Shaper, u upstream) {
	t.Helper()
	want, _ := json.Marshal(message{Role: "system", Content: mustJSON(fuzzPrompt)})
	n := 0
	for _, raw := range u.Messages {
		var m message
		if json.Unmarshal(raw, &m) != nil || m.Role != "system" {
			continue
		}
		var c string
		if json.Unmarshal(m.Content, &c) == nil && c == fuzzPrompt {
			n++
		}
	}
	if n < 1 {
		t.Fatalf("%s/%s: no system message %s in %s", s.Format, s.Mode, want, u.Messages)
	}
}

// checkTools checks that every configured tool is there exactly once, byte
// for byte, and no other tool has its name.
func checkTools(t *testing.T, s *Shaper, u upstream) {
	t.Helper()
	for _, tool := range s.Tools {
		n, same := 0, 0
		name := toolName(tool)
		for _, raw := range u.Tools {
			if toolName(raw) == name {
				n++
			}
			if bytes.Equal(raw, tool) {
				same++
			}
		}
		if n != 1 || same != 1 {
			t.Fatalf("%s/%s: tool %s appears %d times (%d verbatim) in %s", s.Format, s.Mode, name, n, same, u.Tools)
		}
	}
}

// checkMessagesKept checks that the openai rewrite keeps the client's
// messages byte for byte and in order, less the system ones in replace
// mode, with the prompt inserted where the mode says.
func checkMessagesKept(t *testing.T, s *Shaper, body []byte, u upstream) {
	t.Helper()
	var in struct {
		Messages []json.RawMessage `json:"messages"`
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(body, &top); err != nil {
		t.Fatalf("accepted body does not decode: %v", err)
	}
	if err := json.Unmarshal(top["messages"], &in.Messages); err != nil {
		t.Fatalf("accepted messages do not decode: %v", err)
	}
	var want [][]byte
	at := 0
	for _, raw := range in.Messages {
		sys := roleOf(raw) == "system"
		if sys && s.Mode == ModeReplace {
			continue
		}
		want = append(want, raw)
		if sys && s.Mode == ModeAppend {
			at = len(want)
		}
	}
	prompt, _ := json.Marshal(map[string]string{"role": "system", "content": fuzzPrompt})
	want = append(want[:at], append([][]byte{nil}, want[at:]...)...)
	if len(u.Messages) != len(want) {
		t.Fatalf("%s: %d messages, want %d", s.Mode, len(u.Messages), len(want))
	}
	for i, raw := range u.Messages {
		if i == at {
			var m message
			if json.Unmarshal(raw, &m) != nil || m.Role != "system" {
				t.Fatalf("%s: message %d is %s, want the prompt %s", s.Mode, i, raw, prompt)
			}
			continue
		}
		if !bytes.Equal(raw, want[i]) {
			t.Fatalf("%s: message %d is %s, want %s", s.Mode, i, raw, want[i])
		}
	}
}

// roleOf returns a message's role as an upstream reads it (the last "role"
// member), or "".
func roleOf(raw []byte) string {
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	var r string
	_ = json.Unmarshal(m["role"], &r)
	return r
}

func mustJSON(s string) json.RawMessage {
	b, _ := json.Marshal(s)
	return b
}

// checkToolAnswers checks what an OpenAI-compatible server requires of the
// history a converter wrote: every assistant tool call is answered by a
// tool message among those right after it, and every tool message answers
// one.
func checkToolAnswers(t *testing.T, u upstream) {
	t.Helper()
	owed := map[string]bool{}
	for _, raw := range u.Messages {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatalf("message %s: %v", raw, err)
		}
		if m.Role == "tool" {
			if !owed[m.ToolCallID] {
				t.Fatalf("tool message %s answers no call before it", raw)
			}
			delete(owed, m.ToolCallID)
			continue
		}
		if len(owed) > 0 {
			t.Fatalf("calls %v unanswered before %s", owed, raw)
		}
		for _, c := range m.ToolCalls {
			if m.Role != "assistant" || c.ID == "" || c.Function.Name == "" || c.Type != "function" {
				t.Fatalf("tool call %+v in %s", c, raw)
			}
			owed[c.ID] = true
		}
	}
	if len(owed) > 0 {
		t.Fatalf("calls %v unanswered", owed)
	}
}
