package transformtest

import (
	"testing"

	"github.com/llmstream/llmstream/transform"
)

// FeedAll feeds in to p in chunks of n bytes (n > 0), then Closes it, for
// the benchmarks and the allocation tests: unlike Run it keeps nothing, so
// it allocates nothing itself.
func FeedAll(p transform.Parser, in []byte, n int, emit transform.Emit) {
	for i := 0; i < len(in); i += n {
		p.Feed(in[i:min(i+n, len(in))], emit)
	}
	p.Close(emit)
}

// Bench is a parser benchmark's body: it parses in with p, Reset between
// runs, in chunks of n bytes, and reports bytes per second and
// allocations.
func Bench(b *testing.B, p transform.Parser, in []byte, n int) {
	var text int
	emit := func(ev transform.Event) { text += len(ev.Text) }
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		p.Reset()
		FeedAll(p, in, n, emit)
	}
	if text == 0 {
		b.Fatal("no text in the events")
	}
}

// AllocsPerReply returns the allocations of parsing in with p, Reset
// between runs, in chunks of n bytes, once p is warm: the first parse
// grows its buffers to their size (PARSING.md §5.8, steady state).
func AllocsPerReply(p transform.Parser, in []byte, n int) float64 {
	emit := func(transform.Event) {}
	FeedAll(p, in, n, emit)
	return testing.AllocsPerRun(5, func() {
		p.Reset()
		FeedAll(p, in, n, emit)
	})
}
