package sse

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/transformtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// result is what a Framer made of a body: its events in a readable notation
// and the error that ended it.
type result struct {
	events []string
	err    error
}

func (r result) String() string {
	s := strings.Join(r.events, "\n")
	if r.err != nil {
		s += "\nerror: " + r.err.Error()
	}
	return s
}

// formatEvent writes an event as [name] #id "data", leaving out what it lacks.
func formatEvent(ev Event) string {
	var b strings.Builder
	if ev.Name != nil {
		b.WriteString("[" + string(ev.Name) + "] ")
	}
	if ev.ID != nil {
		b.WriteString("#" + string(ev.ID) + " ")
	}
	b.WriteString(strconv.Quote(string(ev.Data)))
	return b.String()
}

// frame feeds chunks to f and closes it. The chunks are copied and the copy
// overwritten after each Feed, so that a Framer that kept a borrowed slice
// of its input fails the comparison.
func frame(f *Framer, chunks ...[]byte) result {
	var r result
	event := func(ev Event) { r.events = append(r.events, formatEvent(ev)) }
	for _, c := range chunks {
		tmp := append([]byte(nil), c...)
		err := f.Feed(tmp, event)
		for i := range tmp {
			tmp[i] = '#'
		}
		if err != nil {
			r.err = err
			return r
		}
	}
	r.err = f.Close(event)
	return r
}

func frameStrings(max int, chunks ...string) result {
	bs := make([][]byte, len(chunks))
	for i, c := range chunks {
		bs[i] = []byte(c)
	}
	return frame(&Framer{MaxLine: max}, bs...)
}

func TestFramer(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		chunks []string
		want   []string
		err    error
	}{
		{"one event", 0, []string{"data: {\"a\":1}\n\n"}, []string{`"{\"a\":1}"`}, nil},
		{"no space after colon", 0, []string{"data:x\n\n"}, []string{`"x"`}, nil},
		{"only one space is removed", 0, []string{"data:  x \n\n"}, []string{`" x "`}, nil},
		{"CRLF", 0, []string{"data: a\r\n\r\ndata: b\r\n\r\n"}, []string{`"a"`, `"b"`}, nil},
		{"CR only", 0, []string{"data: a\r\rdata: b\r\r"}, []string{`"a"`, `"b"`}, nil},
		{"CR at chunk end then LF is one line end", 0, []string{"data: a\r", "\n\r", "\n"}, []string{`"a"`}, nil},
		{"CR at chunk end, then an empty chunk, then LF", 0, []string{"data: a\r", "", "\ndata: b\n\n"}, []string{"\"a\\nb\""}, nil},
		{"LF CR is two line ends", 0, []string{"data: a\n\rdata: b\n\n"}, []string{`"a"`, `"b"`}, nil},
		{"comments are ignored", 0, []string{": keep-alive\n\n:\ndata: a\n: between\n\n"}, []string{`"a"`}, nil},
		{"multi-line data joined with LF", 0, []string{"data: {\"a\":\ndata: 1}\n\n"}, []string{"\"{\\\"a\\\":\\n1}\""}, nil},
		{"multi-line data across chunks", 0, []string{"data: a\nda", "ta: b\ndata", ": c\n", "\n"}, []string{"\"a\\nb\\nc\""}, nil},
		{"field without colon is an empty data line", 0, []string{"data\n\ndata\ndata\n\n"}, []string{`""`, "\"\\n\""}, nil},
		{"event without data is not dispatched", 0, []string{"event: ping\n\nid: 7\n\n"}, nil, nil},
		{"event name and last event id", 0, []string{"event: delta\nid: 1\ndata: a\n\ndata: b\n\n"}, []string{`[delta] #1 "a"`, `#1 "b"`}, nil},
		{"id with NUL is ignored", 0, []string{"id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n"}, []string{`#1 "a"`, `#1 "b"`}, nil},
		{"empty id clears the last event id", 0, []string{"id: 1\ndata: a\n\nid\ndata: b\n\n"}, []string{`#1 "a"`, `"b"`}, nil},
		{"retry and unknown fields are ignored", 0, []string{"retry: 10\nfoo: bar\ndata: a\n\n"}, []string{`"a"`}, nil},
		{"DONE is passed up as data", 0, []string{"data: [DONE]\n\n"}, []string{`"[DONE]"`}, nil},
		{"BOM at the start", 0, []string{"\xEF\xBB\xBFdata: a\n\n"}, []string{`"a"`}, nil},
		{"BOM cut across chunks", 0, []string{"\xEF", "\xBB", "\xBFdata: a\n\n"}, []string{`"a"`}, nil},
		{"only one BOM is skipped", 0, []string{"\xEF\xBB\xBF\xEF\xBB\xBFdata: a\n\ndata: b\n\n"}, []string{`"b"`}, nil},
		{"a BOM prefix that is not a BOM is kept", 0, []string{"\xEF", "\xBBdata: a\n\ndata: b\n\n"}, []string{`"b"`}, nil},
		{"BOM later in the stream is data", 0, []string{"data: a\n\ndata: \xEF\xBB\xBFb\n\n"}, []string{`"a"`, `"\ufeffb"`}, nil},
		{"invalid UTF-8 passes through", 0, []string{"data: \xff\xc3\n\n"}, []string{`"\xff\xc3"`}, nil},
		{"UTF-8 cut across chunks", 0, []string{"data: \xe4\xbd", "\xa0\n\n"}, []string{`"你"`}, nil},
		{"missing last blank line is dispatched at close", 0, []string{"data: a\n\ndata: b\n"}, []string{`"a"`, `"b"`}, nil},
		{"body cut mid-line", 0, []string{"data: a\n\ndata: {\"b"}, []string{`"a"`}, ErrTruncated},
		{"body cut mid-line after complete data lines", 0, []string{"data: a\ndata: {\"b"}, []string{`"a"`}, ErrTruncated},
		{"body cut inside a BOM", 0, []string{"\xEF\xBB"}, nil, ErrTruncated},
		{"empty body", 0, nil, nil, nil},
		{"line at the limit", 8, []string{"data: ab\n\n"}, []string{`"ab"`}, nil},
		{"line over the limit in one chunk", 8, []string{"data: a\n\ndata: abc\n\n"}, []string{`"a"`}, ErrLineTooLong},
		{"line over the limit across chunks", 8, []string{"data: a\n\nda", "ta: a", "bc\n\n"}, []string{`"a"`}, ErrLineTooLong},
		{"unterminated line over the limit", 8, []string{"data: a\n\ndata: abc"}, []string{`"a"`}, ErrLineTooLong},
		{"comment over the limit", 8, []string{": keep-alive\n\n"}, nil, ErrLineTooLong},
		{"joined data over the limit", 10, []string{"data: abcd\ndata: abcd\ndata: abcd\n\n"}, nil, ErrLineTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := frameStrings(tt.max, tt.chunks...)
			if strings.Join(got.events, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("events:\n got %s\nwant %s", strings.Join(got.events, " "), strings.Join(tt.want, " "))
			}
			if !errors.Is(got.err, tt.err) || (tt.err == nil) != (got.err == nil) {
				t.Errorf("error: got %v, want %v", got.err, tt.err)
			}
		})
	}
}

// TestOA18 is PARSING.md OA18 at the framing layer: the same chunk cut
// mid-keyword, mid-JSON and mid-UTF-8, with keep-alive comments, CRLF and
// [DONE], gives the same data payloads.
func TestOA18(t *testing.T) {
	const payload = `{"choices":[{"delta":{"content":"héllo"}}]}`
	want := []string{strconv.Quote(payload), `"[DONE]"`}
	tests := []struct {
		name   string
		chunks []string
	}{
		{"whole", []string{"data: " + payload + "\n\ndata: [DONE]\n\n"}},
		{"mid-keyword", []string{"da", "ta: " + payload + "\n\nd", "ata: [DONE]\n\n"}},
		{"mid-JSON", []string{"data: {\"choices\":[{\"del", "ta\":{\"content\":\"héllo\"}}]}\n\ndata: [DO", "NE]\n\n"}},
		{"mid-UTF-8", []string{"data: {\"choices\":[{\"delta\":{\"content\":\"h\xc3", "\xa9llo\"}}]}\n\ndata: [DONE]\n\n"}},
		{"keep-alive comments", []string{": keep-alive\n\ndata: " + payload + "\n: keep-alive\n\n: ping\n\ndata: [DONE]\n\n"}},
		{"CRLF", []string{"data: " + payload + "\r\n\r\ndata: [DONE]\r\n\r\n"}},
		{"CRLF cut between CR and LF", []string{"data: " + payload + "\r", "\n\r", "\ndata: [DONE]\r", "\n\r", "\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := frameStrings(0, tt.chunks...)
			if got.err != nil || strings.Join(got.events, "\n") != strings.Join(want, "\n") {
				t.Errorf("got %s, want %s", got, strings.Join(want, "\n"))
			}
		})
	}
}

// TestFixtures checks each SSE fixture against its golden file and against
// every split: each single split point, one byte per chunk and 50 random
// splits dispatch the same events as the whole body.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			whole := frame(&Framer{}, body)
			golden := strings.TrimSuffix(file, ".sse") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(whole.String()+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if whole.String()+"\n" != string(want) {
				t.Errorf("events differ from %s:\n got %s\nwant %s", golden, whole, want)
			}
			var f Framer
			for _, chunks := range transformtest.Splits(body, 1, 50) {
				f.Reset()
				if got := frame(&f, chunks...); got.String() != whole.String() {
					t.Fatalf("split into %d chunks:\n got %s\nwant %s", len(chunks), got, whole)
				}
			}
		})
	}
}

// TestReset checks that a Framer reused after an error or a cut body starts
// clean.
func TestReset(t *testing.T) {
	f := Framer{MaxLine: 8}
	if got := frame(&f, []byte("data: {\"a\":1}\n\n")); !errors.Is(got.err, ErrLineTooLong) {
		t.Fatalf("got %v, want ErrLineTooLong", got.err)
	}
	if err := f.Feed([]byte("data: a\n\n"), func(Event) {}); !errors.Is(err, ErrLineTooLong) {
		t.Fatalf("Feed after an error: got %v, want the same error", err)
	}
	f.Reset()
	if got := frame(&f, []byte("id: 1\nevent: e\ndata: a\r")); got.err != nil || len(got.events) != 1 {
		t.Fatalf("after Reset: %s", got)
	}
	f.Reset()
	if got := frame(&f, []byte("\ndata: b\n\n")); got.String() != `"b"` {
		t.Fatalf("after a second Reset: got %s, want only \"b\" (no id, name or pending CR kept)", got)
	}
}

// TestMemoryBound checks that no buffer grows past MaxLine, whatever the
// line lengths and splits.
func TestMemoryBound(t *testing.T) {
	body := []byte(strings.Repeat("data: "+strings.Repeat("x", 90)+"\n", 3) + "\n" + "data: " + strings.Repeat("y", 200) + "\n\n")
	for _, limit := range []int{100, 300, 1000} {
		for _, chunks := range transformtest.Splits(body, 2, 20) {
			f := Framer{MaxLine: limit}
			frame(&f, chunks...)
			if c := f.heldCap(); c > limit {
				t.Fatalf("MaxLine %d: a buffer grew to %d bytes", limit, c)
			}
		}
	}
}

// heldCap returns the largest capacity among the Framer's buffers.
func (f *Framer) heldCap() int {
	return max(cap(f.line), cap(f.data), cap(f.name), cap(f.id))
}

func TestFeedDoesNotAllocate(t *testing.T) {
	body := bytes.Repeat([]byte("data: {\"choices\":[{\"delta\":{\"content\":\"hello\"}}]}\n\n: keep-alive\r\n\r\n"), 64)
	var f Framer
	n := 0
	event := func(ev Event) { n += len(ev.Data) }
	for _, size := range []int{1, 7, 4096} {
		t.Run(strconv.Itoa(size), func(t *testing.T) {
			feed := func() {
				f.Reset()
				for p := body; len(p) > 0; {
					k := min(size, len(p))
					if err := f.Feed(p[:k], event); err != nil {
						t.Fatal(err)
					}
					p = p[k:]
				}
				if err := f.Close(event); err != nil {
					t.Fatal(err)
				}
			}
			feed() // grow the buffers once
			if a := testing.AllocsPerRun(20, feed); a != 0 {
				t.Errorf("%v allocations per body, want 0", a)
			}
		})
	}
}
