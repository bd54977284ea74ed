package jsonformat

import (
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// The fields of noteFormat, a small format for the tests: "answer" is the
// answer, "note" and "data.note" are one field, the reasoning, and "quote"
// is recorded and delivered, as written, as answer text at its end.
const (
	tRoot = iota
	tAnswer
	tNote
	tQuote
)

var testFields = MustCompile(
	Field{ID: tRoot, Path: ""},
	Field{ID: tNote, Path: "data.note", Mode: jsonstream.Text},
	Field{ID: tAnswer, Path: "answer", Mode: jsonstream.Text},
	Field{ID: tNote, Path: "note", Mode: jsonstream.Text},
	Field{ID: tQuote, Path: "quote"},
)

// noteFormat is a JSON format on Base: the answer closes at its value's
// end, the reasoning is left for Base to close.
type noteFormat struct {
	Base
	ends int // objects ended, reported at Finish
}

func newNoteFormat(doc jsonstream.DocMode, lim transform.Limits) func() transform.Parser {
	return func() transform.Parser {
		p := &noteFormat{}
		p.Init((*noteFields)(p), testFields, doc, lim)
		return p
	}
}

type noteFields noteFormat

func (h *noteFields) FieldStart(id int, tk *jsonstream.Token) {
	if id == tQuote {
		(*noteFormat)(h).Record(tk.Offset)
	}
}

func (h *noteFields) FieldText(id int, text []byte) {
	p := (*noteFormat)(h)
	switch id {
	case tAnswer:
		p.AnswerText(text)
	case tNote:
		if !p.ThinkingOpen() {
			p.OpenThinking()
			p.OpenPhase(1, []byte("N"))
		}
		p.PhaseText(text)
	}
}

func (h *noteFields) FieldEnd(id int, tk *jsonstream.Token) {
	p := (*noteFormat)(h)
	switch id {
	case tAnswer:
		p.CloseAnswer()
	case tQuote:
		text, ok := p.Recorded(tk.Offset)
		if !ok {
			p.Violation("quote_too_long", nil, tk.Offset)
			return
		}
		p.AnswerText(text)
		p.CloseAnswer()
	case tRoot:
		p.ends++
	}
}

func (h *noteFields) Broken(tk *jsonstream.Token) {
	p := (*noteFormat)(h)
	p.Violation("broken", []byte(tk.Code), tk.Offset)
	if p.Recording() {
		if text, ok := p.Recorded(tk.Offset - 1); ok {
			p.AnswerText(text)
		}
	}
	p.CloseSections()
}

func (h *noteFields) Finish() {
	p := (*noteFormat)(h)
	if p.ends == 0 {
		p.Violation("no_object", nil, p.Offset())
	}
}

func TestBase(t *testing.T) {
	tests := []struct {
		name   string
		strict bool // DocStrict, not DocLenient
		lim    transform.Limits
		chunks []string
		want   string
	}{
		{name: "fields", chunks: []string{`{"answer":"a","note":"b"}`},
			want: `F{ F"a" F} TH{ P{1 "N"} P1"b" P1} TH}`},
		// One field written in two places is one ID, whatever the order in
		// which the Fields were listed.
		{name: "shared_id", chunks: []string{`{"data":{"note":"x"},"note":"y"}`},
			want: `TH{ P{1 "N"} P1"xy" P1} TH}`},
		{name: "violation_passes", chunks: []string{`{"answer":"a\qb"}`},
			want: `F{ F"a" V(invalid_escape@12:invalid escape in a string) F"\\qb" F}`},
		// A limit of the tokenizer ends the reading, not the stream
		// (CONTRACT.md §7): the rest of the reply is answer text.
		{name: "limit", lim: transform.Limits{MaxDepth: 2}, chunks: []string{`{"note":"n","x":[[[1]]],"answer":"late"}`},
			want: `TH{ P{1 "N"} P1"n" V(broken@17:json_too_deep) P1} TH} F{ F"[[1]]],\"answer\":\"late\"}" V(no_object@40) F}`},
		{name: "broken", chunks: []string{`{"note":"n" oops}`},
			want: `TH{ P{1 "N"} P1"n" V(broken@12:bad_json) P1} TH} F{ F"oops}" V(no_object@17) F}`},
		// A recorded value is the reply's text from its start to its end,
		// however the reply was cut, up to MaxBlockBytes.
		{name: "record", chunks: []string{`{"quote": {"a": [1, "`, `你"]}, "answer":"x"}`},
			want: `F{ F"{\"a\": [1, \"你\"]}" F} F{ F"x" F}`},
		{name: "record_too_long", lim: transform.Limits{MaxBlockBytes: 8}, chunks: []string{`{"quote": {"a": [1, 2]}, "answer":"x"}`},
			want: `V(quote_too_long@22) F{ F"x" F}`},
		{name: "record_at_limit", lim: transform.Limits{MaxBlockBytes: 8}, chunks: []string{`{"quote": [1,2,34], "answer":"x"}`},
			want: `F{ F"[1,2,34]" F} F{ F"x" F}`},
		{name: "record_broken", chunks: []string{`{"quote": {"a": 1 x`},
			want: `V(broken@18:bad_json) F{ F"{\"a\": 1 " F} F{ F"x" V(no_object@19) F}`},
		// DocLenient: prose before the object is answer text, closed when
		// the object starts.
		{name: "leading_prose", chunks: []string{"Note: ", `{"answer":"a"}`},
			want: `F{ F"Note: " F} V(leading_text@0:prose before the JSON object) F{ F"a" F}`},
		{name: "unterminated", chunks: []string{`{"answer":"hel`},
			want: `F{ F"hel" V(broken@14:unterminated_json) F} V(no_object@14)`},
		// DocStrict: a reply that is not JSON is the answer.
		{name: "prose", strict: true, chunks: []string{"plain ", "text"},
			want: `V(broken@0:expected_object) F{ F"plain text" V(no_object@10) F}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := jsonstream.DocLenient
			if tt.strict {
				doc = jsonstream.DocStrict
			}
			transformtest.CheckCase(t, newNoteFormat(doc, tt.lim), tt.chunks, tt.want)
		})
	}
}

// TestReset checks that a reset parser parses like a new one.
func TestReset(t *testing.T) {
	in := []byte(`{"answer":"a","note":"b"}`)
	newP := newNoteFormat(jsonstream.DocLenient, transform.Limits{})
	p := newP()
	transformtest.Run(p, []byte(`{"note":"x","answer":"y`))
	p.Reset()
	if got, want := transformtest.Format(transformtest.Run(p, in)), transformtest.Format(transformtest.Run(newP(), in)); got != want {
		t.Errorf("after Reset: %s\nnew parser: %s", got, want)
	}
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name   string
		fields []Field
		ok     bool
	}{
		{"shared_id", []Field{{ID: 1, Path: "a"}, {ID: 1, Path: "b.a"}}, true},
		{"negative_id", []Field{{ID: -1, Path: "a"}}, false},
		{"repeated_path", []Field{{ID: 1, Path: "a"}, {ID: 2, Path: "a"}}, false},
		{"bad_path", []Field{{ID: 1, Path: "a[0]"}}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compile(tt.fields...); (err == nil) != tt.ok {
				t.Errorf("Compile: error %v, want ok=%v", err, tt.ok)
			}
		})
	}
}
