package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/protocol"
)

// BenchmarkValidation streams a 1 MiB FinalResult message in 16-byte
// deltas through the aisdk and openai protocols, without validation and
// with it acting (the reply held until it passes, then released): the
// cost of the gate per delta and per stream.
func BenchmarkValidation(b *testing.B) {
	var msg strings.Builder
	for msg.Len() < 1<<20 {
		msg.WriteString(`- 惯性：物体保持\"静止\"或匀速直线运动 — F = ma\n`)
	}
	reply := `{"status":"answer_ready","message":"` + msg.String() + `","artifacts":[]}`
	body := upstreamBody(reply, 16)
	deltas := strings.Count(string(body), "\n\n")
	for _, name := range []string{"aisdk", "openai"} {
		proto, _ := protocol.Lookup(name)
		for _, v := range []struct {
			name string
			val  *Validation
		}{{"plain", nil}, {"held", &Validation{Act: true, Retries: 1, Terminal: true}}} {
			b.Run(name+"/"+v.name, func(b *testing.B) {
				limits := transform.Limits{MaxReplyBytes: 1 << 30}
				p, err := New(Config{Format: format.FinalResult, Parser: transform.ParserOptions{Limits: limits}})
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
					p.Validate(v.val)
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
