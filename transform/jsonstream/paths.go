package jsonstream

import (
	"errors"
	"fmt"
	"strings"
)

// Mode says what a Tokenizer reports for a watched value.
type Mode uint8

// The watch modes. Every watched value gets a TokenStart and a TokenEnd;
// the mode adds what comes between.
const (
	// Events reports only TokenStart and TokenEnd (with the text of a number
	// or literal at its end).
	Events Mode = 0
	// Text adds the decoded content of a string value as TokenText deltas.
	Text Mode = 1 << 0
	// Raw adds the exact bytes of the value as TokenRaw deltas (JO17). With
	// Text as well, a string value is decoded instead, so that a JSON string
	// holding JSON (OpenAI's function.arguments) yields the inner JSON.
	Raw Mode = 1 << 1
)

// Watch declares one path whose values a Tokenizer reports.
//
// A path names a value from the top-level object: "" is that object itself,
// "thought" its member, "clarify.question" a member of a member, and "[*]"
// after a name stands for every element of an array ("tool_calls[*].name",
// "queries[*]"). With Config.Root TypeArray, "" is the top-level array and
// "[*]" each of its elements ("[*].name" a member of each).
type Watch struct {
	Path string
	Mode Mode
}

// maxChildren bounds the watched members of one object, so that a bitmask
// can record which were seen (duplicate_key, JO19).
const maxChildren = 64

// node is one step of the compiled path trie.
type node struct {
	path  int32 // index of the Watch that ends here, or -1
	mode  Mode  // its mode
	elem  int32 // the node for "[*]", or -1
	names []string
	kids  []int32
}

// Paths is a compiled, immutable set of watches, shared by every Tokenizer
// of a format. A TokenStart, TokenText, TokenRaw or TokenEnd names its value
// by Path: the index of its Watch in the list given to Compile.
type Paths struct {
	nodes []node
}

// Compile compiles watches into Paths. It rejects a malformed or repeated
// path, a watch below a Raw watch (a captured value is passed through, not
// looked into), Raw on the top-level object, and more than 64 watched
// members of one object.
func Compile(watches ...Watch) (*Paths, error) {
	ps := &Paths{nodes: []node{{path: -1, elem: -1}}}
	for i, w := range watches {
		n, err := ps.insert(w.Path)
		if err != nil {
			return nil, fmt.Errorf("jsonstream: path %q: %w", w.Path, err)
		}
		if ps.nodes[n].path >= 0 {
			return nil, fmt.Errorf("jsonstream: path %q watched twice", w.Path)
		}
		if n == 0 && w.Mode&Raw != 0 {
			return nil, fmt.Errorf("jsonstream: path %q: the top-level object cannot be captured raw", w.Path)
		}
		ps.nodes[n].path = int32(i)
		ps.nodes[n].mode = w.Mode
	}
	if err := ps.checkRaw(0, false); err != nil {
		return nil, fmt.Errorf("jsonstream: %w", err)
	}
	return ps, nil
}

// MustCompile is Compile for package-level variables; it panics on a bad
// path, which is a programming error.
func MustCompile(watches ...Watch) *Paths {
	ps, err := Compile(watches...)
	if err != nil {
		panic(err)
	}
	return ps
}

// insert walks path from the root, adding nodes, and returns its node.
func (ps *Paths) insert(path string) (int32, error) {
	n := int32(0)
	if path == "" {
		return n, nil
	}
	for k, seg := range strings.Split(path, ".") {
		name, rest, _ := strings.Cut(seg, "[")
		switch {
		case name != "":
			n = ps.child(n, name)
		case k > 0 || rest == "":
			// Only the elements of a top-level array, "[*]", have no
			// name.
			return 0, errors.New("empty member name")
		}
		if rest == "" {
			continue
		}
		for _, r := range strings.SplitAfter("["+rest, "]") {
			if r == "" {
				continue
			}
			if r != "[*]" {
				return 0, errors.New("only [*] may follow a name")
			}
			if ps.nodes[n].elem < 0 {
				ps.nodes = append(ps.nodes, node{path: -1, elem: -1})
				ps.nodes[n].elem = int32(len(ps.nodes) - 1)
			}
			n = ps.nodes[n].elem
		}
	}
	return n, nil
}

// child returns n's member node for name, adding it if needed.
func (ps *Paths) child(n int32, name string) int32 {
	for k, s := range ps.nodes[n].names {
		if s == name {
			return ps.nodes[n].kids[k]
		}
	}
	ps.nodes = append(ps.nodes, node{path: -1, elem: -1})
	c := int32(len(ps.nodes) - 1)
	ps.nodes[n].names = append(ps.nodes[n].names, name)
	ps.nodes[n].kids = append(ps.nodes[n].kids, c)
	return c
}

// checkRaw reports a watch below a Raw watch, and an object with too many
// watched members.
func (ps *Paths) checkRaw(n int32, underRaw bool) error {
	nd := &ps.nodes[n]
	if underRaw && nd.path >= 0 {
		return errors.New("watched below a raw capture")
	}
	if len(nd.names) > maxChildren {
		return errors.New("too many watched members of one object")
	}
	raw := underRaw || (nd.path >= 0 && nd.mode&Raw != 0)
	for _, k := range nd.kids {
		if err := ps.checkRaw(k, raw); err != nil {
			return err
		}
	}
	if nd.elem >= 0 {
		return ps.checkRaw(nd.elem, raw)
	}
	return nil
}

// lookup returns the member node of n named key and its ordinal among n's
// members, or -1, -1. string(key) in a comparison does not allocate.
func (ps *Paths) lookup(n int32, key []byte) (int32, int) {
	nd := &ps.nodes[n]
	for k, s := range nd.names {
		if s == string(key) {
			return nd.kids[k], k
		}
	}
	return -1, -1
}
