package jsonstream

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzJSONTokenizer checks, for any reply and any split of it (cuts
// chooses the split, and its first byte the document mode and, one input
// in two, tight limits):
//   - no panic;
//   - the normalized tokens do not depend on the split;
//   - no delta token cuts a character the chunks did not cut;
//   - every raw capture is byte-identical to its span of the input (JO17);
//   - nothing is lost (CONTRACT.md §7): once the value broke, outgrew a
//     limit or was followed by text, the prose is the rest of the reply;
//   - when the reply is valid JSON, decoded strings and numbers equal what
//     encoding/json decodes from it (a differential oracle).
func FuzzJSONTokenizer(f *testing.F) {
	for _, tc := range tokCases {
		f.Add([]byte(strings.Join(tc.chunks, "")), []byte{byte(tc.doc), 3, 7})
		f.Add([]byte(strings.Join(tc.chunks, "")), []byte{byte(tc.doc) + 3, 1, 1})
	}
	transformtest.SeedFiles(f, "testdata/*.json", []byte{1, 5, 200, 9})
	tight := transform.Limits{MaxKeyBytes: 8, MaxDepth: 4, MaxTagBytes: 10}
	f.Fuzz(func(t *testing.T, data, cuts []byte) {
		mode := DocStrict
		var lim transform.Limits
		if len(cuts) > 0 {
			mode = DocMode(cuts[0] % 3)
			if cuts[0]/3%2 == 1 {
				lim = tight
			}
		}
		c := Config{Paths: testPaths, Doc: mode, Limits: lim}
		wholeToks, wholeN := run(c, data)
		whole := normalize(wholeToks)
		chunks := transformtest.CutsFromBytes(data, cuts)
		split, n := run(c, chunks...)
		if a, b := format(testWatches, whole), format(testWatches, normalize(split)); a != b || n != wholeN {
			t.Fatalf("split changed the tokens:\n one-shot %s (%d bytes)\n    split %s (%d bytes)", a, wholeN, b, n)
		}
		if err := wholeRunes(split, chunks); err != nil {
			t.Fatal(err)
		}
		checkRawSpans(t, data, whole)
		if mode != DocBare {
			checkRest(t, data, whole)
		}
		if mode != DocBare && json.Valid(data) && bytes.HasPrefix(bytes.TrimLeft(data, " \t\r\n"), []byte("{")) {
			checkDecoded(t, data, whole)
		}
	})
}

// checkRawSpans checks that each completed raw capture is its input span.
func checkRawSpans(t *testing.T, data []byte, toks []tok) {
	t.Helper()
	var start int64 = -1
	var raw []byte
	for _, tk := range toks {
		switch {
		case tk.Kind == TokenStart && testWatches[tk.Path].Mode&Raw != 0:
			start, raw = tk.Offset, nil
		case tk.Kind == TokenRaw:
			raw = append(raw, tk.Text...)
		case tk.Kind == TokenEnd && start >= 0:
			if testWatches[tk.Path].Mode&Text != 0 && tk.Type == TypeString {
				start = -1
				continue
			}
			if want := data[start : tk.Offset+1]; !bytes.Equal(raw, want) {
				t.Fatalf("raw capture %q, input span %q", raw, want)
			}
			start = -1
		}
	}
}

// checkRest checks that, after the token that ends the value's reading
// (a TokenInvalid other than expected_object and unterminated_json, a
// TokenLimit, a trailing_text violation), the prose is the reply from
// that token's Offset on.
func checkRest(t *testing.T, data []byte, toks []tok) {
	t.Helper()
	for k, tk := range toks {
		switch {
		case tk.Kind == TokenInvalid && tk.Code != CodeExpectedObject && tk.Code != CodeUnterminated,
			tk.Kind == TokenLimit, tk.Kind == TokenViolation && tk.Code == CodeTrailingText:
		default:
			continue
		}
		var prose []byte
		for _, after := range toks[k+1:] {
			if after.Kind == TokenProse {
				prose = append(prose, after.Text...)
			}
		}
		if want := data[tk.Offset:]; !bytes.Equal(prose, want) {
			t.Fatalf("after %s(%s@%d) the prose is %q, the rest of the reply %q", tk.Kind, tk.Code, tk.Offset, prose, want)
		}
		return
	}
}

// checkDecoded compares decoded top-level strings and numbers with
// encoding/json's decoding of the same input.
func checkDecoded(t *testing.T, data []byte, toks []tok) {
	t.Helper()
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(data, &doc); err != nil {
		return
	}
	got := map[string][]byte{}
	ended := map[string]bool{}
	for _, tk := range toks {
		if tk.Kind == TokenViolation && tk.Code == CodeDuplicateKey {
			return // encoding/json keeps the last value; we report both
		}
		if tk.Path < 0 || strings.ContainsAny(testWatches[tk.Path].Path, ".[") {
			continue
		}
		name := testWatches[tk.Path].Path
		switch tk.Kind {
		case TokenText:
			got[name] = append(got[name], tk.Text...)
		case TokenEnd:
			ended[name] = true
			if tk.Type == TypeNumber || tk.Type == TypeBool || tk.Type == TypeNull {
				got[name] = tk.Text
			}
		}
	}
	for name, rawValue := range doc {
		if !ended[name] {
			continue
		}
		var s string
		if rawValue[0] == '"' && json.Unmarshal(rawValue, &s) == nil {
			if testWatches[indexOf(name)].Mode&Text == 0 {
				continue // an Events watch reports no text
			}
			if ours := string([]rune(string(got[name]))); ours != s {
				t.Fatalf("%s: decoded %q, encoding/json %q", name, ours, s)
			}
			continue
		}
		if trimmed := bytes.TrimSpace(rawValue); !bytes.Equal(trimmed, got[name]) && testWatches[indexOf(name)].Mode == Events {
			t.Fatalf("%s: scalar %q, encoding/json %q", name, got[name], trimmed)
		}
	}
}

func indexOf(name string) int {
	for i, w := range testWatches {
		if w.Path == name {
			return i
		}
	}
	panic("no watch " + strconv.Quote(name))
}
