package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/transformtest"
	"github.com/llmstream/llmstream/transform/upstream"
)

// TestUpstreamFixtures streams every provider fixture of the upstream
// package through the whole router (format text) and checks the events
// against testdata/upstream/<name>.golden, and that every split of the
// body gives the same events, well formed, with text deltas on UTF-8
// boundaries, usage delivered at most once and a stray choice reported at
// most once (CONTRACT.md §7).
func TestUpstreamFixtures(t *testing.T) {
	files, err := filepath.Glob("../upstream/testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		name := strings.TrimSuffix(filepath.Base(file), ".sse")
		t.Run(name, func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			rec := runBytes(t, format.Text, [][]byte{body})
			got := rec.notation() + "\n"
			golden := filepath.Join("testdata", "upstream", name+".golden")
			if encodertest.Update() { // -update: rewrite the golden files under testdata/
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("differs from %s:\n got %s\nwant %s", golden, got, want)
			}
			for _, chunks := range transformtest.Splits(body, 3, 20) {
				rec := runBytes(t, format.Text, chunks)
				if cut := rec.notation() + "\n"; cut != got {
					t.Fatalf("split %s:\n got %s\nwant %s", transformtest.Describe(chunks), cut, got)
				}
				checkStream(t, rec.events, chunks)
			}
		})
	}
}

// checkStream checks what holds for every stream whatever the upstream
// sent: well-formed events, rune-aligned text, one usage, one stray-choice
// report.
func checkStream(t *testing.T, evs []transform.Event, chunks [][]byte) {
	t.Helper()
	if err := transformtest.WellFormed(evs); err != nil {
		t.Fatalf("split %s: %v", transformtest.Describe(chunks), err)
	}
	checkRuneAligned(t, evs, chunks)
	checkCounts(t, evs, chunks)
}

// checkCounts fails when usage is delivered, or a stray choice reported,
// more than once.
func checkCounts(t *testing.T, evs []transform.Event, chunks [][]byte) {
	t.Helper()
	usage, stray := 0, 0
	for _, ev := range evs {
		switch {
		case ev.Kind == transform.KindUsage:
			usage++
		case ev.Kind == transform.KindViolation && ev.Code == upstream.CodeStrayChoice:
			stray++
		}
	}
	if usage > 1 || stray > 1 {
		t.Fatalf("split %s: %d usage events and %d stray-choice reports, want at most one each", transformtest.Describe(chunks), usage, stray)
	}
}
