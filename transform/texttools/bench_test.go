package texttools

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/llmstream/llmstream/transform"
)

// toolReply builds a Hermes-style reply of about size bytes: paragraphs of
// text (mixed Chinese and ASCII, with stray '<' and tags that are not
// <tool_call>) and, every two paragraphs, a <tool_call> block with an
// object of arguments.
func toolReply(size int) []byte {
	const zh = "我先查一下天气，再安排行程。"
	const en = "Checking the weather first; a < b && <b>x</b> <tool_cal stays text. "
	var b bytes.Buffer
	for i := 0; b.Len() < size; i++ {
		b.WriteString(zh + en + "\n\n" + en + zh + "\n\n")
		b.WriteString(`<tool_call>` + "\n" + `{"name": "get_weather", "arguments": {"city": "Paris", "day": ` +
			strconv.Itoa(i) + `, "note": "温度 and wind, \"quoted\" text"}}` + "\n</tool_call>\n\n")
	}
	return b.Bytes()
}

// BenchmarkTextTools streams a reply with tool-call blocks (PARSING.md
// §5.11: linear in the reply, no allocation per delta). The call limit is
// raised so that a 4 MiB reply may hold its ~17 000 calls.
func BenchmarkTextTools(b *testing.B) {
	opts := transform.ParserOptions{Limits: transform.Limits{MaxToolCalls: 1 << 20}}
	for _, bc := range []struct{ size, delta int }{
		{1 << 20, 1}, {1 << 20, 16}, {1 << 20, 256}, {1 << 20, 4096},
		{4 << 20, 1}, {4 << 20, 16}, {4 << 20, 256}, {4 << 20, 4096},
	} {
		reply := toolReply(bc.size)
		b.Run(strconv.Itoa(bc.size>>20)+"MiB/delta="+strconv.Itoa(bc.delta), func(b *testing.B) {
			p := New(hermes, opts)
			calls := 0
			emit := func(ev transform.Event) {
				if ev.Kind == transform.KindToolCallEnd {
					calls++
				}
			}
			// One reply first: a pooled parser has grown its buffers.
			p.Feed(reply, emit)
			p.Close(emit)
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				p.Reset()
				for rest := reply; len(rest) > 0; {
					k := min(bc.delta, len(rest))
					p.Feed(rest[:k], emit)
					rest = rest[k:]
				}
				p.Close(emit)
			}
			if calls == 0 {
				b.Fatal("no call")
			}
			b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
		})
	}
}
