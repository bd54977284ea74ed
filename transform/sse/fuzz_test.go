package sse

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/transformtest"
)

// reference is a deliberately simple, non-incremental reading of the WHATWG
// event-stream rules over a whole body, with the Framer's limit and
// leniency at the end (PARSING.md §5.11, differential test).
func reference(body []byte, limit int) result {
	var r result
	body = bytes.TrimPrefix(body, []byte(bom))
	var lines [][]byte
	for len(body) > 0 {
		i := bytes.IndexAny(body, "\r\n")
		if i < 0 {
			break
		}
		lines = append(lines, body[:i])
		if body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			i++
		}
		body = body[i+1:]
	}
	var data []string
	var name, id string
	hasData := false
	dispatch := func() {
		if hasData {
			ev := Event{Data: []byte(strings.Join(data, "\n"))}
			if name != "" {
				ev.Name = []byte(name)
			}
			if id != "" {
				ev.ID = []byte(id)
			}
			r.events = append(r.events, formatEvent(ev))
		}
		data, name, hasData = nil, "", false
	}
	for _, line := range lines {
		if len(line) > limit {
			r.err = ErrLineTooLong
			return r
		}
		if len(line) == 0 {
			dispatch()
			continue
		}
		field, value, _ := strings.Cut(string(line), ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "data":
			data, hasData = append(data, value), true
			if n := len(strings.Join(data, "\n")); n > limit {
				r.err = ErrLineTooLong
				return r
			}
		case "event":
			name = value
		case "id":
			if !strings.Contains(value, "\x00") {
				id = value
			}
		}
	}
	if len(body) > limit {
		r.err = ErrLineTooLong
		return r
	}
	dispatch()
	if len(body) > 0 {
		r.err = ErrTruncated
	}
	return r
}

// same reports whether two results have the same events and the same kind
// of error.
func same(a, b result) bool {
	if strings.Join(a.events, "\n") != strings.Join(b.events, "\n") {
		return false
	}
	for _, target := range []error{ErrLineTooLong, ErrTruncated} {
		if errors.Is(a.err, target) != errors.Is(b.err, target) {
			return false
		}
	}
	return (a.err == nil) == (b.err == nil)
}

// FuzzSSEFramer checks the Framer on any body cut anywhere: no panic, the
// same events and error for the fuzzer-chosen split as for the whole body,
// the same as the reference reading, and no buffer beyond MaxLine.
func FuzzSSEFramer(f *testing.F) {
	files, _ := filepath.Glob("testdata/*.sse")
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, []byte{3, 200, 17, 1, 1, 90})
	}
	f.Add([]byte("\xEF\xBB\xBFdata: a\r\n\r\nid: 1\rdata\n\n: c\ndata: [DONE]\n\n"), []byte{1, 1, 1, 1, 1, 1, 1, 1, 1})
	f.Add([]byte("data: a\r"), []byte{8})
	f.Fuzz(func(t *testing.T, body, cuts []byte) {
		// The limit comes from the input so that the fuzzer explores it too.
		limit := 8 + len(cuts)*7
		want := reference(body, limit)
		whole := frame(&Framer{MaxLine: limit}, body)
		if !same(whole, want) {
			t.Fatalf("whole body %q:\n got %s\nwant %s", body, whole, want)
		}
		fr := Framer{MaxLine: limit}
		got := frame(&fr, transformtest.CutsFromBytes(body, cuts)...)
		if !same(got, whole) {
			t.Fatalf("body %q cut by %v:\n got %s\nwant %s", body, cuts, got, whole)
		}
		if c := fr.heldCap(); c > limit {
			t.Fatalf("a buffer grew to %d bytes, MaxLine %d", c, limit)
		}
	})
}
