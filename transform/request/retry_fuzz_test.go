package request

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzRetry reads any body as the checks do and, for every body that is a
// chat request, appends a retry turn made of fuzzed text: no panic, the
// retry is valid JSON whose messages are the original ones and the turn's
// (in order, nothing else changed), and the original body is untouched.
func FuzzRetry(f *testing.F) {
	for _, s := range fuzzSeeds {
		f.Add([]byte(s), []byte(`{"status":"artifact_ready","message":"x"}`), "call_1", []byte(`{"q":1}`))
	}
	f.Add([]byte(`{"messages":[{"role":"user","content":"u"},{"role":"assistant","tool_calls":[{"id":"a","function":{"name":"f"}}]},{"role":"tool","tool_call_id":"a","content":[{"type":"text","text":"Error"}]}]}`),
		[]byte("\xff\x00</final>"), "", []byte("not json"))
	f.Fuzz(func(t *testing.T, body, content []byte, id string, args []byte) {
		orig := bytes.Clone(body)
		in, err := Inspect(body)
		for _, r := range in.Loop.Results {
			_ = r.Text()
		}
		if err != nil {
			return
		}
		turn := RetryTurn{Content: content, Correction: "fix " + id}
		if id != "" {
			turn.Calls = []RetryCall{{ID: id, Name: "f", Arguments: args, Result: "bad"}}
		}
		out, err := AppendRetry(nil, body, turn)
		if !bytes.Equal(body, orig) {
			t.Fatal("AppendRetry modified its input")
		}
		if err != nil {
			t.Fatalf("AppendRetry refused a body Inspect read: %v", err)
		}
		var before, after struct {
			Messages []json.RawMessage `json:"messages"`
		}
		if json.Unmarshal(body, &before) != nil {
			return // a duplicate key JSON keeps differently; Inspect took the last
		}
		if err := json.Unmarshal(out, &after); err != nil {
			t.Fatalf("the retry body is not JSON: %v\n%s", err, out)
		}
		want := 2 + len(turn.Calls)
		if len(after.Messages) != len(before.Messages)+want {
			t.Fatalf("%d messages after the retry, want %d + %d", len(after.Messages), len(before.Messages), want)
		}
		for i, m := range before.Messages {
			if !bytes.Equal(m, after.Messages[i]) {
				t.Fatalf("message %d changed: %s → %s", i, m, after.Messages[i])
			}
		}
		var assistant struct {
			Role    string
			Content *string
		}
		if err := json.Unmarshal(after.Messages[len(before.Messages)], &assistant); err != nil || assistant.Role != "assistant" {
			t.Fatalf("the first message added is %s", after.Messages[len(before.Messages)])
		}
		// Invalid UTF-8 becomes U+FFFD, byte by byte, as encoding/json writes it.
		var text string
		enc, _ := json.Marshal(string(content))
		_ = json.Unmarshal(enc, &text)
		if len(turn.Calls) == 0 && (assistant.Content == nil || *assistant.Content != text) {
			t.Fatalf("the assistant content %v is not the reply %q", assistant.Content, content)
		}
	})
}
