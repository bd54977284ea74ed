package upstream

import "bytes"

// maxDepth bounds the nesting of a chunk, like transform.DefaultMaxDepth, so
// that a hostile chunk cannot exhaust the stack of the recursive skip.
const maxDepth = 64

// cursor reads one JSON document in place, in a single pass: the object and
// array walkers below share it, a nested walker continues where its parent
// stopped, and nothing is copied or decoded. Keys are the raw bytes between
// their quotes, values their raw JSON text. It checks the structure (braces,
// brackets, colons, commas, terminated strings, the shape of literals) and
// is lenient inside strings: invalid escapes, control bytes and invalid
// UTF-8 are the unescaper's to handle, since the decoder keeps them.
//
// This walker, not gjson, reads chunks: gjson unescapes every string value
// that has an escape into a new string while it iterates (an allocation for
// nearly every Markdown chunk, which has "\n"), its ForEach re-scans each
// nested level, and gjson.Valid rejects the invalid escapes the decoder must
// keep (PARSING.md JO09).
type cursor struct {
	data []byte
	i    int
	bad  bool
	at   int // where the structure broke, when bad
}

func (c *cursor) fail() {
	if !c.bad {
		c.bad, c.at = true, c.i
	}
}

func (c *cursor) skipSpace() {
	// Providers send compact JSON: the common case is no space at all,
	// decided on one byte.
	if c.i < len(c.data) && c.data[c.i] > ' ' {
		return
	}
	for c.i < len(c.data) {
		switch c.data[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

// peek returns the byte at the cursor, or 0 at the end.
func (c *cursor) peek() byte {
	if c.i < len(c.data) {
		return c.data[c.i]
	}
	return 0
}

// object walks the members of one JSON object. A member's value must be
// read (raw, object, array) or is skipped by the next call to next; a
// nested walker must be run to its end before the parent goes on.
type object struct {
	c       *cursor
	depth   int
	started bool
	pending bool // next must skip the current member's value
	done    bool
}

// openObject starts walking the object at the cursor. On anything else the
// cursor fails and the walker is empty.
func (c *cursor) openObject(depth int) object {
	c.skipSpace()
	if c.peek() != '{' || depth >= maxDepth {
		c.fail()
		return object{c: c, done: true}
	}
	c.i++
	return object{c: c, depth: depth + 1}
}

// next moves to the next member and returns its key. It returns false at
// the end of the object or when the cursor fails.
func (o *object) next() ([]byte, bool) {
	c := o.c
	if o.pending {
		o.pending = false
		c.skipValue(o.depth)
	}
	if o.done || c.bad {
		o.done = true
		return nil, false
	}
	c.skipSpace()
	switch c.peek() {
	case '}':
		c.i++
		o.done = true
		return nil, false
	case ',':
		if !o.started {
			c.fail()
			return nil, false
		}
		c.i++
		c.skipSpace()
	default:
		if o.started {
			c.fail()
			return nil, false
		}
	}
	o.started = true
	if c.peek() != '"' {
		c.fail()
		return nil, false
	}
	start := c.i
	if !c.skipString() {
		return nil, false
	}
	key := c.data[start+1 : c.i-1]
	if c.peek() != ':' { // compact JSON has it right there
		c.skipSpace()
		if c.peek() != ':' {
			c.fail()
			return nil, false
		}
	}
	c.i++
	c.skipSpace()
	o.pending = true
	return key, true
}

// raw returns the raw JSON text of the current member's value.
func (o *object) raw() []byte {
	o.pending = false
	return o.c.rawValue(o.depth)
}

// object descends into the current member's value when it is an object.
// When it is not, it returns false and the value is skipped by next.
func (o *object) object() (object, bool) {
	if o.c.peek() != '{' {
		return object{c: o.c, done: true}, false
	}
	o.pending = false
	return o.c.openObject(o.depth), true
}

// array descends into the current member's value when it is an array.
func (o *object) array() (array, bool) {
	if o.c.peek() != '[' {
		return array{c: o.c, done: true}, false
	}
	o.pending = false
	return o.c.openArray(o.depth), true
}

// array walks the elements of one JSON array, like object.
type array struct {
	c       *cursor
	depth   int
	started bool
	pending bool
	done    bool
}

func (c *cursor) openArray(depth int) array {
	c.skipSpace()
	if c.peek() != '[' || depth >= maxDepth {
		c.fail()
		return array{c: c, done: true}
	}
	c.i++
	return array{c: c, depth: depth + 1}
}

// next moves to the next element; it returns false at the end.
func (a *array) next() bool {
	c := a.c
	if a.pending {
		a.pending = false
		c.skipValue(a.depth)
	}
	if a.done || c.bad {
		a.done = true
		return false
	}
	c.skipSpace()
	if c.peek() == ']' {
		c.i++
		a.done = true
		return false
	}
	if a.started {
		if c.peek() != ',' {
			c.fail()
			return false
		}
		c.i++
		c.skipSpace()
	}
	a.started = true
	a.pending = true
	return true
}

// object descends into the current element when it is an object.
func (a *array) object() (object, bool) {
	if a.c.peek() != '{' {
		return object{c: a.c, done: true}, false
	}
	a.pending = false
	return a.c.openObject(a.depth), true
}

// raw returns the raw JSON text of the current element.
func (a *array) raw() []byte {
	a.pending = false
	return a.c.rawValue(a.depth)
}

// rawValue skips the value at the cursor and returns its raw text.
func (c *cursor) rawValue(depth int) []byte {
	start := c.i
	c.skipValue(depth)
	if c.bad {
		return nil
	}
	return c.data[start:c.i]
}

// skipValue moves the cursor past the value that starts there.
func (c *cursor) skipValue(depth int) {
	switch c.peek() {
	case '"':
		c.skipString()
	case '{':
		o := c.openObject(depth)
		for _, ok := o.next(); ok; _, ok = o.next() {
		}
	case '[':
		a := c.openArray(depth)
		for a.next() {
		}
	default:
		c.skipScalar()
	}
}

// skipString moves the cursor past the string whose opening quote is at
// the cursor; a backslash escapes the byte after it. The keys and the
// values of a streamed chunk are short: their first shortString bytes are
// read one by one, which costs less than starting bytes.IndexByte for each;
// a longer string (a completion's content, a tool call's arguments) is
// searched for its quotes with it.
func (c *cursor) skipString() bool {
	d := c.data
	j := c.i + 1
	for end := min(len(d), j+shortString); j < end; j++ {
		switch d[j] {
		case '"':
			c.i = j + 1
			return true
		case '\\':
			j++ // the escaped byte
		}
	}
	if j >= len(d) {
		c.fail()
		return false
	}
	// A quote preceded by an odd number of backslashes is escaped; the
	// search for them stops at the last byte the loop above passed.
	open := j - 1
	for {
		k := bytes.IndexByte(d[j:], '"')
		if k < 0 {
			c.fail()
			return false
		}
		q := j + k
		n := 0
		for p := q - 1; p > open && d[p] == '\\'; p-- {
			n++
		}
		if n%2 == 0 {
			c.i = q + 1
			return true
		}
		j = q + 1
	}
}

// shortString is how many bytes of a string skipString reads one by one
// before it searches the rest with bytes.IndexByte.
const shortString = 48

// skipScalar moves the cursor past a number or literal. Numbers are checked
// only for their first byte: the decoder reads no number but a tool call's
// index, which it checks itself.
func (c *cursor) skipScalar() {
	j := c.i
	for j < len(c.data) && scalarByte(c.data[j]) {
		j++
	}
	tok := c.data[c.i:j]
	switch {
	case len(tok) == 0:
		c.fail()
		return
	case tok[0] == '-' || ('0' <= tok[0] && tok[0] <= '9'):
	case string(tok) == "true", string(tok) == "false", string(tok) == "null":
	default:
		c.fail()
		return
	}
	c.i = j
}

func scalarByte(b byte) bool { return scalarBytes[b] }

// scalarBytes are the bytes of numbers and literals: letters, digits, '.',
// '+' and '-'; a table, since every chunk has a few scalars to skip.
var scalarBytes = func() (t [256]bool) {
	for b := range 256 {
		t[b] = 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '.' || b == '+' || b == '-'
	}
	return t
}()

// isString reports whether a raw JSON value is a string.
func isString(raw []byte) bool { return len(raw) >= 2 && raw[0] == '"' }

// isNull reports whether a raw JSON value is null.
func isNull(raw []byte) bool { return string(raw) == "null" }

// isObject reports whether a raw JSON value is an object.
func isObject(raw []byte) bool { return len(raw) > 0 && raw[0] == '{' }

// usageOf returns the raw usage object among the members of obj (Groq's
// x_groq), nil if there is none.
func usageOf(obj *object) (usage []byte) {
	for key, ok := obj.next(); ok; key, ok = obj.next() {
		if string(key) == "usage" {
			if raw := obj.raw(); isObject(raw) {
				usage = raw
			}
		}
	}
	return usage
}
