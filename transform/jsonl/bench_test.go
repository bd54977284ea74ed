package jsonl

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// reply returns a well-ordered jsonl reply of about size bytes: half
// phase_delta lines, half final_delta lines, with escapes and Chinese.
func reply(size int) []byte {
	var b bytes.Buffer
	b.WriteString(lThinkStart + lPhase1)
	phase := []byte(`{"event":"phase_delta","id":1,"text":"分析需求：目标=增肌，每周 3-4 练；\"复合动作\"优先。\n"}` + "\n")
	final := []byte(`{"event":"final_delta","text":"- Day1 推：卧推 4×8，推举 3×10，\u4f60\u597d。\n"}` + "\n")
	for b.Len() < size/2 {
		b.Write(phase)
	}
	b.WriteString(lThinkEnd)
	for b.Len() < size {
		b.Write(final)
	}
	b.WriteString(lFinalEnd)
	return b.Bytes()
}

// BenchmarkParser parses a 1 MiB and a 4 MiB reply in 1-byte and 256-byte
// deltas. Time per byte stays flat as the reply grows (no re-parse: compare
// the 4 MiB and 1 MiB ns/op), and a reused parser allocates nothing.
func BenchmarkParser(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		in := reply(size)
		for _, chunk := range []int{1, 256} {
			b.Run(fmt.Sprintf("%dMiB/delta%d", size>>20, chunk), func(b *testing.B) {
				transformtest.Bench(b, New(transform.ParserOptions{}), in, chunk)
			})
		}
	}
}

// TestSteadyStateAllocs checks that feeding deltas of a long reply
// allocates nothing once the parser is warm (PARSING.md §5.8).
func TestSteadyStateAllocs(t *testing.T) {
	in := reply(64 << 10)
	for _, chunk := range []int{1, 7, 256} {
		t.Run(fmt.Sprint("delta", chunk), func(t *testing.T) {
			allocs := transformtest.AllocsPerReply(New(transform.ParserOptions{}), in, chunk)
			if allocs != 0 {
				t.Errorf("%v allocations per reply of %d deltas, want 0", allocs, len(in)/chunk)
			}
		})
	}
}
