package wiretest_test

import (
	"flag"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/transformtest"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// The markup of edgeCases.
const (
	weatherCall = `<tool_call>{"name": "get_weather", "arguments": {"city": "Paris"}}</tool_call>`
	tmHead      = `<thinking><phase id="1"><title>T</title>x</phase></thinking><final>`
	tmTail      = "<!-- <serp_queries>\n[\"q\"]\n</serp_queries> --></final>"
)

// edgeCase is a reply with text before, between and after markup, and the
// answer every client must read from it: the model's text minus the
// markup, blanks included (issue 22), except the blanks at the answer's
// very start and end that stand next to markup.
type edgeCase struct {
	name   string
	format format.Name
	tools  string // text_tools
	reply  string
	answer string
	calls  int // tool calls the reply holds
}

var edgeCases = []edgeCase{
	// text_tools hermes: blocks are tool calls, the text around them the
	// answer.
	{"hermes/space_on_both_sides", format.Text, "hermes", "…in Mars. " + weatherCall + " In this way…", "…in Mars.  In this way…", 1},
	{"hermes/paragraphs", format.Auto, "hermes", "Let me check.\n\n" + weatherCall + "\n\nDone.", "Let me check.\n\n\n\nDone.", 1},
	{"hermes/between_blocks", format.Text, "hermes", "A " + weatherCall + " between " + weatherCall + " after", "A  between  after", 2},
	{"hermes/only_calls", format.Auto, "hermes", " \n" + weatherCall + "\n" + weatherCall + "\n", "", 2},
	{"hermes/edges", format.Text, "hermes", "\n" + weatherCall + "\n\nDone.\n\n" + weatherCall, "Done.", 2},
	{"hermes/no_block", format.Text, "hermes", "\n  Hi \n", "\n  Hi \n", 0},
	// A block cut off by the end of the reply is text, and no call.
	{"hermes/cut_off", format.Text, "hermes", `Sure. <tool_call>{"name": "get_weather", "arguments": {"ci`, `Sure. <tool_call>{"name": "get_weather", "arguments": {"ci`, 0},
	// ThinkingML: a code sample's </final> ends the answer early; the
	// newline after it is the answer's.
	{"thinkingml/code_sample_final", format.ThinkingML, "", tmHead + "Example:\n```xml\n<final>demo</final>\n```\n", "Example:\n```xml\n<final>demo\n```\n", 0},
	{"thinkingml/final_verbatim", format.ThinkingML, "", tmHead + "\nAnswer.\n\n" + tmTail + "\n", "\nAnswer.", 0},
	// JSON formats: the end of the object, its fence.
	{"aiplan/second_object", format.AIPlan, "", `{"thought":"t","response_mode":"GENERAL_CHAT","direct_response":"first","tool_calls":[]}` + "\n" + `{"thought":"u"}`, "first\n{\"thought\":\"u\"}", 0},
	{"aiplan/after_the_fence", format.AIPlan, "", "Here:\n\n```json\n" + `{"thought":"t","response_mode":"GENERAL_CHAT","direct_response":"d","tool_calls":[]}` + "\n```\n\nMore.", "Here:\n\nd\nMore.", 0},
	{"final_result/after_the_object", format.FinalResult, "", `{"status":"answer_ready","message":"m"}` + "\n\nP.S. more", "m\n\nP.S. more", 0},
	{"jsonl/prose_between_lines", format.JSONL, "", `{"event":"final_delta","text":"a"}` + "\n\nHello\n\n  Next\n" + `{"event":"final_delta","text":"b"}` + "\n", "a\n\nHello\n\n  Next\nb", 0},
	// <think> read in front of every format: reasoning and answer apart.
	{"think_tags/answer_after_reasoning", format.Text, "", "<think>r</think>\n\nThe answer.\n", "The answer.\n", 0},
}

// TestBlanksAtMarkup: for every protocol, every edge case, whole and cut
// in pieces of 1 and 7 bytes and at random, the answer a client reads is
// the case's, byte for byte (a client whose answer is the raw reply,
// gymbro's, reads the reply itself), the wire keeps the protocol's rules, and the tool
// calls are the reply's whole calls.
func TestBlanksAtMarkup(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 22))
	for _, tc := range edgeCases {
		t.Run(tc.name, func(t *testing.T) {
			reply := []byte(tc.reply)
			splits := map[string][][]byte{
				"whole": {reply}, "1": cutEvery(reply, 1), "7": cutEvery(reply, 7),
				"random": transformtest.CutsFromBytes(reply, []byte{byte(rng.IntN(9) + 1), byte(rng.IntN(9) + 1), byte(rng.IntN(9) + 1)}),
			}
			for split, deltas := range splits {
				for _, pr := range protocol.Protocols() {
					streams := []bool{true}
					if pr.ClientChoosesStream {
						streams = append(streams, false)
					}
					for _, stream := range streams {
						out, evs, meta := runEdge(t, tc, pr, deltas, stream)
						c, err := wiretest.For(pr.Name)
						if err != nil {
							t.Fatal(err)
						}
						seen, err := c.Read(out, meta)
						if err != nil {
							t.Fatalf("%s, split %s (stream %v): %v\nwire:\n%s", pr.Name, split, stream, err, out)
						}
						want := tc.answer
						if c.RawAnswer {
							want = tc.reply
						}
						if seen.Answer != want {
							t.Errorf("%s, split %s (stream %v): the client read the answer\n %q\nwant\n %q\nevents: %s",
								pr.Name, split, stream, seen.Answer, want, transformtest.Format(evs))
						}
						calls := 0
						for _, ev := range evs {
							if ev.Kind == transform.KindToolCallStart {
								calls++
							}
						}
						if calls != tc.calls {
							t.Errorf("%s, split %s: %d tool calls, want %d", pr.Name, split, calls, tc.calls)
						}
					}
				}
			}
		})
	}
}

// runEdge streams the deltas of tc through the pipeline of its format,
// with its text_tools, and protocol pr, as run does.
func runEdge(t *testing.T, tc edgeCase, pr *protocol.Protocol, deltas [][]byte, stream bool) ([]byte, []transform.Event, transform.Meta) {
	t.Helper()
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	meta := transform.Meta{
		MessageID: "msg-w", RequestID: "req-w", Provider: "openai", Model: "asked-model",
		Stream: stream, ReasoningTitle: "Thought", Created: clock,
		Now: func() time.Time { clock = clock.Add(300 * time.Millisecond); return clock },
	}
	p, err := pipeline.New(pipeline.Config{Format: tc.format, Parser: transform.ParserOptions{TextTools: tc.tools}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{Encoder: pr.NewEncoder(meta)}
	p.Reset(rec, meta)
	out := p.Start(nil, "text/event-stream", "up-req")
	out = p.Feed(out, upstream{content: deltas}.body())
	out = p.Close(out)
	return out, rec.evs, meta
}

// TestEdgeRepliesAreSeeds keeps the edge cases in testdata, so that
// TestWire's property and FuzzWire's corpus cover them in every format
// (run with -update, the flag the test kits define, after changing a
// case).
func TestEdgeRepliesAreSeeds(t *testing.T) {
	for _, tc := range edgeCases {
		path := filepath.Join("testdata", "edge_"+strings.ReplaceAll(tc.name, "/", "_")+".txt")
		if f := flag.Lookup("update"); f != nil && f.Value.String() == "true" {
			if err := os.WriteFile(path, []byte(tc.reply), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil || string(b) != tc.reply {
			t.Errorf("%s is not the reply of edge case %s (run with -update): %v", path, tc.name, err)
		}
	}
}
