package conversation

import (
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/skillpet"
)

// BenchmarkCapture measures what capturing a reply adds to a skillpet
// stream: a reply of 1024 answer deltas of 16 bytes (with escapes and
// Chinese), encoded plainly and through a Capture.
func BenchmarkCapture(b *testing.B) {
	delta := []byte("一段\"回答\"\n text ")
	const n = 1024
	for _, captured := range []bool{false, true} {
		name := "plain"
		if captured {
			name = "captured"
		}
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(n * len(delta)))
			b.ReportAllocs()
			meta := transform.Meta{MessageID: "msg_1", Now: time.Now}
			var out []byte
			for b.Loop() {
				var enc transform.Encoder = skillpet.New(meta)
				if captured {
					enc = NewCapture(enc, "msg_1", func(*Reply) {})
				}
				out = enc.AppendEvent(out[:0], transform.Event{Kind: transform.KindAnswerStart})
				for range n {
					out = enc.AppendEvent(out[:0], transform.Event{Kind: transform.KindAnswerDelta, Text: delta})
				}
				out = enc.AppendEvent(out[:0], transform.Event{Kind: transform.KindFinish, Code: "stop"})
			}
		})
	}
}
