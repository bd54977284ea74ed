package caddymodule

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddyconfig"
	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/llmstream/llmstream/transform/encodertest"
)

// TestCaddyfileAdapt adapts every testdata/caddyfile_adapt/*.caddytest
// (a Caddyfile, a line of dashes, the expected JSON) and compares, like
// mholt/caddy-l4's golden tests. With -update the JSON part is rewritten.
func TestCaddyfileAdapt(t *testing.T) {
	files, err := filepath.Glob("testdata/caddyfile_adapt/*.caddytest")
	if err != nil || len(files) == 0 {
		t.Fatalf("no golden files: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			caddyfile, want, ok := strings.Cut(string(data), "----------")
			if !ok {
				t.Fatalf("%s: no ---------- separator", file)
			}
			if encodertest.Update() { // -update: rewrite golden files from the current output
				got := adapt(t, caddyfile)
				if err := os.WriteFile(file, []byte(caddyfile+"----------\n"+got+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if !caddytest.CompareAdapt(t, file, caddyfile, "caddyfile", strings.TrimSpace(want)) {
				t.Error("the adapted JSON differs (diff above); run with -update if the change is intended")
			}
		})
	}
}

// adapt returns the Caddyfile's JSON, indented as CompareAdapt expects.
func adapt(t *testing.T, caddyfile string) string {
	t.Helper()
	adapter := caddyconfig.GetAdapter("caddyfile")
	out, warnings, err := adapter.Adapt([]byte(caddyfile), nil)
	if err != nil {
		t.Fatalf("adapting: %v", err)
	}
	for _, w := range warnings {
		t.Logf("warning: %s", w.Message)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, out, "", "\t"); err != nil {
		t.Fatal(err)
	}
	return pretty.String()
}
