// Package encodertest holds what the tests of the protocol encoders (every
// row of the protocol table, transform/protocol) share: the scenarios every
// protocol encodes and the builders of their events, the runner that feeds
// events to an encoder, the golden-file comparison with its -update flag,
// an SSE reader, the fuzz event generator, and the allocation, speed and
// end-of-stream checks. Test files cannot be imported across packages, so
// this is a regular package that only tests import; transform/transformtest
// is the parsers' counterpart.
package encodertest

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
)

// update is registered in every test binary that imports the package, so
// `go test ./transform/gymbro/ -update` rewrites that package's goldens.
var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// Update reports whether the test binary runs with -update: a package
// whose tests import this one (or wiretest) reads its own goldens' flag
// here, since a second flag of the name would not register.
func Update() bool { return *update }

// Created is the fixed stream start of every scenario.
var Created = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// Meta returns the Meta every scenario uses: a streamed request started at
// Created, with a clock that advances 400 ms per reading, so that pacing
// shows in the output.
func Meta() transform.Meta {
	now := Created
	return transform.Meta{
		MessageID:  "msg-1",
		RequestID:  "req-1",
		Provider:   "openai",
		EndpointID: 3,
		Model:      "gpt-test",
		Stream:     true,
		Created:    Created,
		Now: func() time.Time {
			now = now.Add(400 * time.Millisecond)
			return now
		},
	}
}

// Run encodes evs with enc, after Begin, and returns the bytes. A
// Heartbeat step calls AppendHeartbeat, 90 s after Created. Each event's Text
// is overwritten after the call, so that an encoder that kept a borrowed
// slice shows it in the output.
func Run(enc transform.Encoder, evs []transform.Event) []byte {
	out := enc.Begin(nil)
	for _, e := range evs {
		e = e.Clone()
		out = appendStep(enc, out, e, Created.Add(90*time.Second))
		for i := range e.Text {
			e.Text[i] = '#'
		}
	}
	return out
}

// Golden compares got with testdata/<name>.golden in the test's package
// directory, rewriting the file instead when the test runs with -update.
func Golden(t testing.TB, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}
