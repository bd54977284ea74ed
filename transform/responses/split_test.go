package responses_test

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/responses"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// streamResponse runs an upstream body, cut into chunks, through the
// pipeline and the responses encoder, and returns the client's bytes.
func streamResponse(t *testing.T, f format.Name, stream bool, chunks [][]byte) []byte {
	t.Helper()
	p, err := pipeline.New(pipeline.Config{Format: f})
	if err != nil {
		t.Fatal(err)
	}
	meta := transform.Meta{MessageID: "msg_split", RequestID: "req", Model: "client-model", Stream: stream, Created: time.Unix(1, 0),
		Now: func() time.Time { return time.Unix(2, 0) }}
	p.Reset(responses.New(meta), meta)
	out := p.Start(nil, "text/event-stream", "up-1")
	for _, c := range chunks {
		out = p.Feed(out, c)
	}
	return p.Close(out)
}

// TestSplitInvariance: however the upstream cut its reply into deltas and
// however those bytes arrived, the client assembles the same Response:
// the same items, texts, calls and usage (events may be cut differently;
// what they add up to may not).
func TestSplitInvariance(t *testing.T) {
	tm, err := os.ReadFile("../../examples/fixtures/thinkingml.txt")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := os.ReadFile("../../examples/fixtures/aiplan_tools.json")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, reasoning, reply string
		calls                  [][2]string
		format                 format.Name
		answer                 string // what the client must read, a part of it
	}{
		{name: "thinkingml_and_native_reasoning", reasoning: "先想一想：三天？", reply: string(tm), format: format.Auto, answer: "# 三分化训练方案"},
		{name: "think_tags_text_and_native_calls", reply: "<think>Need \"data\" \\ first.</think>Let me search — 稍等。",
			calls:  [][2]string{{"search", `{"q":"三分化 \"split\""}`}, {"ask_user", `{"questions":[{"question":"Why?","choices":["a","b"]}]}`}},
			format: format.Text, answer: "Let me search — 稍等。"},
		{name: "aiplan_calls", reply: string(plan), format: format.AIPlan},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ref := transformtest.SSEReply(tt.reasoning, tt.reply, tt.calls, 1<<20)
			want := assembleFinal(t, streamResponse(t, tt.format, true, [][]byte{ref}))
			if !strings.Contains(want.answer, tt.answer) || want.status != "completed" {
				t.Fatalf("the reference reply assembled to %+v", want)
			}
			// The whole Response of a client that asked for no stream is
			// the same.
			var whole map[string]any
			if err := json.Unmarshal(streamResponse(t, tt.format, false, [][]byte{ref}), &whole); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(whole["output"], want.response["output"]) {
				t.Errorf("the whole Response's output differs:\n%v\n%v", whole["output"], want.response["output"])
			}
			runs := 0
			defer func() {
				if runs < 5*22 {
					t.Errorf("only %d splits compared", runs)
				}
			}()
			for _, size := range []int{1, 2, 5, 13, 64} {
				body := transformtest.SSEReply(tt.reasoning, tt.reply, tt.calls, size)
				splits := transformtest.Splits(body, int64(size), 20)
				singles := len(splits) - 22 // whole, one byte each, 20 random
				for i, chunks := range splits {
					if i >= 1 && i <= singles && i%31 != 0 {
						continue // every 31st single split point: all of them cost O(n²)
					}
					runs++
					got := assembleFinal(t, streamResponse(t, tt.format, true, chunks))
					if !reflect.DeepEqual(got.response, want.response) {
						t.Fatalf("deltas of %d bytes, split %d %s: the Response differs:\n got %v\nwant %v",
							size, i, transformtest.Describe(chunks), got.response, want.response)
					}
				}
			}
		})
	}
}

// final is a stream's accumulation and its terminal Response.
type final struct {
	*accumulated
	response map[string]any
}

// assembleFinal accumulates a stream strictly and returns it with the
// Response of its terminal event.
func assembleFinal(t *testing.T, out []byte) final {
	t.Helper()
	a, err := accumulate(out)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if a.terminal == "" {
		t.Fatalf("no terminal event:\n%s", out)
	}
	return final{a, lastResponse(t, out)}
}
