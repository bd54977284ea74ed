package pipeline

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/protocol"
)

// upstreamBody builds an upstream SSE body whose content deltas are the
// given reply cut into pieces of size bytes (on rune boundaries), as a
// provider streams it, with role, finish, usage and [DONE] chunks.
func upstreamBody(reply string, size int) []byte {
	var b strings.Builder
	head := `data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"bench","choices":[{"index":0,"delta":`
	b.WriteString(head + `{"role":"assistant","content":""},"finish_reason":null}]}` + "\n\n")
	for len(reply) > 0 {
		n := min(size, len(reply))
		for n < len(reply) && reply[n]&0xC0 == 0x80 {
			n++
		}
		b.WriteString(head + `{"content":`)
		b.Write(jsonout.AppendStringS(nil, reply[:n]))
		b.WriteString(`},"finish_reason":null}]}` + "\n\n")
		reply = reply[n:]
	}
	b.WriteString(head + `{},"finish_reason":"stop"}]}` + "\n\n")
	b.WriteString(`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"bench","choices":[],"usage":{"total_tokens":9}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}

// benchReply is a ThinkingML reply of about n bytes: the example fixture's
// structure with its phase and final text repeated.
func benchReply(b *testing.B, n int) string {
	b.Helper()
	fixture, err := os.ReadFile("../../examples/fixtures/thinkingml.txt")
	if err != nil {
		b.Fatal(err)
	}
	s := string(fixture)
	i := strings.Index(s, "<final>") + len("<final>")
	j := strings.Index(s, "<!--")
	answer := s[i:j]
	var body strings.Builder
	for body.Len() < n {
		body.WriteString(answer)
	}
	return s[:i] + body.String() + s[j:]
}

// BenchmarkPipeline streams a ThinkingML reply through the whole pipeline
// (SSE framer, chunk decoder, parser, encoder) for each protocol, in
// 16-byte content deltas as providers send them and in the 32 KiB writes
// reverse_proxy makes. It reports upstream bytes per second, the cost per
// upstream delta, and allocations per stream: the steady state allocates
// nothing per delta, so allocs/op is the per-stream setup.
func BenchmarkPipeline(b *testing.B) {
	for _, size := range []int{1 << 20, 4 << 20} {
		reply := benchReply(b, size)
		body := upstreamBody(reply, 16)
		deltas := strings.Count(string(body), "\n\n")
		for _, proto := range protocol.Protocols() {
			b.Run(fmt.Sprintf("%s/%dMiB", proto.Name, size>>20), func(b *testing.B) {
				// 16-byte deltas make an SSE body ten times the reply.
				limits := transform.Limits{MaxReplyBytes: 1 << 30}
				p, err := New(Config{Format: format.ThinkingML, Parser: transform.ParserOptions{Limits: limits}})
				if err != nil {
					b.Fatal(err)
				}
				meta := transform.Meta{MessageID: "msg_bench", RequestID: "req_bench", Stream: true, Created: time.Unix(1, 0)}
				out := make([]byte, 0, 256<<10)
				b.SetBytes(int64(len(body)))
				b.ReportAllocs()
				b.ResetTimer()
				for range b.N {
					p.Reset(proto.NewEncoder(meta), meta)
					out = p.Start(out[:0], "text/event-stream", "")
					for rest := body; len(rest) > 0; {
						n := min(32<<10, len(rest))
						out = p.Feed(out[:0], rest[:n])
						rest = rest[n:]
					}
					out = p.Close(out[:0])
					if !p.Ended() || p.Failed() {
						b.Fatalf("stream did not complete: %+v", p.Summary())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
			})
		}
	}
}

// BenchmarkReplyRecord is BenchmarkPipeline's 1 MiB stream, one protocol,
// with the record a traced stream reads at the end of each reply
// (reply.go): off, as every stream has it, and with the reply's text kept
// for a route with trace_content (CONTRACT.md §15). Neither adds an
// allocation per delta: the first adds none at all, the second grows one
// buffer a few times per stream.
func BenchmarkReplyRecord(b *testing.B) {
	reply := benchReply(b, 1<<20)
	body := upstreamBody(reply, 16)
	deltas := strings.Count(string(body), "\n\n")
	proto, _ := protocol.Lookup("openai")
	for _, capture := range []bool{false, true} {
		b.Run(fmt.Sprintf("capture=%v", capture), func(b *testing.B) {
			limits := transform.Limits{MaxReplyBytes: 1 << 30}
			p, err := New(Config{Format: format.ThinkingML, Parser: transform.ParserOptions{Limits: limits}})
			if err != nil {
				b.Fatal(err)
			}
			meta := transform.Meta{MessageID: "msg_bench", RequestID: "req_bench", Stream: true, Created: time.Unix(1, 0)}
			out := make([]byte, 0, 256<<10)
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				p.Reset(proto.NewEncoder(meta), meta)
				p.CaptureReplies(capture)
				out = p.Start(out[:0], "text/event-stream", "")
				for rest := body; len(rest) > 0; {
					n := min(32<<10, len(rest))
					out = p.Feed(out[:0], rest[:n])
					rest = rest[n:]
				}
				out = p.Close(out[:0])
				if r := p.Reply(); !p.Ended() || r.FirstEvent.IsZero() || capture != (len(r.Text) > 0) {
					b.Fatalf("stream did not complete with its record: %+v", p.Summary())
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*deltas), "ns/delta")
		})
	}
}
