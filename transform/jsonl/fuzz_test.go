package jsonl

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzJSONL checks, for any reply and any split of it: no panic,
// well-formed events, the same normalized events as the one-shot parse,
// and the raw text equal to the input (a prefix of it after a fatal
// error, past which a parser ignores its input).
func FuzzJSONL(f *testing.F) {
	for _, tc := range cases {
		f.Add([]byte(strings.Join(tc.chunks, "")), []byte{3, 17, 1})
	}
	files, _ := filepath.Glob("testdata/*.jsonl")
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b, []byte{40, 2, 250, 9})
		}
	}
	small := transform.ParserOptions{Limits: transform.Limits{MaxBlockBytes: 64, MaxDepth: 8, MaxKeyBytes: 16}}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		opts := transform.ParserOptions{}
		if len(cuts) > 0 && cuts[0]%4 == 0 {
			opts = small
		}
		whole := transformtest.Run(New(opts), data)
		split := transformtest.Run(New(opts), transformtest.CutsFromBytes(data, cuts)...)
		for _, evs := range [][]transform.Event{whole, split} {
			if err := transformtest.WellFormed(evs); err != nil {
				t.Fatal(err)
			}
		}
		wn, wraw := transformtest.Normalize(whole)
		sn, sraw := transformtest.Normalize(split)
		if ok, diff := transformtest.Equal(wn, sn); !ok {
			t.Fatal(diff)
		}
		failed := len(whole) > 0 && whole[len(whole)-1].Kind == transform.KindError
		for _, raw := range [][]byte{wraw, sraw} {
			if !bytes.Equal(raw, data) && !(failed && bytes.HasPrefix(data, raw)) {
				t.Fatalf("raw text %q, input %q", raw, data)
			}
		}
	})
}
