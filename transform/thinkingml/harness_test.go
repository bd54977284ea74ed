package thinkingml

import (
	"bytes"
	"fmt"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// factory returns a constructor for transformtest.SplitInvariant.
func factory(opts transform.ParserOptions) func() transform.Parser {
	return func() transform.Parser { return New(opts) }
}

// expectedRaw is input with the documented escapes applied: every
// literal_final_tag violation marks a <final> or </final> at its offset
// that the raw channel writes as &lt;final&gt; or &lt;/final&gt;. Offsets
// come from the events, so an input that itself holds "&lt;final&gt;"
// stays intact.
func expectedRaw(input []byte, evs []transform.Event) ([]byte, error) {
	var out []byte
	last := 0
	for _, ev := range evs {
		if ev.Kind != transform.KindViolation || ev.Code != CodeLiteralFinalTag {
			continue
		}
		off := int(ev.Offset)
		var tag, esc string
		switch {
		case bytes.HasPrefix(input[off:], []byte("<final>")):
			tag, esc = "<final>", "&lt;final&gt;"
		case bytes.HasPrefix(input[off:], []byte("</final>")):
			tag, esc = "</final>", "&lt;/final&gt;"
		default:
			return nil, fmt.Errorf("literal_final_tag at %d, where the input holds %q", off, input[off:min(off+8, len(input))])
		}
		if off < last {
			return nil, fmt.Errorf("literal_final_tag offsets out of order at %d", off)
		}
		out = append(append(out, input[last:off]...), esc...)
		last = off + len(tag)
	}
	return append(out, input[last:]...), nil
}

// checkRaw checks that the raw channel of evs, a run over input, is the
// input with exactly the documented escapes, and that no raw event ends
// mid-rune unless the input itself does there.
func checkRaw(input []byte, evs []transform.Event) error {
	_, raw := transformtest.Normalize(evs)
	if isMarkerReply(input) {
		if len(raw) > 0 {
			return fmt.Errorf("raw text %q for a <<ParsingError>> reply", raw)
		}
		return nil
	}
	want, err := expectedRaw(input, evs)
	if err != nil {
		return err
	}
	if transformtest.Failed(evs) && len(raw) <= len(want) {
		want = want[:len(raw)] // input after a fatal error is ignored
	}
	if !bytes.Equal(raw, want) {
		return fmt.Errorf("raw text differs:\n want %q\n  got %q", want, raw)
	}
	return nil
}

// isMarkerReply reports whether input is a reply the parser must answer
// with model_parsing_error alone.
func isMarkerReply(input []byte) bool {
	i := skipSpace(input)
	if i > maxSpace || !bytes.HasPrefix(input[i:], []byte(marker)) {
		return false
	}
	rest := input[i+len(marker):]
	return skipSpace(rest) == len(rest) && len(rest) <= maxSpace
}
