package transformtest

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
)

// CheckGolden compares the normalized events of evs, one Token a line,
// with the golden file at path, and reports the first line that differs.
// With update (the packages' -update flag) it first rewrites the file.
func CheckGolden(path string, evs []transform.Event, update bool) error {
	norm, _ := Normalize(evs)
	var b bytes.Buffer
	for _, ev := range norm {
		b.WriteString(Token(ev))
		b.WriteByte('\n')
	}
	got := b.Bytes()
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			return err
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("%w (run with -update to create it)", err)
	}
	if bytes.Equal(got, want) {
		return nil
	}
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	for i := range max(len(w), len(g)) {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			return fmt.Errorf("events differ from %s at line %d:\n want %s\n  got %s", path, i+1, wl, gl)
		}
	}
	return nil // unreachable: the texts differ, so a line does
}

// Golden is the golden-file test of a parser that echoes its input: each
// file matching pattern (say testdata/*.txt) is parsed, in a subtest named
// for it, by a parser from newParser, and its stream (CheckStream), its
// events against the .golden file beside it (CheckGolden; update rewrites
// it) and its split invariance (SplitInvariant) are checked.
func Golden(t *testing.T, pattern string, newParser func() transform.Parser, update bool) {
	files, err := filepath.Glob(pattern)
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures match %s: %v", pattern, err)
	}
	for _, name := range files {
		t.Run(filepath.Base(name), func(t *testing.T) {
			input, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			evs := Run(newParser(), input)
			if err := CheckStream(evs, input); err != nil {
				t.Error(err)
			}
			golden := strings.TrimSuffix(name, filepath.Ext(name)) + ".golden"
			if err := CheckGolden(golden, evs, update); err != nil {
				t.Error(err)
			}
			if err := SplitInvariant(newParser, input, 7, 50); err != nil {
				t.Error(err)
			}
		})
	}
}
