package upstream

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// deltasFromBytes turns fuzz input into tool call deltas. Each delta takes
// two bytes, then up to 7 bytes of arguments: the first chooses the index
// (none, 0, 1 or 2), the id (none, a, b, c), the name (none, f, g, f) and,
// for a delta without index, whether it is lone or positional at 0, 1 or
// 2; the second the length of the arguments.
func deltasFromBytes(p []byte) []ToolCallDelta {
	ids := []string{"", "a", "b", "c"}
	names := []string{"", "f", "g", "f"}
	var ds []ToolCallDelta
	for len(p) >= 2 {
		sel, n := p[0], int(p[1]%8)
		p = p[2:]
		n = min(n, len(p))
		d := td(int(sel&3)-1, ids[sel>>2&3], names[sel>>4&3], string(p[:n]))
		if pos := int(sel >> 6); pos > 0 && !d.HasIndex {
			d.Positional, d.Position = true, pos-1
		}
		ds = append(ds, d)
		p = p[n:]
	}
	return ds
}

// FuzzToolCallAssembly checks the assembler on any sequence of deltas: no
// panic, well-formed events, the arguments at KindToolCallEnd equal to the
// concatenation of the call's KindToolArgsDelta texts (or "{}"), calls
// started in Index order, no two calls with one id (issue 9: every
// protocol keys calls by id), the index keying the call (PARSING.md §5.7:
// the arguments of fragments with an index never go to a call that
// fragments of another index fed), and, for plain deltas, every argument
// byte fed delivered exactly once. It then checks the Moonshot shape
// (CONTRACT.md §7) on calls built from the same bytes: a chunk naming k
// calls without index, then chunks of k fragments with neither index nor
// id; each call must end with the fragments at its position, in order.
func FuzzToolCallAssembly(f *testing.F) {
	f.Add([]byte("\x15\x03{\"a\x01\x02:1\x00\x01}"), false)
	f.Add([]byte("\x00\x04{\"q\"\x15\x02:1\x26\x02{}\x05\x01}"), false)
	f.Add([]byte("\x15\x04{\"co\x15\x06{\"coun\x01\x07{\"count"), true)
	f.Add([]byte("\x19\x00\x1d\x00\x21\x00\x25\x00\x15\x00"), false)
	f.Add([]byte("\x54\x00\x98\x00\x40\x03{\"x\x80\x03{\"y\x40\x02:1\x80\x02:2\x00\x01}"), false)
	f.Fuzz(func(t *testing.T, p []byte, cumulative bool) {
		deltas := deltasFromBytes(p)
		tc := ToolCalls{MaxCalls: 4, Cumulative: cumulative}
		evs, err := assemble(&tc, true, deltas...)
		if err != nil {
			if !errors.Is(err, ErrTooManyToolCalls) && !errors.Is(err, ErrNotCumulative) {
				t.Fatalf("unexpected error %v", err)
			}
			evs = append(evs, transform.Event{Kind: transform.KindError, Code: transform.CodeUpstreamError})
		}
		if werr := transformtest.WellFormed(evs); werr != nil {
			t.Fatal(werr)
		}
		args := map[int][]byte{}
		delivered, next := 0, 0
		for _, ev := range evs {
			switch ev.Kind {
			case transform.KindToolCallStart:
				if ev.Index != next {
					t.Fatalf("call started with Index %d, want %d: %s", ev.Index, next, transformtest.Format(evs))
				}
				next++
			case transform.KindToolArgsDelta:
				if len(ev.Text) == 0 {
					t.Fatalf("empty arguments delta: %s", transformtest.Format(evs))
				}
				args[ev.Index] = append(args[ev.Index], ev.Text...)
				delivered += len(ev.Text)
			case transform.KindToolCallEnd:
				want := args[ev.Index]
				if len(want) == 0 {
					want = []byte("{}")
				}
				if !bytes.Equal(ev.Text, want) {
					t.Fatalf("call %d ended with %q, its deltas say %q", ev.Index, ev.Text, want)
				}
			}
		}
		if err == nil && !cumulative {
			fed := 0
			for _, d := range deltas {
				fed += len(d.Arguments)
			}
			if fed != delivered {
				t.Fatalf("%d argument bytes fed, %d delivered: %s", fed, delivered, transformtest.Format(evs))
			}
		}
		checkIDs(t, evs)
		checkIndexKeys(t, deltas)
		checkPositional(t, p)
	})
}

// checkIDs checks that no two calls start with one id.
func checkIDs(t *testing.T, evs []transform.Event) {
	t.Helper()
	seen := map[string]bool{}
	for _, ev := range evs {
		if ev.Kind != transform.KindToolCallStart || ev.ID == "" {
			continue
		}
		if seen[ev.ID] {
			t.Fatalf("two calls with id %q: %s", ev.ID, transformtest.Format(evs))
		}
		seen[ev.ID] = true
	}
}

// checkIndexKeys feeds deltas one at a time and checks that the arguments
// a fragment with an index delivers go to calls that only fragments of
// that index fed.
func checkIndexKeys(t *testing.T, deltas []ToolCallDelta) {
	t.Helper()
	tc := ToolCalls{MaxCalls: 4}
	owner := map[int]int{} // event Index → the provider index that fed it
	for _, d := range deltas {
		var evs []transform.Event
		if err := tc.Add(d, func(ev transform.Event) { evs = append(evs, ev.Clone()) }); err != nil {
			return
		}
		if !d.HasIndex {
			continue
		}
		for _, ev := range evs {
			if ev.Kind != transform.KindToolArgsDelta {
				continue
			}
			if k, ok := owner[ev.Index]; ok && k != d.Index {
				t.Fatalf("arguments at index %d went to call %d, which index %d fed", d.Index, ev.Index, k)
			}
			owner[ev.Index] = d.Index
		}
	}
}

// checkPositional assembles calls the way Moonshot streams parallel calls:
// the first byte of p gives the number of calls k (1 to 3), the first
// chunk names them (by lone fragments with ids when the second byte is
// odd, else in one positional batch), and the rest of p is cut into
// fragments dealt to positions 0, 1, … k-1 in turn, k per chunk.
func checkPositional(t *testing.T, p []byte) {
	if len(p) < 2 {
		return
	}
	k, lone := 1+int(p[0]%3), p[1]%2 == 1
	names := []string{"f", "g", "h"}
	var deltas []ToolCallDelta
	for i := range k {
		id := string(rune('a' + i))
		if lone {
			deltas = append(deltas, td(-1, id, names[i], ""))
		} else {
			deltas = append(deltas, tp(i, id, names[i], ""))
		}
	}
	want := make([][]byte, k)
	rest := p[2:]
	for i := 0; len(rest) > 0; i++ {
		n := min(1+int(rest[0]%5), len(rest))
		frag := rest[:n]
		rest = rest[n:]
		pos := i % k
		if k == 1 {
			deltas = append(deltas, td(-1, "", "", string(frag)))
		} else {
			deltas = append(deltas, tp(pos, "", "", string(frag)))
		}
		want[pos] = append(want[pos], frag...)
	}
	var tc ToolCalls
	evs, err := assemble(&tc, true, deltas...)
	if err != nil {
		t.Fatal(err)
	}
	ends := 0
	for _, ev := range evs {
		if ev.Kind != transform.KindToolCallEnd {
			continue
		}
		ends++
		w := want[ev.Index]
		if len(w) == 0 {
			w = []byte("{}")
		}
		if ev.Name != names[ev.Index] || !bytes.Equal(ev.Text, w) {
			t.Fatalf("call %d ended as %s(%q), want %s(%q): %s", ev.Index, ev.Name, ev.Text, names[ev.Index], w, transformtest.Format(evs))
		}
	}
	if ends != k {
		t.Fatalf("%d calls ended, want %d: %s", ends, k, transformtest.Format(evs))
	}
}

// FuzzChunkDecoder checks the decoder on any data: no panic, every valid
// JSON object accepted, and, for valid UTF-8 JSON without duplicate keys,
// the same content, reasoning, finish reason, usage, stray choice and
// number of violations as referenceDecode, which follows the same rules
// with encoding/json (differential test, PARSING.md §5.11). Half the runs
// decode data as a non-streamed completion.
func FuzzChunkDecoder(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		for _, line := range bytes.Split(body, []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				f.Add(data, false)
			}
		}
	}
	f.Add([]byte(chunkJSON(`{"content":"a\ud83d\ude00\ud800x\u00e9\\","reasoning_content":"","reasoning":"r"}`)), false)
	f.Add([]byte(chunkJSON(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"r"},{"type":"reference"}]},{"text":"c"},7,["x"],{"type":"x","text":"y"}],"refusal":"no"}`)), false)
	f.Add([]byte(`{"choices":[{"delta":{"content":"b"},"index":1,"usage":{"a":1}},{"index":0,"message":{"content":[{"type":"text","text":"a"}]},"usage":{"b":2}}],"x_groq":{"usage":{}}}`), true)
	f.Fuzz(func(t *testing.T, data []byte, completion bool) {
		var d ChunkDecoder
		member := "delta"
		c, err := d.Decode(data)
		if completion {
			member = "message"
			c, err = DecodeCompletion(data)
		}
		if !json.Valid(data) || !utf8.Valid(data) {
			return
		}
		// Maps, not structs: encoding/json matches struct fields without
		// regard to case, the decoder (like OpenAI) does not.
		want, ok := referenceDecode(data, member)
		if !ok {
			return // not an object
		}
		if err != nil {
			t.Fatalf("valid JSON object rejected: %v", err)
		}
		if hasDuplicateKeys(data) {
			return
		}
		if !bytes.Equal(c.Content, want.content) {
			t.Fatalf("content %q, the reference says %q", c.Content, want.content)
		}
		if !bytes.Equal(c.Reasoning, want.reasoning) {
			t.Fatalf("reasoning %q, the reference says %q", c.Reasoning, want.reasoning)
		}
		if string(c.FinishReason) != want.finish {
			t.Fatalf("finish reason %q, the reference says %q", c.FinishReason, want.finish)
		}
		if !bytes.Equal(c.Usage, want.usage) {
			t.Fatalf("usage %s, the reference says %s", c.Usage, want.usage)
		}
		if (c.StrayChoice != nil) != want.stray {
			t.Fatalf("stray choice %q, the reference says %v", c.StrayChoice, want.stray)
		}
		if len(c.Violations) != want.violations {
			t.Fatalf("%d violations, the reference counts %d", len(c.Violations), want.violations)
		}
	})
}

// hasDuplicateKeys reports whether any object in the valid JSON data has a
// key twice (encoding/json and the decoder may then disagree on which wins).
func hasDuplicateKeys(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	type frame struct {
		keys  map[string]bool
		isObj bool
		key   bool // the next token in this object is a key
	}
	var stack []*frame
	for {
		tok, err := dec.Token()
		if err != nil {
			return false
		}
		var top *frame
		if len(stack) > 0 {
			top = stack[len(stack)-1]
		}
		switch v := tok.(type) {
		case json.Delim:
			if v == '{' || v == '[' {
				if top != nil && top.isObj {
					top.key = true
				}
				stack = append(stack, &frame{keys: map[string]bool{}, isObj: v == '{', key: true})
				continue
			}
			stack = stack[:len(stack)-1]
			continue
		case string:
			if top != nil && top.isObj && top.key {
				if top.keys[v] {
					return true
				}
				top.keys[v] = true
				top.key = false
				continue
			}
		}
		if top != nil && top.isObj {
			top.key = true
		}
	}
}
