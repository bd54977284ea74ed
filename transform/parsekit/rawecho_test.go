package parsekit_test

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/parsekit"
)

func TestRawEcho(t *testing.T) {
	tests := []struct {
		name   string
		chunks []string
		want   []string // the transform.KindRaw texts, Close's included
		held   []int    // Held after each Feed
	}{
		{"ascii", []string{"ab", "", "c"}, []string{"ab", "c"}, []int{0, 0, 0}},
		{"whole_runes", []string{"你好", "é"}, []string{"你好", "é"}, []int{0, 0}},
		{"cut_rune", []string{"a\xe4", "\xbd\xa0b"}, []string{"a", "你", "b"}, []int{1, 0}},
		{"rune_over_three_chunks", []string{"\xf0\x9f", "\x98", "\x80!"}, []string{"😀", "!"}, []int{2, 3, 0}},
		{"rune_completes_chunk", []string{"\xe4", "\xbd\xa0"}, []string{"你"}, []int{1, 0}},
		{"rune_then_cut_rune", []string{"\xe4", "\xbd\xa0\xe5\xa5"}, []string{"你", "\xe5\xa5"}, []int{1, 2}},
		// A sequence broken by a byte that is not a continuation byte is
		// emitted as it is, and the byte starts the next text.
		{"broken_sequence", []string{"\xe4", "x"}, []string{"\xe4", "x"}, []int{1, 0}},
		{"stray_continuation", []string{"\xbdx"}, []string{"\xbdx"}, []int{0}},
		// The reply ends mid-rune: Close delivers the cut bytes.
		{"cut_at_end", []string{"ab\xe4\xbd"}, []string{"ab", "\xe4\xbd"}, []int{2}},
		{"empty", nil, nil, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var r parsekit.RawEcho
			var got []string
			emit := func(ev transform.Event) {
				if ev.Kind != transform.KindRaw || len(ev.Text) == 0 {
					t.Errorf("emitted %s %q, want non-empty raw", ev.Kind, ev.Text)
				}
				got = append(got, string(ev.Text))
			}
			for i, c := range tt.chunks {
				r.Feed([]byte(c), emit)
				if h := r.Held(); h != tt.held[i] {
					t.Errorf("after chunk %d: Held() = %d, want %d", i, h, tt.held[i])
				}
			}
			r.Close(emit)
			if r.Held() != 0 {
				t.Errorf("Held() = %d after Close", r.Held())
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("raw events %q, want %q", got, tt.want)
			}
			if strings.Join(got, "") != strings.Join(tt.chunks, "") {
				t.Errorf("raw text %q, input %q", strings.Join(got, ""), strings.Join(tt.chunks, ""))
			}
		})
	}
}

// TestRawEchoSplits feeds valid UTF-8 cut at every byte and checks that
// the raw text is the input and that no event cuts a rune.
func TestRawEchoSplits(t *testing.T) {
	input := []byte("a你😀é\u2028b")
	for i := 0; i <= len(input); i++ {
		for j := i; j <= len(input); j++ {
			var r parsekit.RawEcho
			var raw []byte
			emit := func(ev transform.Event) {
				if !utf8.Valid(ev.Text) {
					t.Errorf("cuts %d,%d: event %q cuts a rune", i, j, ev.Text)
				}
				raw = append(raw, ev.Text...)
			}
			r.Feed(input[:i], emit)
			r.Feed(input[i:j], emit)
			r.Feed(input[j:], emit)
			r.Close(emit)
			if string(raw) != string(input) {
				t.Errorf("cuts %d,%d: raw text %q", i, j, raw)
			}
		}
	}
}

func TestRawEchoReset(t *testing.T) {
	var r parsekit.RawEcho
	r.Feed([]byte("\xe4\xbd"), func(transform.Event) {})
	r.Reset()
	var got []string
	emit := func(ev transform.Event) { got = append(got, string(ev.Text)) }
	r.Feed([]byte("x"), emit)
	r.Close(emit)
	if strings.Join(got, "|") != "x" {
		t.Errorf("after Reset: %q, want only x", got)
	}
}

func TestRawEchoAllocs(t *testing.T) {
	var chunks [][]byte
	for i, s := 0, []byte(strings.Repeat("训练计划 ok ", 50)); i < len(s); i += 7 {
		chunks = append(chunks, s[i:min(i+7, len(s))])
	}
	var r parsekit.RawEcho
	var n int
	emit := func(ev transform.Event) { n += len(ev.Text) }
	allocs := testing.AllocsPerRun(10, func() {
		r.Reset()
		for _, c := range chunks {
			r.Feed(c, emit)
		}
		r.Close(emit)
	})
	if allocs != 0 {
		t.Errorf("%v allocations per reply of %d chunks, want 0", allocs, len(chunks))
	}
}

// FuzzRawEcho checks, for any bytes cut anywhere (cuts chooses the cut
// points), that the raw text is the input, that no event is empty, and
// that an event ends inside a UTF-8 sequence only where the input does: at
// its end, or where the next byte breaks the sequence.
func FuzzRawEcho(f *testing.F) {
	f.Add([]byte("a你😀\xe4\xbdb\xff"), []byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		var r parsekit.RawEcho
		var raw []byte
		emit := func(ev transform.Event) {
			if len(ev.Text) == 0 {
				t.Fatal("empty raw event")
			}
			raw = append(raw, ev.Text...)
			end := len(raw)
			if end > len(data) {
				return // reported below
			}
			if parsekit.IncompleteSuffix(data[:end]) > 0 && end < len(data) && data[end]&0xC0 == 0x80 {
				t.Fatalf("an event ends at %d, inside a UTF-8 sequence of %q", end, data)
			}
		}
		rest := data
		for _, c := range cuts {
			k := int(c) % (len(rest) + 1)
			r.Feed(rest[:k], emit)
			rest = rest[k:]
		}
		r.Feed(rest, emit)
		if held := r.Held(); held != parsekit.IncompleteSuffix(data) {
			t.Fatalf("Held() = %d at the end of %q", held, data)
		}
		r.Close(emit)
		if string(raw) != string(data) {
			t.Fatalf("raw text %q, input %q", raw, data)
		}
	})
}
