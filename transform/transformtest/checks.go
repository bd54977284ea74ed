package transformtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
)

// WellFormed checks the structural promises every producer makes: start and
// end events pair up (phases and tool calls by Index), deltas occur only
// inside their open section, KindFinish or KindError comes at most once and
// last, and every section is closed by the end, also when a KindError ends
// the sequence: a producer closes what it opened before it reports a fatal
// error, so that clients never see a dangling part. The one exception is a
// tool call whose arguments were cut off by the error: it stays open, since
// ending it would present incomplete arguments as complete.
func WellFormed(evs []transform.Event) error {
	var reasoning, thinking, answer bool
	phase := -1
	tools := map[int]bool{}
	for i, ev := range evs {
		fail := func(msg string) error {
			return fmt.Errorf("event %d %s: %s (in %s)", i, Token(ev), msg, Format(evs))
		}
		if i > 0 && (evs[i-1].Kind == transform.KindError || evs[i-1].Kind == transform.KindFinish) {
			return fail("event after the terminal event")
		}
		switch ev.Kind {
		case transform.KindError:
			if reasoning || thinking || answer || phase >= 0 {
				return fail("error reported with sections still open")
			}
		case transform.KindReasoningStart:
			if reasoning {
				return fail("reasoning opened twice")
			}
			reasoning = true
		case transform.KindReasoningDelta:
			if !reasoning {
				return fail("reasoning delta outside reasoning")
			}
		case transform.KindReasoningEnd:
			if !reasoning {
				return fail("reasoning closed but not open")
			}
			reasoning = false
		case transform.KindThinkingStart:
			if thinking {
				return fail("thinking opened twice")
			}
			thinking = true
		case transform.KindThinkingEnd:
			if !thinking || phase >= 0 {
				return fail("thinking closed but not open, or with a phase open")
			}
			thinking = false
		case transform.KindPhaseStart:
			if phase >= 0 {
				return fail("phase opened inside a phase")
			}
			phase = ev.Index
		case transform.KindPhaseDelta, transform.KindPhaseEnd:
			if phase != ev.Index {
				return fail("phase event for a phase that is not open")
			}
			if ev.Kind == transform.KindPhaseEnd {
				phase = -1
			}
		case transform.KindAnswerStart:
			if answer {
				return fail("answer opened twice")
			}
			answer = true
		case transform.KindAnswerDelta:
			if !answer {
				return fail("answer delta outside the answer")
			}
		case transform.KindAnswerEnd:
			if !answer {
				return fail("answer closed but not open")
			}
			answer = false
		case transform.KindToolCallStart:
			if tools[ev.Index] {
				return fail("tool call opened twice")
			}
			tools[ev.Index] = true
		case transform.KindToolArgsDelta:
			if !tools[ev.Index] {
				return fail("tool args for a call that is not open")
			}
		case transform.KindToolCallEnd:
			if !tools[ev.Index] {
				return fail("tool call closed but not open")
			}
			delete(tools, ev.Index)
		}
	}
	if n := len(evs); n > 0 && evs[n-1].Kind == transform.KindError {
		return nil // sections were checked at the error; tool calls may stay open
	}
	if reasoning || thinking || answer || phase >= 0 || len(tools) > 0 {
		return fmt.Errorf("sections left open at the end: %s", Format(evs))
	}
	return nil
}

// CheckStream checks the promises every stream of a parser that echoes its
// input keeps: the events of evs, one run over input, are WellFormed, and
// their raw text is the input, or a prefix of it when a fatal KindError
// ends them (the parser ignores the input after one). The ThinkingML
// parser, whose raw text escapes literal <final> tags, is checked by its
// own tests instead.
func CheckStream(evs []transform.Event, input []byte) error {
	if err := WellFormed(evs); err != nil {
		return err
	}
	_, raw := Normalize(evs)
	if bytes.Equal(raw, input) || Failed(evs) && bytes.HasPrefix(input, raw) {
		return nil
	}
	return fmt.Errorf("raw text is not the input:\n input %q\n   raw %q", input, raw)
}

// WholeRunes checks that every delta of evs (the raw echo, and the text of
// every section and tool call) is whole UTF-8 characters when the parser
// was fed whole characters, as the upstream decoder feeds it: every
// protocol encodes each event's text on its own, so a character cut
// between two events reaches the client as two or three U+FFFD instead of
// itself (issue 9; parsekit.RuneCarry). Chunks that cut a character, or
// invalid UTF-8 (the encoders' to replace), are not checked.
func WholeRunes(evs []transform.Event, chunks ...[]byte) error {
	for _, c := range chunks {
		if !utf8.Valid(c) {
			return nil
		}
	}
	for i, ev := range evs {
		if ev.Kind.IsDelta() && !utf8.Valid(ev.Text) {
			return fmt.Errorf("event %d %s cuts a UTF-8 character (in %s)", i, Token(ev), Format(evs))
		}
	}
	return nil
}

// Failed reports whether a fatal KindError ends evs, after which a parser
// ignores its input.
func Failed(evs []transform.Event) bool {
	n := len(evs)
	return n > 0 && evs[n-1].Kind == transform.KindError
}

// SplitInvariant feeds input to parsers from newParser cut in every way
// Splits gives and reports the first split whose deltas are not WholeRunes
// or whose normal form (events and concatenated raw text) differs from the
// one-shot parse.
//
// A one-shot parse that ends in a fatal KindError is the exception for the
// raw text: a parser ignores the input after the error, and where a limit
// trips depends on how the text was cut, so each split's raw text need
// only be a prefix of the input. The events must still be equal.
func SplitInvariant(newParser func() transform.Parser, input []byte, seed int64, random int) error {
	evs := Run(newParser(), input)
	failed := Failed(evs)
	whole, wholeRaw := Normalize(evs)
	for _, chunks := range Splits(input, seed, random) {
		evs := Run(newParser(), chunks...)
		if err := WholeRunes(evs, chunks...); err != nil {
			return fmt.Errorf("split %s: %w", Describe(chunks), err)
		}
		got, raw := Normalize(evs)
		if ok, diff := Equal(whole, got); !ok {
			return fmt.Errorf("split %s: %s", Describe(chunks), diff)
		}
		switch {
		case failed && !bytes.HasPrefix(input, raw):
			return fmt.Errorf("split %s: raw text is not a prefix of the input after a fatal error:\n input %q\n   got %q", Describe(chunks), input, raw)
		case !failed && !bytes.Equal(raw, wholeRaw):
			return fmt.Errorf("split %s: raw text differs:\n want %q\n  got %q", Describe(chunks), wholeRaw, raw)
		}
	}
	return nil
}

// CheckCase is the table test of a parser that echoes its input: it feeds
// chunks to a parser from newParser, one Feed each, then Closes it, and
// checks the normalized events against want (in the notation of Format),
// the stream (CheckStream) and split invariance (SplitInvariant).
func CheckCase(t testing.TB, newParser func() transform.Parser, chunks []string, want string) {
	t.Helper()
	evs := RunStrings(newParser(), chunks...)
	norm, _ := Normalize(evs)
	if got := Format(norm); got != want {
		t.Errorf("events differ:\n want %s\n  got %s", want, got)
	}
	input := []byte(strings.Join(chunks, ""))
	if err := CheckStream(evs, input); err != nil {
		t.Error(err)
	}
	if err := WholeRunes(evs, input); err != nil {
		t.Error(err)
	}
	if err := SplitInvariant(newParser, input, 1, 50); err != nil {
		t.Error(err)
	}
}

// CheckCuts is the check a parser's fuzz target makes: it parses input
// whole and cut where cuts says (CutsFromBytes) with parsers from
// newParser, checks both runs with CheckStream and their normalized events
// for equality, and returns the whole run for the target's own checks.
func CheckCuts(newParser func() transform.Parser, input, cuts []byte) ([]transform.Event, error) {
	whole := Run(newParser(), input)
	chunks := CutsFromBytes(input, cuts)
	split := Run(newParser(), chunks...)
	for _, evs := range [][]transform.Event{whole, split} {
		if err := CheckStream(evs, input); err != nil {
			return whole, err
		}
	}
	if err := WholeRunes(whole, input); err != nil {
		return whole, err
	}
	if err := WholeRunes(split, chunks...); err != nil {
		return whole, fmt.Errorf("split %s: %w", Describe(chunks), err)
	}
	wn, _ := Normalize(whole)
	sn, _ := Normalize(split)
	if ok, diff := Equal(wn, sn); !ok {
		return whole, fmt.Errorf("split %s: %s", Describe(chunks), diff)
	}
	return whole, nil
}

// SeedFiles adds each file matching pattern to a fuzz target's corpus, as
// the input beside cuts (the CutsFromBytes argument).
func SeedFiles(f *testing.F, pattern string, cuts []byte) {
	files, _ := filepath.Glob(pattern)
	for _, name := range files {
		if b, err := os.ReadFile(name); err == nil {
			f.Add(b, cuts)
		}
	}
}

// FuzzCuts runs the fuzz target every JSON-format parser shares: seeded
// with inputs and the files matching pattern, it cuts each input where the
// fuzzer says and checks it with CheckCuts, under default limits or (one
// input in four, chosen by the cuts) the tight ones, which reach the fatal
// paths. check, if set, asserts more of the one-shot events.
func FuzzCuts(f *testing.F, inputs []string, pattern string, tight transform.ParserOptions,
	newParser func(transform.ParserOptions) transform.Parser, check func(t *testing.T, whole []transform.Event)) {
	for _, in := range inputs {
		f.Add([]byte(in), []byte{3, 17, 1})
	}
	SeedFiles(f, pattern, []byte{40, 2, 250, 9})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		opts := transform.ParserOptions{}
		if len(cuts) > 0 && cuts[0]%4 == 0 {
			opts = tight
		}
		whole, err := CheckCuts(func() transform.Parser { return newParser(opts) }, data, cuts)
		if err != nil {
			t.Fatal(err)
		}
		if check != nil {
			check(t, whole)
		}
	})
}

// Answer returns the answer text of evs.
func Answer(evs []transform.Event) []byte {
	var out []byte
	for _, ev := range evs {
		if ev.Kind == transform.KindAnswerDelta {
			out = append(out, ev.Text...)
		}
	}
	return out
}

// ProseAnswer returns, for a reply of a JSON format (aiplan, final_result)
// that holds no '{' and so no object, the answer the format must give:
// the reply itself, without a leading byte order mark and blanks
// (CONTRACT.md §7: nothing the model wrote vanishes, fences and tags
// included). ok is false for a reply that holds a '{'.
func ProseAnswer(reply []byte) (answer []byte, ok bool) {
	if bytes.IndexByte(reply, '{') >= 0 {
		return nil, false
	}
	reply = bytes.TrimPrefix(reply, []byte("\xef\xbb\xbf"))
	return bytes.TrimLeft(reply, " \t\r\n"), true
}
