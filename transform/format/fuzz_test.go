package format

import (
	"bytes"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzAuto checks, for any reply and any split of it (the first cut byte
// also picks a tight block limit and text_tools hermes): no panic, well-formed events, the same
// format detected and the same normalized events and raw text as the
// one-shot parse, those of the detected format's own parser, and, but for
// thinkingml, whose raw text escapes literal <final> tags, the raw text
// equal to the input (a prefix after a fatal error).
func FuzzAuto(f *testing.F) {
	for _, tc := range autoCases {
		f.Add([]byte(strings.Join(tc.chunks, "")), []byte{1, 3, 17})
	}
	f.Add([]byte("<tool_call>{\"name\":\"f\"}</tool_call>"), []byte{8, 3, 17})
	for _, tc := range textCases {
		f.Add([]byte(strings.Join(tc.chunks, "")), []byte{0, 2, 5})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		opts := transform.ParserOptions{}
		if len(cuts) > 0 && cuts[0]%4 == 0 {
			opts = tight
		}
		if len(cuts) > 0 && cuts[0]&8 != 0 {
			opts.TextTools = "hermes" // a leading <tool_call> is text
		}
		a, b := NewAuto(opts), NewAuto(opts)
		whole := transformtest.Run(a, data)
		split := transformtest.Run(b, transformtest.CutsFromBytes(data, cuts)...)
		if a.Detected() != b.Detected() {
			t.Fatalf("detected %q one-shot, %q split", a.Detected(), b.Detected())
		}
		for _, evs := range [][]transform.Event{whole, split} {
			if err := transformtest.WellFormed(evs); err != nil {
				t.Fatal(err)
			}
			if a.Detected() != ThinkingML {
				if err := transformtest.CheckStream(evs, data); err != nil {
					t.Fatal(err)
				}
			}
		}
		wn, wraw := transformtest.Normalize(whole)
		sn, sraw := transformtest.Normalize(split)
		if ok, diff := transformtest.Equal(wn, sn); !ok {
			t.Fatal(diff)
		}
		if !transformtest.Failed(whole) && !bytes.Equal(wraw, sraw) {
			t.Fatalf("raw text differs:\n want %q\n  got %q", wraw, sraw)
		}
		if err := sameAsDirect(opts, a.Detected(), data, whole); err != nil {
			t.Fatal(err)
		}
	})
}
