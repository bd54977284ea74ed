package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzToolsFile feeds arbitrary tools files, as JSON and as Markdown: a
// file is either refused with an error or gives tools that are valid JSON
// in OpenAI form with a valid, non-empty function name. Never a panic.
func FuzzToolsFile(f *testing.F) {
	for _, name := range []string{"tools/search.json", "tools/many.json", "tools/tools.md", "tools/bad_block.md", "tools/unclosed.md"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, name := range []string{"t.json", "t.md"} {
			tools, err := parseToolsFile(name, data)
			if err != nil {
				continue
			}
			for _, tl := range tools {
				// Maps, not structs: encoding/json matches struct fields
				// case-insensitively, an upstream does not.
				var top, fn map[string]json.RawMessage
				var typ, fname string
				if json.Unmarshal(tl.def, &top) != nil || json.Unmarshal(top["function"], &fn) != nil ||
					json.Unmarshal(top["type"], &typ) != nil || json.Unmarshal(fn["name"], &fname) != nil {
					t.Fatalf("%s: accepted tool is not in OpenAI form: %s", name, tl.def)
				}
				if typ != "function" || fname != tl.name || !validFunctionName(tl.name) {
					t.Fatalf("%s: accepted tool %q is not in OpenAI form: %s", name, tl.name, tl.def)
				}
			}
		}
	})
}
