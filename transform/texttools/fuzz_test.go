package texttools

import (
	"bytes"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzTextTools checks the parser's promises on any reply and any split
// (the first cut byte also picks tight limits): no panic, well-formed
// events, the split gives the one-shot events, the raw text is the reply;
// every call's arguments at its end are the deltas it streamed (or {}); and
// a reply in which no block was found, or whose blocks were all text, is
// its own answer, byte for byte.
func FuzzTextTools(f *testing.F) {
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 40, MaxToolCalls: 2, MaxDepth: 3}}
	seeds := []string{
		weather, "Let me check.\n\n" + weather + "\n\nDone.",
		`<tool_call>{"name":"f","arguments":"{\"a\": \"x\\ny\"}"}</tool_call>`,
		`<tool_call>{"arguments":{"a":1},"name":"f"}</tool_call>`,
		"<tool_call>not json</tool_call>", `<tool_call>{"name":"a"}<tool_call>{"name":"b"}</tool_call>`,
		`<tool_call>{"name":"f","arguments":{"a":"x`, "a <tool_cal x", "x <<tool_call>", "caf\xc3\xa9 <tool_call>{}",
	}
	for _, s := range seeds {
		f.Add([]byte(s), []byte{3, 17, 1})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		opts := transform.ParserOptions{}
		if len(cuts) > 0 && cuts[0]%4 == 0 {
			opts = tight
		}
		whole, err := transformtest.CheckCuts(func() transform.Parser { return New(hermes, opts) }, data, cuts)
		if err != nil {
			t.Fatal(err)
		}
		norm, _ := transformtest.Normalize(whole)
		args := map[int][]byte{}
		var answer []byte
		calls, broken := 0, 0
		for _, ev := range norm {
			switch ev.Kind {
			case transform.KindToolCallStart:
				calls++
				args[ev.Index] = []byte{}
			case transform.KindToolArgsDelta:
				args[ev.Index] = append(args[ev.Index], ev.Text...)
			case transform.KindToolCallEnd:
				if got := args[ev.Index]; !bytes.Equal(ev.Text, got) && !(len(bytes.TrimSpace(got)) == 0 && string(ev.Text) == "{}") {
					t.Fatalf("call %d ends with %q after the deltas %q", ev.Index, ev.Text, got)
				}
			case transform.KindAnswerDelta:
				answer = append(answer, ev.Text...)
			case transform.KindViolation:
				if ev.Code == CodeBadToolCall || ev.Code == CodeUnterminatedToolCall {
					broken++
				}
			}
		}
		if !transformtest.Failed(whole) && (calls == 0 || calls == broken) && !bytes.Equal(answer, data) {
			t.Fatalf("no call, yet the answer is not the reply:\n reply  %q\n answer %q", data, answer)
		}
	})
}
