package jsonformat

import (
	"fmt"

	"github.com/llmstream/llmstream/transform/jsonstream"
)

// Field binds a format's ID for a value to where the value is read from.
type Field struct {
	// ID is the format's name for the value: Base hands it to the Format
	// with every token of the value. Formats declare their IDs as
	// constants; several Fields may share one, so that one field written
	// in two places is read as one (jsonl's "text" and "data.text").
	ID int
	// Path is the value's jsonstream path ("thought", "tool_calls[*].args").
	Path string
	// Mode says what the tokenizer reports of the value (jsonstream.Mode).
	Mode jsonstream.Mode
}

// Fields is a compiled, immutable set of Fields, shared by every parser of
// a format.
type Fields struct {
	paths *jsonstream.Paths
	ids   []int // the Field ID of each jsonstream path index
}

// Compile compiles fields. It rejects what jsonstream.Compile rejects (a
// malformed or repeated path, …) and a negative ID.
func Compile(fields ...Field) (*Fields, error) {
	watches := make([]jsonstream.Watch, len(fields))
	ids := make([]int, len(fields))
	for i, f := range fields {
		if f.ID < 0 {
			return nil, fmt.Errorf("jsonformat: field %q: negative id %d", f.Path, f.ID)
		}
		watches[i] = jsonstream.Watch{Path: f.Path, Mode: f.Mode}
		ids[i] = f.ID
	}
	paths, err := jsonstream.Compile(watches...)
	if err != nil {
		return nil, fmt.Errorf("jsonformat: %w", err)
	}
	return &Fields{paths: paths, ids: ids}, nil
}

// MustCompile is Compile for package-level variables; it panics on a bad
// field, which is a programming error.
func MustCompile(fields ...Field) *Fields {
	fs, err := Compile(fields...)
	if err != nil {
		panic(err)
	}
	return fs
}
