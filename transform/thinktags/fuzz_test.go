package thinktags

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/thinkingml"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// fuzzConfig derives the stage's setting from the fuzzer's first cut byte:
// the mode, the format behind it (text, auto, or thinkingml, which owns
// <think>) and a tight copy bound.
type fuzzConfig struct {
	mode   transform.ThinkTags
	inner  int // 0 text, 1 auto, 2 thinkingml
	limits transform.Limits
}

func configFrom(cuts []byte) fuzzConfig {
	var c fuzzConfig
	if len(cuts) == 0 {
		return c
	}
	if cuts[0]&1 != 0 {
		c.mode = transform.ThinkTagsPrefilled
	}
	c.inner = int(cuts[0]>>1) % 3
	if cuts[0]&8 != 0 {
		c.limits.MaxBlockBytes = 16
	}
	return c
}

func (c fuzzConfig) newParser() transform.Parser {
	opts := transform.ParserOptions{Limits: c.limits}
	switch c.inner {
	case 1:
		return New(format.NewAuto(opts), c.mode, false, c.limits)
	case 2:
		return New(thinkingml.New(opts), c.mode, true, c.limits)
	}
	return New(format.NewText(), c.mode, false, c.limits)
}

// FuzzThinkTags checks the stage's promises on any content and any split:
// no panic, well-formed events, the split gives the one-shot events and raw
// text, the raw text is the content (but for thinkingml, whose raw text
// escapes literal <final> tags), and, in front of the text format, nothing
// is lost: the content without blanks is at most one leading tag, the
// reasoning, at most one </think> and the answer; an unclosed reasoning is
// repeated as the answer, whole up to the bound.
func FuzzThinkTags(f *testing.F) {
	seeds := []string{
		"<think>a</think>\n\nThe answer.", "reasoning here</think>\n\nThe answer.", "<think>\n\n</think>\n\nHi",
		"</think>x", "<think>abc", "<thi", "a</th", "<think>a < b </thinker></think>{\"status\":\"answer_ready\"}",
		"<think>r</think><final>a</final>", "\n <think>é中</think>ü", "<<think>x</think>",
	}
	for i, s := range seeds {
		f.Add([]byte(s), []byte{byte(i), 3, 1, 1})
	}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		c := configFrom(cuts)
		p := c.newParser()
		whole := transformtest.Run(p, data)
		split := transformtest.Run(c.newParser(), transformtest.CutsFromBytes(data, cuts)...)
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
		if !bytes.Equal(wraw, sraw) {
			t.Fatalf("raw text differs:\n want %q\n  got %q", wraw, sraw)
		}
		if !ownsRaw(p) && !transformtest.Failed(whole) && !bytes.Equal(wraw, data) {
			t.Fatalf("raw text is not the content:\n  got %q", wraw)
		}
		if c.inner == 0 {
			if err := conserved(data, wn, c.limits.WithDefaults().MaxBlockBytes); err != nil {
				t.Fatal(err)
			}
		}
	})
}

// ownsRaw reports whether p ended up feeding thinkingml, whose raw text
// escapes literal <final> tags (its own tests check it).
func ownsRaw(p transform.Parser) bool {
	switch in := p.(*Parser).Inner().(type) {
	case *thinkingml.Parser:
		return true
	case *format.AutoParser:
		return in.Detected() == format.ThinkingML
	}
	return false
}

// conserved checks that the content in front of the text format is the
// reasoning and the answer, with only tags and blanks taken out.
func conserved(data []byte, norm []transform.Event, bound int) error {
	var reasoning, answer []byte
	unclosed := false
	for _, ev := range norm {
		switch ev.Kind {
		case transform.KindReasoningDelta:
			reasoning = append(reasoning, ev.Text...)
		case transform.KindAnswerDelta:
			answer = append(answer, ev.Text...)
		case transform.KindViolation:
			unclosed = unclosed || ev.Code == CodeThinkUnclosed
		}
	}
	in, r, a := noBlanks(data), noBlanks(reasoning), noBlanks(answer)
	if unclosed {
		// The answer repeats the reasoning, whole or cut at the bound.
		if !bytes.HasPrefix(reasoning, answer) || len(answer) < len(reasoning) && len(answer) < bound-3 {
			return fmt.Errorf("unclosed: answer %q is not the reasoning %q", answer, reasoning)
		}
		a = nil
	}
	for _, lead := range []string{"", openTag, closeTag} {
		rest, ok := bytes.CutPrefix(in, []byte(lead))
		if !ok {
			continue
		}
		if rest, ok = bytes.CutPrefix(rest, r); !ok {
			continue
		}
		for _, mid := range []string{"", closeTag} {
			if tail, ok := bytes.CutPrefix(rest, []byte(mid)); ok && bytes.Equal(tail, a) {
				return nil
			}
		}
	}
	return fmt.Errorf("content %q is not a tag, reasoning %q, a tag, answer %q", data, reasoning, answer)
}

func noBlanks(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for _, c := range b {
		if !isBlank(c) {
			out = append(out, c)
		}
	}
	return out
}
