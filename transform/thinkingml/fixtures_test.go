package thinkingml

import (
	"bytes"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// fixtures returns the whole-document fixtures: testdata/*.txt.
func fixtures(t testing.TB) map[string][]byte {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	out := map[string][]byte{}
	for _, path := range paths {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(filepath.Base(path), ".txt")] = b
	}
	return out
}

// TestFixtures checks every fixture against its golden events, the raw
// channel, the text-conservation property and split invariance
// (PARSING.md §5.11).
func TestFixtures(t *testing.T) {
	for name, input := range fixtures(t) {
		t.Run(name, func(t *testing.T) {
			evs := transformtest.Run(New(transform.ParserOptions{}), input)
			if err := transformtest.WellFormed(evs); err != nil {
				t.Fatal(err)
			}
			if err := transformtest.CheckGolden(filepath.Join("testdata", name+".golden"), evs, *update); err != nil {
				t.Error(err)
			}
			if err := checkRaw(input, evs); err != nil {
				t.Error(err)
			}
			if err := conservation(transform.ParserOptions{}, [][]byte{input}); err != nil {
				t.Error(err)
			}
			if err := transformtest.SplitInvariant(factory(transform.ParserOptions{}), input, 7, 50); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestTM03 feeds the well-formed document one byte per chunk, as
// Fireworks streams "<", "think", ">" (PARSING.md TM03).
func TestTM03(t *testing.T) {
	t.Run("TM03", func(t *testing.T) {
		input := fixtures(t)["wellformed"]
		whole, wholeRaw := transformtest.Normalize(transformtest.Run(New(transform.ParserOptions{}), input))
		ones := make([][]byte, len(input))
		for i := range input {
			ones[i] = input[i : i+1]
		}
		got, raw := transformtest.Normalize(transformtest.Run(New(transform.ParserOptions{}), ones...))
		if ok, diff := transformtest.Equal(whole, got); !ok {
			t.Error(diff)
		}
		if !bytes.Equal(raw, wholeRaw) {
			t.Errorf("raw text differs:\n want %q\n  got %q", wholeRaw, raw)
		}
	})
}

// TestFixturesCoverCodes checks that the fixtures and TM cases together
// produce every violation code this package declares, so that each is
// exercised by a golden file or a named case.
func TestFixturesCoverCodes(t *testing.T) {
	seen := map[string]bool{}
	note := func(evs []transform.Event) {
		for _, ev := range evs {
			if ev.Kind == transform.KindViolation {
				seen[ev.Code] = true
			}
		}
	}
	for _, input := range fixtures(t) {
		note(transformtest.Run(New(transform.ParserOptions{}), input))
	}
	for _, tc := range tmCases {
		note(transformtest.RunStrings(New(tc.opts), tc.chunks...))
	}
	for _, code := range declaredCodes(t) {
		if !seen[code] {
			t.Errorf("no fixture or TM case produces violation %q", code)
		}
	}
}

// declaredCodes reads the Code constants of codes.go. A code shared with
// other formats is declared there as serp.CodeX, whose value is read from
// that package's source.
func declaredCodes(t *testing.T) []string {
	t.Helper()
	shared := stringConsts(t, "../serp/queries.go")
	var codes []string
	for name, value := range stringConsts(t, "codes.go") {
		if !strings.HasPrefix(name, "Code") {
			continue
		}
		if v, ok := shared[strings.TrimPrefix(value, "serp.")]; ok {
			value = v
		}
		codes = append(codes, value)
	}
	if len(codes) < 30 {
		t.Fatalf("read only %d codes from codes.go", len(codes))
	}
	slices.Sort(codes)
	return codes
}

// stringConsts returns the constants of the Go file at path whose value is
// a string literal, or a selector serp.X, returned as "serp.X".
func stringConsts(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), path, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	consts := map[string]string{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Values) != 1 {
			return true
		}
		switch v := vs.Values[0].(type) {
		case *ast.BasicLit:
			if v.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(v.Value)
			if err != nil {
				t.Fatal(err)
			}
			consts[vs.Names[0].Name] = s
		case *ast.SelectorExpr:
			if x, ok := v.X.(*ast.Ident); ok && x.Name == "serp" {
				consts[vs.Names[0].Name] = "serp." + v.Sel.Name
			}
		}
		return true
	})
	return consts
}
