package jsonstream

import (
	"bytes"
	"fmt"
	"testing"
)

// longObject returns an object whose "message" string is about size bytes
// of text with escapes and Chinese, and whose tool call arguments are
// captured raw.
func longObject(size int) []byte {
	var b bytes.Buffer
	b.WriteString(`{"thought":"t","tool_calls":[{"name":"s","arguments":{"q":"x"}}],"message":"`)
	line := []byte(`第一行 \"quoted\" text\n`)
	for b.Len() < size {
		b.Write(line)
	}
	b.WriteString(`"}`)
	return b.Bytes()
}

type countHandler struct{ n int }

func (h *countHandler) HandleToken(tk *Token) { h.n += len(tk.Text) }

func feedChunks(t *Tokenizer, in []byte, n int, h Handler) {
	for i := 0; i < len(in); i += n {
		t.Feed(in[i:min(i+n, len(in))], h)
	}
	t.Close(h)
}

// BenchmarkTokenizer tokenizes a 1 MiB and a 4 MiB string value in 1-byte
// and 256-byte chunks (JO24): time per byte stays flat as the input grows,
// and nothing is allocated.
func BenchmarkTokenizer(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		in := longObject(size)
		for _, chunk := range []int{1, 256} {
			b.Run(fmt.Sprintf("%dMiB/chunk%d", size>>20, chunk), func(b *testing.B) {
				var t Tokenizer
				t.Init(Config{Paths: testPaths, Doc: DocStrict})
				h := &countHandler{}
				b.SetBytes(int64(len(in)))
				b.ReportAllocs()
				for b.Loop() {
					t.Reset()
					feedChunks(&t, in, chunk, h)
				}
			})
		}
	}
}

// TestTokenizerAllocs checks that a warm Tokenizer allocates nothing per
// Feed (PARSING.md §5.8), whether strings alias the input or need their
// escapes decoded, and for raw captures.
func TestTokenizerAllocs(t *testing.T) {
	in := longObject(64 << 10)
	for _, chunk := range []int{1, 3, 256} {
		t.Run(fmt.Sprint("chunk", chunk), func(t *testing.T) {
			var tk Tokenizer
			tk.Init(Config{Paths: testPaths, Doc: DocStrict})
			h := &countHandler{}
			feedChunks(&tk, in, chunk, h)
			if allocs := testing.AllocsPerRun(5, func() {
				tk.Reset()
				feedChunks(&tk, in, chunk, h)
			}); allocs != 0 {
				t.Errorf("%v allocations per input of %d chunks, want 0", allocs, len(in)/chunk)
			}
		})
	}
}
