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
// every call's arguments at its end are the deltas it streamed (or {});
// and the answer is the reply without the blocks sent as calls, byte for
// byte, but for the blanks at its edges that a block stands among
// (wantAnswer).
func FuzzTextTools(f *testing.F) {
	tight := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 40, MaxToolCalls: 2, MaxDepth: 3}}
	for _, s := range fuzzSeeds {
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
		// One more run, whole, to learn where the calls' blocks were.
		var blocks [][2]int
		p := New(hermes, opts)
		p.sentBlock = func(off int64, n int) { blocks = append(blocks, [2]int{int(off), int(off) + n}) }
		transformtest.Run(p, data)
		norm, _ := transformtest.Normalize(whole)
		args := map[int][]byte{}
		var answer []byte
		calls := 0
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
			}
		}
		if calls != len(blocks) {
			t.Fatalf("%d calls, %d blocks sent", calls, len(blocks))
		}
		if transformtest.Failed(whole) || hasLongBlankRun(data) {
			return
		}
		if want := wantAnswer(data, blocks); !bytes.Equal(answer, want) {
			t.Fatalf("the answer is not the reply without its calls:\n reply  %q\n want   %q\n answer %q", data, want, answer)
		}
	})
}

// fuzzSeeds are the corpus's seeds: the cases of issue 22 (text before,
// between and after blocks, blocks cut off) and the tag cases.
var fuzzSeeds = []string{
	weather, "Let me check.\n\n" + weather + "\n\nDone.",
	"…in Mars. " + weather + " In this way…", "A " + weather + " between " + weather + " after",
	" \n" + weather + "\n\nDone.\n\n" + weather + "\n", "\n Hi \n",
	`<tool_call>{"name":"f","arguments":"{\"a\": \"x\\ny\"}"}</tool_call>`,
	`<tool_call>{"arguments":{"a":1},"name":"f"}</tool_call>`,
	"<tool_call>not json</tool_call>", `<tool_call>{"name":"a"}<tool_call>{"name":"b"}</tool_call>`,
	`Sure. <tool_call>{"name":"f","arguments":{"a":"x`, `<tool_call>{"name":"f"}</tool_`,
	"a <tool_cal x", "x <<tool_call>", "caf\xc3\xa9 <tool_call>{}",
}

// wantAnswer is the answer the package comment promises for data, whose
// blocks at spans were sent as calls: data without the spans, less the
// blanks before its first text when a block stands among them, and after
// its last text when a block follows it.
func wantAnswer(data []byte, spans [][2]int) []byte {
	var text []byte
	var cuts []int // where in text each block was
	at := 0
	for _, s := range spans {
		text = append(text, data[at:s[0]]...)
		cuts = append(cuts, len(text))
		at = s[1]
	}
	text = append(text, data[at:]...)
	first := 0
	for first < len(text) && isBlank(text[first]) {
		first++
	}
	last := len(text)
	for last > first && isBlank(text[last-1]) {
		last--
	}
	lo, hi := 0, len(text)
	for _, c := range cuts {
		if c <= first {
			lo = first
		}
		if c >= last {
			hi = last
		}
	}
	if first == len(text) && len(cuts) > 0 {
		return nil
	}
	return text[lo:hi]
}

// hasLongBlankRun reports a run of blanks longer than the parser holds:
// beyond maxBlank, blanks at an edge may be delivered (see maxBlank).
func hasLongBlankRun(b []byte) bool {
	n := 0
	for _, c := range b {
		if !isBlank(c) {
			n = 0
			continue
		}
		if n++; n > maxBlank {
			return true
		}
	}
	return false
}
