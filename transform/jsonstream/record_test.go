package jsonstream

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// tok is a copied Token.
type tok struct {
	Kind   TokenKind
	Path   int
	Index  int
	Type   Type
	Text   []byte
	Code   string
	Offset int64
}

// recorder is a Handler that keeps copies of every token.
type recorder struct{ toks []tok }

func (r *recorder) HandleToken(tk *Token) {
	r.toks = append(r.toks, tok{tk.Kind, tk.Path, tk.Index, tk.Type, append([]byte(nil), tk.Text...), tk.Code, tk.Offset})
}

// run feeds chunks to a fresh Tokenizer and closes it. consumed is the sum
// of what each Feed reported.
func run(c Config, chunks ...[]byte) (toks []tok, consumed int) {
	var t Tokenizer
	t.Init(c)
	r := &recorder{}
	for _, ch := range chunks {
		consumed += t.Feed(ch, r)
	}
	t.Close(r)
	return r.toks, consumed
}

func runStrings(c Config, chunks ...string) []tok {
	bs := make([][]byte, len(chunks))
	for i, s := range chunks {
		bs[i] = []byte(s)
	}
	toks, _ := run(c, bs...)
	return toks
}

// normalize merges adjacent deltas of the same kind, path and index, the
// split-invariant normal form.
func normalize(toks []tok) []tok {
	var out []tok
	for _, tk := range toks {
		delta := tk.Kind == TokenText || tk.Kind == TokenRaw || tk.Kind == TokenProse
		if delta && len(tk.Text) == 0 {
			continue
		}
		if n := len(out); delta && n > 0 && out[n-1].Kind == tk.Kind && out[n-1].Path == tk.Path && out[n-1].Index == tk.Index {
			out[n-1].Text = append(out[n-1].Text, tk.Text...)
			continue
		}
		tk.Text = append([]byte(nil), tk.Text...)
		out = append(out, tk)
	}
	return out
}

// format writes tokens in the notation of PARSING.md §4.2: J{p start,
// J"p":"…" text, JR"p":"…" raw, J}p end (J}p=v with a scalar), W(code@off)
// violation, X(code@off) invalid, E(code) limit, T"…" prose. A path's [*] is
// written as the element index: tool_calls.0.name.
func format(ws []Watch, toks []tok) string {
	name := func(tk tok) string {
		if tk.Path < 0 || tk.Path >= len(ws) {
			return "?"
		}
		p := ws[tk.Path].Path
		if tk.Index >= 0 {
			p = strings.Replace(p, "[*]", "."+strconv.Itoa(tk.Index), 1)
		}
		return p
	}
	var b strings.Builder
	for i, tk := range toks {
		if i > 0 {
			b.WriteByte(' ')
		}
		switch tk.Kind {
		case TokenStart:
			b.WriteString("J{" + name(tk))
		case TokenText:
			fmt.Fprintf(&b, "J%q:%q", name(tk), tk.Text)
		case TokenRaw:
			fmt.Fprintf(&b, "JR%q:%q", name(tk), tk.Text)
		case TokenEnd:
			b.WriteString("J}" + name(tk))
			if tk.Text != nil {
				b.WriteString("=" + string(tk.Text))
			}
		case TokenViolation:
			fmt.Fprintf(&b, "W(%s@%d)", tk.Code, tk.Offset)
		case TokenInvalid:
			fmt.Fprintf(&b, "X(%s@%d)", tk.Code, tk.Offset)
		case TokenLimit:
			fmt.Fprintf(&b, "E(%s)", tk.Code)
		case TokenProse:
			fmt.Fprintf(&b, "T%q", tk.Text)
		}
	}
	return b.String()
}

// splitInvariant checks that every split transformtest.Splits gives yields
// the one-shot parse's normal form, and, in DocBare mode, the same number
// of consumed bytes.
func splitInvariant(c Config, ws []Watch, input []byte, seed int64, random int) error {
	wholeToks, wholeN := run(c, input)
	whole := format(ws, normalize(wholeToks))
	for _, chunks := range transformtest.Splits(input, seed, random) {
		toks, n := run(c, chunks...)
		if err := wholeRunes(toks, chunks); err != nil {
			return fmt.Errorf("split %s: %w", transformtest.Describe(chunks), err)
		}
		if got := format(ws, normalize(toks)); got != whole {
			return fmt.Errorf("split %s:\n want %s\n  got %s", transformtest.Describe(chunks), whole, got)
		}
		if n != wholeN {
			return fmt.Errorf("split %s: consumed %d bytes, one-shot %d", transformtest.Describe(chunks), n, wholeN)
		}
	}
	return nil
}

// wholeRunes checks that, when the chunks are whole UTF-8 characters, so
// is every delta token: a format emits each as an event of its own, and
// a character cut between two reaches the client as U+FFFD twice.
func wholeRunes(toks []tok, chunks [][]byte) error {
	for _, c := range chunks {
		if !utf8.Valid(c) {
			return nil
		}
	}
	for _, tk := range toks {
		delta := tk.Kind == TokenText || tk.Kind == TokenRaw || tk.Kind == TokenProse
		if delta && !utf8.Valid(tk.Text) {
			return fmt.Errorf("%s token %q cuts a character", tk.Kind, tk.Text)
		}
	}
	return nil
}

// limits returns the default limits with overrides, for the cases that
// test a limit.
func limits(f func(*transform.Limits)) transform.Limits {
	l := transform.Limits{}.WithDefaults()
	if f != nil {
		f(&l)
	}
	return l
}
