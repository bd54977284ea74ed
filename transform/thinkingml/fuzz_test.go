package thinkingml

import (
	"bytes"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// fuzzOptions derives parser options from the fuzzer's cut bytes, so that
// the fuzzer also explores tight limits (where the fatal errors live).
func fuzzOptions(cuts []byte) transform.ParserOptions {
	var o transform.ParserOptions
	if len(cuts) > 0 {
		if cuts[0]&2 != 0 {
			o.Limits.MaxTagBytes = 20
			o.Limits.MaxBlockBytes = 48
		}
	}
	return o
}

// FuzzThinkingML checks the parser's promises on any input and any split:
// no panic, well-formed events, the split gives the one-shot events, the
// raw channel is the input with only the documented escapes, and every
// input byte is either emitted as text or skipped as markup.
func FuzzThinkingML(f *testing.F) {
	for _, input := range fixtures(f) {
		f.Add(input, []byte{0, 7, 3})
		f.Add(input, []byte{3, 1, 1, 1, 1, 1, 1, 1})
	}
	for _, tc := range tmCases {
		var cuts []byte
		for _, c := range tc.chunks[:len(tc.chunks)-1] {
			cuts = append(cuts, byte(len(c)))
		}
		f.Add([]byte(join(tc.chunks)), cuts)
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		opts := fuzzOptions(cuts)
		whole := transformtest.Run(New(opts), data)
		if err := transformtest.WellFormed(whole); err != nil {
			t.Fatal(err)
		}
		chunks := transformtest.CutsFromBytes(data, cuts)
		split := transformtest.Run(New(opts), chunks...)
		wn, wraw := transformtest.Normalize(whole)
		sn, sraw := transformtest.Normalize(split)
		if ok, diff := transformtest.Equal(wn, sn); !ok {
			t.Fatalf("split %q: %s", chunks, diff)
		}
		if !bytes.Equal(wraw, sraw) {
			t.Fatalf("split %q: raw differs:\n want %q\n  got %q", chunks, wraw, sraw)
		}
		if err := checkRaw(data, split); err != nil {
			t.Fatal(err)
		}
		if err := conservation(opts, chunks); err != nil {
			t.Fatal(err)
		}
	})
}
