package main

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// TestRoutes: each route's protocol comes from its name, its path, or
// -proto, and is a protocol with a client; -body replaces its request.
func TestRoutes(t *testing.T) {
	o, err := parseFlags([]string{"-url", "http://h/stream/responses,anthropic=http://h/v1/messages,http://h/raw", "-proto", "gymbro"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"responses", "anthropic", "gymbro"}
	for i, r := range o.routes {
		if r.proto != want[i] || len(r.body) == 0 {
			t.Errorf("route %d = %s with %q, want %s", i, r.proto, r.body, want[i])
		}
	}
	if !strings.Contains(string(o.routes[0].body), `"input"`) {
		t.Errorf("responses request %s", o.routes[0].body)
	}
	for _, args := range [][]string{
		{"-url", "nope=http://h/x"},
		{"-conversations", "3", "-url", "http://h/openai"},
		{"-monitor"},
		{"-leftovers", "1s"},
		{"-c", "0"},
	} {
		if _, err := parseFlags(args); err == nil {
			t.Errorf("%q accepted", args)
		}
	}
}

// TestEvents counts the data lines a read completes and keeps the rest.
func TestEvents(t *testing.T) {
	rest, n := events([]byte("event: a\ndata: 1\n\n: beat\ndata: 2\ndata: 3\n\ndata: par"))
	if n != 3 || string(rest) != "data: par" {
		t.Errorf("events = %d, rest %q", n, rest)
	}
}

// TestStoredText reads the answer out of a stored skillpet record.
func TestStoredText(t *testing.T) {
	for in, want := range map[string]string{
		`{"_t":"_pub_asst","text":"hi\n","parts":[]}`: "hi\n",
		`plain`:       "plain",
		`{"other":1}`: `{"other":1}`,
	} {
		if got := storedText(in); got != want {
			t.Errorf("storedText(%q) = %q", in, got)
		}
	}
}

// TestTrickle: a slowloris body is the whole body, a byte a read.
func TestTrickle(t *testing.T) {
	tr := &trickle{ctx: t.Context(), b: []byte("abc"), gap: time.Millisecond}
	buf := make([]byte, 8)
	var got []byte
	for {
		n, err := tr.Read(buf)
		if n > 1 {
			t.Fatalf("read %d bytes at once", n)
		}
		got = append(got, buf[:n]...)
		if err == io.EOF {
			break
		}
	}
	if string(got) != "abc" {
		t.Errorf("body %q", got)
	}
}

// TestSettle: -leftovers fails the run when the gateway's goroutines or
// open files stay above the baseline (what CI relies on to catch a leak),
// and passes once they come back within the slack.
func TestSettle(t *testing.T) {
	for _, tc := range []struct {
		name      string
		after     [2]int // goroutines, open files after the load
		wantLeft  bool
		wantMatch string
	}{
		{"back to baseline", [2]int{102, 11}, false, ""},
		{"leaked goroutines", [2]int{160, 10}, true, "160 goroutines (baseline 100)"},
		{"leaked files", [2]int{100, 40}, true, "40 open files (baseline 10)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				g, f := 100, 10
				if calls.Add(1) > 1 {
					g, f = tc.after[0], tc.after[1]
				}
				fmt.Fprintf(w, "# TYPE go_goroutines gauge\ngo_goroutines %d\n# TYPE process_open_fds gauge\nprocess_open_fds %d\n", g, f)
			}))
			defer srv.Close()
			m := newMonitor(srv.URL, time.Second, io.Discard, true)
			if err := m.start(t.Context()); err != nil {
				t.Fatal(err)
			}
			left, err := m.settle(t.Context(), 1500*time.Millisecond, 5)
			if err != nil {
				t.Fatal(err)
			}
			if (left != "") != tc.wantLeft || !strings.Contains(left, tc.wantMatch) {
				t.Errorf("settle = %q, want leftover %v (%q)", left, tc.wantLeft, tc.wantMatch)
			}
		})
	}
}
