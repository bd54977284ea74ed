package responses_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/responses"
)

// leftOutName is what Info.LeftOut may hold: kinds and protocol names,
// never text from the body's strings beyond them.
var leftOutName = regexp.MustCompile(`^(tool|item):[a-z0-9_.-]{1,48}$`)

// FuzzConvert feeds arbitrary bodies to the converter. It must not panic;
// a refusal is a 400 with a code and a message whose error body is JSON;
// a conversion is deterministic, a JSON object whose messages the route's
// shaping accepts (a malformed conversion would be a 500 there), whose
// roles are chat roles and whose assistant tool calls carry ids, names and
// string arguments; the echoed parameters are compact JSON; and what was
// left out is named by kind only.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		codexBody,
		`{"model":"m","input":"hi","stream":true}`,
		`{"input":[{"role":"user","content":[{"type":"input_text","text":"a"},{"type":"input_image","image_url":"https://x"}]}]}`,
		`{"input":[{"type":"function_call","call_id":"a","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"a","output":[{"type":"input_image","image_url":"u"}]}]}`,
		`{"input":"x","tools":[{"type":"function","name":"f","parameters":{"type":"object"}}],"tool_choice":{"type":"allowed_tools","mode":"auto","tools":[{"type":"function","name":"f"}]}}`,
		`{"input":"x","text":{"format":{"type":"json_schema","name":"n","schema":{}}},"reasoning":{"effort":"low"},"max_output_tokens":5}`,
		`{"input":"x","previous_response_id":"resp_1"}`,
		`{"input":[{"role":"developer","content":"\ud800 \u2028"}],"instructions":"i"}`,
		`{"input":[]}`,
		`{"input":[{"role":"user","content":"q"},` + serverRoundsOutput + `]}`,
		`{"input":[{"type":"mcp_call","name":"f","arguments":{"a":1},"error":{"type":"http_error","code":500,"message":"x"}},{"type":"mcp_list_tools","tools":[]},{"type":"mcp_call","id":"m","name":"g"}]}`,
		`[]`, `{`, ``,
	} {
		f.Add([]byte(s))
	}
	shaper := request.Shaper{Format: responses.Format}
	f.Fuzz(func(t *testing.T, body []byte) {
		out, info, e := responses.Convert(body)
		if e != nil {
			if e.Status != http.StatusBadRequest || e.Code == "" || e.Message == "" || out != nil {
				t.Fatalf("refusal %+v with output %q", e, out)
			}
			if eb := responses.AppendError(nil, e); !json.Valid(eb) {
				t.Fatalf("error body %s", eb)
			}
			return
		}
		again, info2, e2 := responses.Convert(body)
		if e2 != nil || !bytes.Equal(out, again) || !reflect.DeepEqual(info, info2) {
			t.Fatalf("not deterministic: %s / %s", out, again)
		}
		var chat struct {
			Messages []struct {
				Role      string `json:"role"`
				ToolCalls []struct {
					ID       *string `json:"id"`
					Type     string  `json:"type"`
					Function struct {
						Name      *string `json:"name"`
						Arguments *string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
				ToolCallID *string `json:"tool_call_id"`
			} `json:"messages"`
		}
		if err := json.Unmarshal(out, &chat); err != nil || chat.Messages == nil {
			t.Fatalf("conversion is not a chat body with messages: %v: %s", err, out)
		}
		for _, m := range chat.Messages {
			switch m.Role {
			case "system", "user", "assistant":
			case "tool":
				if m.ToolCallID == nil {
					t.Fatalf("tool message without tool_call_id: %s", out)
				}
			default:
				t.Fatalf("role %q: %s", m.Role, out)
			}
			for _, c := range m.ToolCalls {
				if c.ID == nil || c.Type != "function" || c.Function.Name == nil || c.Function.Arguments == nil {
					t.Fatalf("tool call %+v: %s", c, out)
				}
			}
		}
		if _, _, err := shaper.Rewrite(body, "P"); err != nil {
			t.Fatalf("the shaper refused the conversion: %v: %s", err, out)
		}
		req, ok := info.Facts.(responses.Request)
		if !ok {
			t.Fatalf("facts %T", info.Facts)
		}
		v := reflect.ValueOf(req)
		for i := range v.NumField() {
			if v.Field(i).Kind() != reflect.Slice {
				continue // Store, PreviousResponseID, WebSocket: not echoed raw
			}
			raw := v.Field(i).Bytes()
			if raw != nil && (!json.Valid(raw) || bytes.ContainsAny(raw, "\n\r")) {
				t.Fatalf("echoed %s is not compact JSON: %q", v.Type().Field(i).Name, raw)
			}
		}
		if info.LeftOut != "" {
			for _, w := range strings.Split(info.LeftOut, " ") {
				if !leftOutName.MatchString(w) {
					t.Fatalf("left out %q", w)
				}
			}
		}
	})
}

// FuzzDecodeStored feeds the stored-response loader whatever a store could
// return (a torn file, another program's key, an old format): it never
// panics, and a record it accepts has an id, object items, and encodes
// back to a record that decodes the same.
func FuzzDecodeStored(f *testing.F) {
	good, _ := responses.EncodeStored(responses.Stored{ID: "resp_1", Prev: "resp_0",
		Input:    []json.RawMessage{json.RawMessage(`{"role":"user","content":"hi"}`)},
		Response: json.RawMessage(`{"id":"resp_1","output":[{"type":"message","role":"assistant","content":[]}]}`)})
	for _, s := range []string{string(good), `{}`, `{"v":1,"id":"resp_x","input":[1],"response":{}}`,
		`{"v":1,"id":"resp_x","response":{"output":"no"}}`, `[`, `null`, `{"v":2,"id":"resp_x","response":{}}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := responses.DecodeStored(b)
		if err != nil {
			return
		}
		if !strings.HasPrefix(s.ID, "resp_") {
			t.Fatalf("accepted id %q", s.ID)
		}
		out, err := s.Output()
		if err != nil {
			t.Fatalf("accepted, then Output: %v", err)
		}
		re, err := responses.EncodeStored(s)
		if err != nil {
			t.Fatal(err)
		}
		s2, err := responses.DecodeStored(re)
		if err != nil || s2.ID != s.ID || s2.Prev != s.Prev || len(s2.Input) != len(s.Input) {
			t.Fatalf("round trip: %v %+v", err, s2)
		}
		var c responses.Chain
		c.Add(s)
		if got := len(c.Items()); got > len(s.Input)+len(out) {
			t.Fatalf("chain of %d items from %d", got, len(s.Input)+len(out))
		}
	})
}
