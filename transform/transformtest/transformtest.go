// Package transformtest holds what the parser tests share: feeding a parser
// a split input, the split-invariant normal form of an event sequence, a
// compact notation for events (PARSING.md §4), the checks every parser
// test and fuzz target asserts (WellFormed, CheckStream, SplitInvariant,
// CheckCuts), golden files, and the steady-state allocation measure.
package transformtest

import (
	"fmt"
	"math/rand"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform"
)

// Run feeds chunks to p one Feed each, then Closes it, and returns the
// events, cloned.
func Run(p transform.Parser, chunks ...[]byte) []transform.Event {
	var evs []transform.Event
	emit := func(ev transform.Event) { evs = append(evs, ev.Clone()) }
	for _, c := range chunks {
		p.Feed(c, emit)
	}
	p.Close(emit)
	return evs
}

// RunStrings is Run with string chunks.
func RunStrings(p transform.Parser, chunks ...string) []transform.Event {
	bs := make([][]byte, len(chunks))
	for i, c := range chunks {
		bs[i] = []byte(c)
	}
	return Run(p, bs...)
}

// Normalize returns the split-invariant normal form of evs: KindRaw events
// are taken out and concatenated into raw, and adjacent deltas of the same
// kind and index are merged. Empty deltas are dropped.
func Normalize(evs []transform.Event) (norm []transform.Event, raw []byte) {
	for _, ev := range evs {
		if ev.Kind == transform.KindRaw {
			raw = append(raw, ev.Text...)
			continue
		}
		if ev.Kind.IsDelta() {
			if len(ev.Text) == 0 {
				continue
			}
			if n := len(norm); n > 0 && norm[n-1].Kind == ev.Kind && norm[n-1].Index == ev.Index {
				norm[n-1].Text = append(norm[n-1].Text, ev.Text...)
				continue
			}
			ev.Text = append([]byte(nil), ev.Text...)
		}
		norm = append(norm, ev)
	}
	return norm, raw
}

// Splits returns ways to cut input into chunks: whole, every single split
// point, one byte per chunk, and n random splits from seed. Inputs longer
// than maxSingle bytes skip the single split points, which cost O(n²).
func Splits(input []byte, seed int64, n int) [][][]byte {
	const maxSingle = 4096
	out := [][][]byte{{input}}
	if len(input) <= maxSingle {
		for i := 1; i < len(input); i++ {
			out = append(out, [][]byte{input[:i], input[i:]})
		}
	}
	ones := make([][]byte, len(input))
	for i := range input {
		ones[i] = input[i : i+1]
	}
	out = append(out, ones)
	r := rand.New(rand.NewSource(seed))
	for range n {
		out = append(out, RandomSplit(r, input))
	}
	return out
}

// RandomSplit cuts input at random points, empty chunks included.
func RandomSplit(r *rand.Rand, input []byte) [][]byte {
	var chunks [][]byte
	for rest := input; ; {
		if len(rest) == 0 {
			return append(chunks, rest)
		}
		k := r.Intn(min(len(rest), 24) + 1)
		chunks = append(chunks, rest[:k])
		rest = rest[k:]
	}
}

// CutsFromBytes cuts input at points drawn from cuts, one byte each, for
// fuzz targets whose second argument chooses the split.
func CutsFromBytes(input, cuts []byte) [][]byte {
	var chunks [][]byte
	rest := input
	for _, c := range cuts {
		k := int(c) % (len(rest) + 1)
		chunks = append(chunks, rest[:k])
		rest = rest[k:]
	}
	return append(chunks, rest)
}

// Equal reports whether two normalized event sequences are the same, and if
// not, a description of the first difference.
func Equal(want, got []transform.Event) (bool, string) {
	w, g := Format(want), Format(got)
	if w == g {
		return true, ""
	}
	return false, fmt.Sprintf("events differ:\n want %s\n  got %s", w, g)
}

// Describe writes chunks for a failure message: quoted and joined by "|",
// or only their number when there are many.
func Describe(chunks [][]byte) string {
	if len(chunks) > 8 {
		return fmt.Sprintf("(%d chunks)", len(chunks))
	}
	qs := make([]string, len(chunks))
	for i, c := range chunks {
		qs[i] = strconv.Quote(string(c))
	}
	return strings.Join(qs, "|")
}
