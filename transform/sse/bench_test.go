package sse

import (
	"strconv"
	"strings"
	"testing"
)

// chatBody returns a realistic upstream body: n chat.completion.chunk
// events of a few tokens each, a keep-alive comment every 50, a final chunk
// and [DONE].
func chatBody(n int) []byte {
	var b strings.Builder
	words := []string{"Sure", "! Here", " is", " the", " answer", "：你好", "\\n\\n- ", " item"}
	for i := range n {
		if i%50 == 49 {
			b.WriteString(": keep-alive\n\n")
		}
		b.WriteString(`data: {"id":"chatcmpl-9x7Yq2","object":"chat.completion.chunk","created":1735689600,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":{"content":"`)
		b.WriteString(words[i%len(words)])
		b.WriteString(`"},"logprobs":null,"finish_reason":null}]}` + "\n\n")
	}
	b.WriteString(`data: {"id":"chatcmpl-9x7Yq2","object":"chat.completion.chunk","created":1735689600,"model":"gpt-4o-mini-2024-07-18","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// BenchmarkFramer frames a realistic body read 4096 bytes and 1 byte at a
// time.
func BenchmarkFramer(b *testing.B) {
	body := chatBody(500)
	for _, size := range []int{4096, 1} {
		b.Run("read="+strconv.Itoa(size), func(b *testing.B) {
			var f Framer
			n := 0
			event := func(ev Event) { n += len(ev.Data) }
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				f.Reset()
				for p := body; len(p) > 0; {
					k := min(size, len(p))
					if err := f.Feed(p[:k], event); err != nil {
						b.Fatal(err)
					}
					p = p[k:]
				}
				if err := f.Close(event); err != nil {
					b.Fatal(err)
				}
			}
			if n == 0 {
				b.Fatal("no events")
			}
		})
	}
}

// BenchmarkFramerLongLine frames one event whose data line is 1 MiB and
// 2 MiB long, read 16 bytes at a time: the time per byte must not grow with
// the line (PARSING.md §5.11 linearity).
func BenchmarkFramerLongLine(b *testing.B) {
	for _, n := range []int{1 << 20, 2 << 20} {
		body := []byte("data: " + strings.Repeat("x", n-8) + "\n\n")
		b.Run(strconv.Itoa(n>>20)+"MiB", func(b *testing.B) {
			f := Framer{MaxLine: 4 << 20}
			event := func(Event) {}
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				f.Reset()
				for p := body; len(p) > 0; {
					k := min(16, len(p))
					if err := f.Feed(p[:k], event); err != nil {
						b.Fatal(err)
					}
					p = p[k:]
				}
				if err := f.Close(event); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
