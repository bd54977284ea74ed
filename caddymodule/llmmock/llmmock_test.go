package llmmock

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestMockPieces checks how llm_mock cuts a reply into deltas: nothing
// lost, never inside a UTF-8 sequence, chunk_size bytes and the rest of a
// rune at most, and with random_chunks sizes of 1 to chunk_size that
// differ per request but repeat for the same request number.
func TestMockPieces(t *testing.T) {
	reply := []byte(strings.Repeat("ab 三分化 😀 x", 40))
	cases := []struct {
		name   string
		size   int
		random bool
	}{
		{"one byte", 1, false},
		{"odd size", 13, false},
		{"random", 24, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cut := func(seed uint64) [][]byte {
				turn := &mockTurn{m: &Mock{ChunkSize: tc.size, RandomChunks: tc.random}}
				if tc.random {
					turn.rng = rand.New(rand.NewPCG(seed, 0x6c6c6d73))
				}
				return turn.pieces(reply)
			}
			pieces := cut(1)
			if got := bytes.Join(pieces, nil); !bytes.Equal(got, reply) {
				t.Fatalf("the pieces do not add up to the reply")
			}
			sizes := map[int]bool{}
			for _, p := range pieces {
				if !utf8.Valid(p) {
					t.Fatalf("piece %q cuts a UTF-8 sequence", p)
				}
				// A cut that falls inside a rune moves to its end: at most
				// three bytes more.
				if len(p) > tc.size+utf8.UTFMax-1 {
					t.Fatalf("piece %q is longer than %d bytes and the rest of a rune", p, tc.size)
				}
				sizes[len(p)] = true
			}
			if !tc.random {
				return
			}
			if len(sizes) < 5 {
				t.Errorf("random_chunks gave only the sizes %v", sizes)
			}
			if again := cut(1); len(again) != len(pieces) || !bytes.Equal(bytes.Join(again, []byte{0}), bytes.Join(pieces, []byte{0})) {
				t.Error("the same request number cut the reply differently")
			}
			if other := cut(2); bytes.Equal(bytes.Join(other, []byte{0}), bytes.Join(pieces, []byte{0})) {
				t.Error("two request numbers cut the reply the same way")
			}
		})
	}
}
