package conversation

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/skillpet"
)

// FuzzCapture drives a Capture of a real skillpet encoder with event
// sequences built from the fuzzer's bytes and text, and checks that the
// reply is what the client got: its text the tokens' content joined, one
// form per ask_user event, the status of the last event, onEnd once.
func FuzzCapture(f *testing.F) {
	f.Add([]byte{0, 1, 2, 3, 0, 8}, "Hello \"x\"\n", `{"questions":[{"id":"a","prompt":"p","options":["x"]}]}`)
	f.Add([]byte{0, 5, 0, 6, 7, 9}, "一段", `[]`)
	f.Add([]byte{2, 2, 0, 4}, "", `{"questions":"[{\"prompt\":\"p\",\"allowFreeText\":true}]"}`)
	f.Fuzz(func(t *testing.T, script []byte, text, args string) {
		meta := transform.Meta{MessageID: "m", Now: time.Now}
		ends := 0
		c := NewCapture(skillpet.New(meta), "m", func(*Reply) { ends++ })
		var out []byte
		out = c.Begin(out)
		for i, op := range script {
			if i > 64 {
				break
			}
			cut := min(int(op)%7, len(text))
			var ev transform.Event
			switch op % 10 {
			case 0:
				ev = transform.Event{Kind: transform.KindAnswerDelta, Text: []byte(text[:cut])}
			case 1:
				ev = transform.Event{Kind: transform.KindAnswerDelta, Text: []byte(text[cut:])}
			case 2:
				ev = transform.Event{Kind: transform.KindToolCallEnd, ID: "c" + string(rune('a'+i%26)), Name: AskUserTool, Text: []byte(args)}
			case 3:
				ev = transform.Event{Kind: transform.KindToolCallEnd, ID: "s", Name: "search", Text: []byte(args)}
			case 4:
				ev = transform.Event{Kind: transform.KindReasoningDelta, Text: []byte(text)}
			case 5:
				ev = transform.Event{Kind: transform.KindSerpQueries, List: []string{text, "q"}}
			case 6:
				ev = transform.Event{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: text, Options: []string{"a"}}}
			case 7:
				ev = transform.Event{Kind: transform.KindArtifacts, Text: []byte(args)}
			case 8:
				ev = transform.Event{Kind: transform.KindFinish, Code: "stop"}
			case 9:
				ev = transform.Event{Kind: transform.KindError, Code: "upstream_error", Text: []byte(text)}
			}
			out = c.AppendEvent(out, ev)
		}
		c.Close()
		if ends != 1 {
			t.Fatalf("onEnd ran %d times", ends)
		}
		r := c.Reply()
		var tokens strings.Builder
		forms, last := 0, ""
		for _, block := range strings.Split(strings.TrimSuffix(string(out), "\n\n"), "\n\n") {
			name, data := splitEvent([]byte(block))
			switch string(name) {
			case "token":
				var v struct{ Content string }
				if err := json.Unmarshal(data, &v); err != nil {
					t.Fatalf("token data %s: %v", data, err)
				}
				tokens.WriteString(v.Content)
			case "ask_user":
				forms++
			}
			if len(name) > 0 {
				last = string(name)
			}
		}
		if r.Text() != tokens.String() {
			t.Fatalf("reply text %q, tokens %q", r.Text(), tokens.String())
		}
		if len(r.Forms()) != forms {
			t.Fatalf("%d forms, %d ask_user events", len(r.Forms()), forms)
		}
		want := map[string]Status{"done": StatusComplete, "error": StatusFailed}[last]
		if want == StatusOpen {
			want = StatusInterrupted
		}
		if r.Status != want {
			t.Fatalf("status %v after %q", r.Status, last)
		}
		for _, rec := range r.Records("a", func() string { return "t" }, 0) {
			if !json.Valid([]byte(rec.Content)) {
				t.Fatalf("record %s is not JSON", rec.Content)
			}
		}
	})
}
