package aiplan

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// bigPlan returns a KNOWLEDGE_QA plan whose direct_response is about size
// bytes of Markdown with Chinese, escapes and a surrogate pair.
func bigPlan(size int) []byte {
	var b bytes.Buffer
	b.WriteString("```json\n{\"thought\":\"用户询问训练计划。\",\"response_mode\":\"KNOWLEDGE_QA\",\"direct_response\":\"")
	line := []byte(`- Day1 推：卧推 4×8，\"推举\" 3×10 \ud83d\ude00\n`)
	for b.Len() < size {
		b.Write(line)
	}
	b.WriteString("\",\"tool_calls\":[]}\n```\n")
	return b.Bytes()
}

// BenchmarkDirectResponse streams a 1 MiB and a 4 MiB direct_response in
// 1-byte and 256-byte deltas (PARSING.md JO24). Time per byte stays flat
// as the reply grows (compare the 4 MiB and 1 MiB ns/op), and a reused
// parser allocates nothing.
func BenchmarkDirectResponse(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		in := bigPlan(size)
		for _, chunk := range []int{1, 256} {
			b.Run(fmt.Sprintf("%dMiB/delta%d", size>>20, chunk), func(b *testing.B) {
				transformtest.Bench(b, New(transform.ParserOptions{}), in, chunk)
			})
		}
	}
}

// TestSteadyStateAllocs checks that streaming a long direct_response and
// tool arguments allocates nothing once the parser is warm (JO24).
func TestSteadyStateAllocs(t *testing.T) {
	inputs := map[string][]byte{
		"direct_response": bigPlan(64 << 10),
		"tool_args":       []byte(toolHead + `{"name":"search","args":{"text":"` + string(bytes.Repeat([]byte(`你好 \"x\" `), 2000)) + `"}}]}`),
	}
	for name, in := range inputs {
		for _, chunk := range []int{1, 7, 256} {
			t.Run(fmt.Sprintf("%s/delta%d", name, chunk), func(t *testing.T) {
				allocs := transformtest.AllocsPerReply(New(transform.ParserOptions{}), in, chunk)
				// A tool call's name becomes the events' string Name: one
				// allocation per call, none per delta.
				if want := map[string]float64{"direct_response": 0, "tool_args": 1}[name]; allocs != want {
					t.Errorf("%v allocations per reply of %d deltas, want %v", allocs, len(in)/chunk, want)
				}
			})
		}
	}
}
