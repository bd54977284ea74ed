package conversation

import (
	"encoding/json"
	"testing"

	"github.com/llmstream/llmstream/transform/request"
)

func TestFindTurnMessage(t *testing.T) {
	cases := []struct {
		name, body, mode, prompt string
		wantUpstream             bool
	}{
		{name: "text", body: `{"projectId":"p","message":"你好\n\"x\""}`, mode: request.ModePrepend, prompt: "sys"},
		{name: "no prompt", body: `{"projectId":"p","message":"hi"}`, mode: request.ModeAppend},
		{name: "attachment named", body: `{"projectId":"p","message":"hi","attachments":[{"name":"a.pdf","type":"application/pdf","url":"https://x/a.pdf"}]}`, mode: request.ModeReplace, prompt: "sys", wantUpstream: true},
		{name: "image", body: `{"projectId":"p","message":"hi","attachments":[{"name":"a.png","type":"image/png","url":"https://x/a.png"}]}`, prompt: "sys", wantUpstream: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := request.Shaper{Format: request.Skillpet, Mode: tc.mode, Model: "m"}
			shaped, _, err := s.Rewrite([]byte(tc.body), tc.prompt)
			if err != nil {
				t.Fatal(err)
			}
			m, err := FindTurnMessage(shaped)
			if err != nil {
				t.Fatal(err)
			}
			var msg string
			var body struct{ Message string }
			_ = json.Unmarshal([]byte(tc.body), &body)
			msg = body.Message
			rec := m.Record("u1", msg, 1)
			if rec.Content != msg || (len(rec.Upstream) > 0) != tc.wantUpstream {
				t.Errorf("record %+v", rec)
			}
			history := []Record{user("u0", "before"), {ID: "a0", Role: RoleAssistant, Content: "reply"}}
			frag, _ := Messages(nil, history, rec, Budget{})
			out := m.Replace(shaped, frag)
			var got struct {
				Model    string
				Stream   bool
				Messages []upstreamMessage
			}
			if err := json.Unmarshal(out, &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			n := len(got.Messages)
			if got.Model != "m" || !got.Stream || n < 3 {
				t.Fatalf("body %s", out)
			}
			if tc.prompt != "" && got.Messages[0].Role != "system" {
				t.Errorf("the system prompt is not first: %s", out)
			}
			if string(got.Messages[n-3].Content) != `"before"` || string(got.Messages[n-2].Content) != `"reply"` {
				t.Errorf("history not before the new message: %s", out)
			}
			want := gjsonRaw(t, shaped)
			if string(got.Messages[n-1].Content) != want {
				t.Errorf("new message content %s, want %s", got.Messages[n-1].Content, want)
			}
		})
	}
}

// gjsonRaw returns the last message's content in body, decoded and
// re-encoded the way the test decodes the spliced body.
func gjsonRaw(t *testing.T, body []byte) string {
	var v struct{ Messages []upstreamMessage }
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	return string(v.Messages[len(v.Messages)-1].Content)
}

func TestFindTurnMessageRefuses(t *testing.T) {
	for _, body := range []string{`{"messages":[]}`, `{"model":"m"}`, `{"messages":[{"role":"assistant","content":"x"}]}`} {
		if _, err := FindTurnMessage([]byte(body)); err == nil {
			t.Errorf("FindTurnMessage(%s) found one", body)
		}
	}
}
