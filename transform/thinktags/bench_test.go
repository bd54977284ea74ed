package thinktags

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
)

// rawReply builds an R1-style reply of about size bytes: reasoning (about
// half, mixed Chinese and ASCII, with stray '<' and tags that are not
// </think>), then </think>, a blank line and a Markdown answer. With
// prefilled, the opening <think> is left out, as the chat template wrote
// it.
func rawReply(size int, prefilled bool) []byte {
	const zh = "用户希望每周训练三天，目标是增肌；需要说明动作选择、训练容量与恢复。"
	const en = "Plan the split: push, pull, legs; a < b && <b>bold</b> </thinker> stays text. "
	var b bytes.Buffer
	if !prefilled {
		b.WriteString("<think>\n")
	}
	for b.Len() < size/2 {
		b.WriteString(zh + en + "\n")
	}
	b.WriteString("</think>\n\n# 三分化训练方案\n\n")
	for b.Len() < size {
		b.WriteString("- **第 1 天（推）**：卧推 4×8 — keep a < b in mind.\n" + zh + "\n\n")
	}
	return b.Bytes()
}

// BenchmarkThinkTags streams a reply through the stage in front of the text
// format (PARSING.md §5.11: linear in the reply, no allocation per delta).
func BenchmarkThinkTags(b *testing.B) {
	for _, mode := range []transform.ThinkTags{transform.ThinkTagsAuto, transform.ThinkTagsPrefilled} {
		for _, bc := range []struct{ size, delta int }{
			{1 << 20, 1}, {1 << 20, 16}, {1 << 20, 256}, {1 << 20, 4096},
			{4 << 20, 1}, {4 << 20, 16}, {4 << 20, 256}, {4 << 20, 4096},
		} {
			reply := rawReply(bc.size, mode == transform.ThinkTagsPrefilled)
			name := mode.String() + "/" + strconv.Itoa(bc.size>>20) + "MiB/delta=" + strconv.Itoa(bc.delta)
			b.Run(name, func(b *testing.B) {
				p := New(format.NewText(), mode, false, transform.Limits{})
				n := 0
				emit := func(ev transform.Event) { n += len(ev.Text) }
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
				if n == 0 {
					b.Fatal("no text")
				}
			})
		}
	}
}
