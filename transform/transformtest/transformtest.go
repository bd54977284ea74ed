// Package transformtest holds what the parser tests share: feeding a parser
// a split input, the split-invariant normal form of an event sequence, a
// compact notation for events (PARSING.md §4), and the well-formedness
// check every fuzz target asserts.
package transformtest

import (
	"bytes"
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

// Format writes evs in the compact notation of PARSING.md §4, one token per
// event separated by spaces, KindRaw left out:
//
//	R{ R"…" R}            reasoning          S"…"              serp summary
//	TH{ TH}               thinking           P{1 "title"} P1"…" P1}   phase
//	F{ F"…" F}            answer             Q["a","b"]        serp queries
//	TC{0 id name} TA0"…" TC}0 {args}         tool call
//	C{"q" ["a"] "hint"}   clarify            A[…]              artifacts
//	ROUTED(model,id)  U{…}  V(code@offset)  FIN(reason)  E(code)
func Format(evs []transform.Event) string {
	var b strings.Builder
	for _, ev := range evs {
		if ev.Kind == transform.KindRaw {
			continue
		}
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(Token(ev))
	}
	return b.String()
}

// Token is the notation of one event (see Format).
func Token(ev transform.Event) string {
	q := func(p []byte) string { return strconv.Quote(string(p)) }
	switch ev.Kind {
	case transform.KindRaw:
		return "RAW" + q(ev.Text)
	case transform.KindReasoningStart:
		return "R{"
	case transform.KindReasoningDelta:
		return "R" + q(ev.Text)
	case transform.KindReasoningEnd:
		return "R}"
	case transform.KindSerpSummary:
		return "S" + q(ev.Text)
	case transform.KindThinkingStart:
		return "TH{"
	case transform.KindThinkingEnd:
		return "TH}"
	case transform.KindPhaseStart:
		return fmt.Sprintf("P{%d %s}", ev.Index, q(ev.Text))
	case transform.KindPhaseDelta:
		return fmt.Sprintf("P%d%s", ev.Index, q(ev.Text))
	case transform.KindPhaseEnd:
		return fmt.Sprintf("P%d}", ev.Index)
	case transform.KindAnswerStart:
		return "F{"
	case transform.KindAnswerDelta:
		return "F" + q(ev.Text)
	case transform.KindAnswerEnd:
		return "F}"
	case transform.KindSerpQueries:
		qs := make([]string, len(ev.List))
		for i, s := range ev.List {
			qs[i] = strconv.Quote(s)
		}
		return "Q[" + strings.Join(qs, ",") + "]"
	case transform.KindToolCallStart:
		return fmt.Sprintf("TC{%d %s %s}", ev.Index, ev.ID, ev.Name)
	case transform.KindToolArgsDelta:
		return fmt.Sprintf("TA%d%s", ev.Index, q(ev.Text))
	case transform.KindToolCallEnd:
		return fmt.Sprintf("TC}%d %s", ev.Index, ev.Text)
	case transform.KindClarify:
		if ev.Clarify == nil {
			return "C{nil}"
		}
		qs := make([]string, len(ev.Clarify.Options))
		for i, s := range ev.Clarify.Options {
			qs[i] = strconv.Quote(s)
		}
		return fmt.Sprintf("C{%q [%s] %q}", ev.Clarify.Question, strings.Join(qs, ","), ev.Clarify.Hint)
	case transform.KindArtifacts:
		return "A" + string(ev.Text)
	case transform.KindRouted:
		return fmt.Sprintf("ROUTED(%s,%s)", ev.Name, ev.ID)
	case transform.KindUsage:
		return "U" + string(ev.Text)
	case transform.KindViolation:
		return fmt.Sprintf("V(%s@%d)", ev.Code, ev.Offset)
	case transform.KindFinish:
		return "FIN(" + ev.Code + ")"
	case transform.KindError:
		return "E(" + ev.Code + ")"
	}
	return ev.Kind.String()
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

// SplitInvariant feeds input to parsers from newParser cut in every way
// Splits gives and reports the first split whose normal form (events and
// concatenated raw text) differs from the one-shot parse.
func SplitInvariant(newParser func() transform.Parser, input []byte, seed int64, random int) error {
	whole, wholeRaw := Normalize(Run(newParser(), input))
	for _, chunks := range Splits(input, seed, random) {
		got, raw := Normalize(Run(newParser(), chunks...))
		if ok, diff := Equal(whole, got); !ok {
			return fmt.Errorf("split %s: %s", describe(chunks), diff)
		}
		if !bytes.Equal(raw, wholeRaw) {
			return fmt.Errorf("split %s: raw text differs:\n want %q\n  got %q", describe(chunks), wholeRaw, raw)
		}
	}
	return nil
}

func describe(chunks [][]byte) string {
	if len(chunks) > 8 {
		return fmt.Sprintf("(%d chunks)", len(chunks))
	}
	qs := make([]string, len(chunks))
	for i, c := range chunks {
		qs[i] = strconv.Quote(string(c))
	}
	return strings.Join(qs, "|")
}

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
