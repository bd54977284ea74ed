package finalresult

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// bigResult returns an answer_ready result whose message is about size
// bytes of Markdown with Chinese and escapes.
func bigResult(size int) []byte {
	var b bytes.Buffer
	b.WriteString("```json\n{\"status\":\"answer_ready\",\"message\":\"")
	line := []byte(`- 惯性：物体保持\"静止\"或匀速直线运动 \u2014 F = ma\n`)
	for b.Len() < size {
		b.Write(line)
	}
	b.WriteString("\",\"artifacts\":[]}\n```\n")
	return b.Bytes()
}

// BenchmarkMessage streams a 1 MiB and a 4 MiB message in 1-byte and
// 256-byte deltas (specs/004 §7.3.3).
func BenchmarkMessage(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		in := bigResult(size)
		for _, chunk := range []int{1, 256} {
			b.Run(fmt.Sprintf("%dMiB/delta%d", size>>20, chunk), func(b *testing.B) {
				transformtest.Bench(b, New(transform.ParserOptions{}), in, chunk)
			})
		}
	}
}

// TestSteadyStateAllocs checks that streaming a long message allocates
// nothing once the parser is warm.
func TestSteadyStateAllocs(t *testing.T) {
	in := bigResult(64 << 10)
	for _, chunk := range []int{1, 7, 256} {
		t.Run(fmt.Sprint("delta", chunk), func(t *testing.T) {
			if allocs := transformtest.AllocsPerReply(New(transform.ParserOptions{}), in, chunk); allocs != 0 {
				t.Errorf("%v allocations per reply of %d deltas, want 0", allocs, len(in)/chunk)
			}
		})
	}
}
