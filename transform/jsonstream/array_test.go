package jsonstream

import (
	"strings"
	"testing"
)

// arrayWatches read a top-level array of strings, as thinkingml reads its
// serp_queries list.
var arrayWatches = []Watch{
	{Path: ""},
	{Path: "[*]", Mode: Text},
	{Path: "[*].q", Mode: Text},
}

var arrayPaths = MustCompile(arrayWatches...)

// TestTokenizerArrayRoot checks Config.Root TypeArray: the top-level value
// is an array, its elements are "[*]", and a reply that is not an array is
// expected_object, as a reply that is not an object is by default.
func TestTokenizerArrayRoot(t *testing.T) {
	cases := []struct {
		name     string
		doc      DocMode
		in       string
		want     string
		consumed int
	}{
		{name: "strings", doc: DocBare, in: ` ["a", "b\u00e9"] `,
			want: `J{ J{.0 J".0":"a" J}.0 J{.1 J".1":"bé" J}.1 J}`, consumed: 17},
		{name: "empty", doc: DocBare, in: `[]`, want: `J{ J}`, consumed: 2},
		{name: "mixed", doc: DocBare, in: `["a",1,{"q":"x"},null]`,
			want: `J{ J{.0 J".0":"a" J}.0 J{.1 J}.1=1 J{.2 J{.2.q J".2.q":"x" J}.2.q J}.2 J{.3 J}.3=null J}`, consumed: 22},
		{name: "stops_after_array", doc: DocBare, in: `["a"] x`,
			want: `J{ J{.0 J".0":"a" J}.0 J}`, consumed: 5},
		{name: "trailing_comma", doc: DocBare, in: `["a",]`,
			want: `J{ J{.0 J".0":"a" J}.0 X(bad_json@5)`, consumed: 5},
		{name: "object", doc: DocBare, in: `{"a":1}`, want: `X(expected_object@0)`},
		{name: "unterminated", doc: DocBare, in: `["a"`,
			want: `J{ J{.0 J".0":"a" J}.0 X(unterminated_json@4)`, consumed: 4},
		{name: "fenced", doc: DocStrict, in: "```json\n[\"a\"]\n```\n",
			want: `J{ J{.0 J".0":"a" J}.0 J}`, consumed: 18},
		{name: "strict_prose", doc: DocStrict, in: `no list`, want: `X(expected_object@0) T"no list"`, consumed: 7},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := Config{Paths: arrayPaths, Doc: tc.doc, Root: TypeArray}
			toks, n := run(c, []byte(tc.in))
			got := format(arrayWatches, normalize(toks))
			if got != tc.want {
				t.Errorf("tokens differ:\n want %s\n  got %s", tc.want, got)
			}
			if n != tc.consumed {
				t.Errorf("consumed %d, want %d", n, tc.consumed)
			}
			if err := splitInvariant(c, arrayWatches, []byte(tc.in), 3, 50); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestTokenizerArrayRootDetail checks that the details of an array reply
// speak of an array.
func TestTokenizerArrayRootDetail(t *testing.T) {
	toks, _ := run(Config{Paths: arrayPaths, Doc: DocBare, Root: TypeArray}, []byte(`x`))
	if len(toks) != 1 || !strings.Contains(string(toks[0].Text), "JSON array") {
		t.Errorf("tokens %v, want one expected_object about a JSON array", toks)
	}
}

// TestInitRoot checks that Init refuses a top-level type it cannot read.
func TestInitRoot(t *testing.T) {
	bad := []struct {
		name string
		c    Config
	}{
		{"string", Config{Root: TypeString}},
		{"lenient_array", Config{Root: TypeArray, Doc: DocLenient}},
	}
	for _, tc := range bad {
		t.Run(tc.name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Error("Init accepted it")
				}
			}()
			var tk Tokenizer
			tk.Init(tc.c)
		})
	}
}

func TestCompileArrayPaths(t *testing.T) {
	for _, path := range []string{"[*]", "[*].q", "[*][*]"} {
		if _, err := Compile(Watch{Path: path}); err != nil {
			t.Errorf("%q: %v", path, err)
		}
	}
	for _, path := range []string{"a.[*]", ".a", "[0]"} {
		if _, err := Compile(Watch{Path: path}); err == nil {
			t.Errorf("%q: Compile accepted it", path)
		}
	}
}
