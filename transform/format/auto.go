package format

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/texttools"
)

// AutoParser detects the format from the first non-blank bytes of the reply
// (CONTRACT §4, format auto) and hands the reply to that format's parser,
// by the rows of the format table:
//
//   - the opening marker of the route's text_tools convention (a leading
//     <tool_call>) → text, which reads the tool calls (CONTRACT.md §8);
//   - '<' → the format with DetectTag (thinkingml);
//   - '{', or a ```json fence line and then '{' → the object's top-level
//     keys decide, whichever known key (a row's DetectKeys) comes first:
//     "event" → jsonl; "thought", "response_mode", "direct_response",
//     "tool_calls" → aiplan; "status", "message", "clarify", "artifacts" →
//     final_result; an object with none of them → text;
//   - anything else → text.
//
// Blanks are skipped, and so is a UTF-8 byte order mark at the very start
// (or the start of one cut short: the chosen parser still gets its bytes).
// A fence line is ``` and an optional language tag, at most 32 bytes before
// its newline; after it the rules above start over. A reply that ends
// undecided is text.
//
// The bytes read while deciding are held (bounded by Limits.MaxBlockBytes:
// an object that names no known key within that much is not one of ours,
// so it is text; leading blanks count) and replayed into the chosen parser,
// so each byte is handled at most twice. AutoParser itself emits nothing.
type AutoParser struct {
	opts   transform.ParserOptions
	name   Name                      // the chosen format, "" while undecided
	parser transform.Parser          // the chosen parser
	made   map[Name]transform.Parser // parsers made for earlier replies, reused
	held   []byte                    // bytes read while undecided
	scan   keyScan
}

// keyScan is the detector's state while undecided.
type keyScan struct {
	state    autoState
	pos      int  // bytes stepped
	bom      int  // bytes of a leading UTF-8 BOM seen
	fence    int  // bytes of the current fence line seen
	depth    int  // JSON nesting while scanning an object
	inString bool // inside a JSON string
	escaped  bool // after a backslash inside a string
	wantKey  bool // the next top-level string is a key
	isKey    bool // the current string is a top-level key
	key      [maxDecisiveKey]byte
	keyLen   int
	// marker is the text_tools opening marker, nil when off; matched
	// counts its bytes seen.
	marker  []byte
	matched int
}

type autoState uint8

const (
	autoLead   autoState = iota // skipping blank bytes
	autoFence                   // inside a ``` fence line
	autoObject                  // scanning an object's top-level keys
	autoMarker                  // matching the text_tools opening marker
)

const (
	// maxFenceLine bounds a fence line such as "```json": longer is not a
	// fence.
	maxFenceLine = 32
	// maxDecisiveKey is at least as long as every key keyFormat knows.
	maxDecisiveKey = 16
	bom            = "\ufeff"
)

// NewAuto returns a parser that detects the reply's format.
func NewAuto(opts transform.ParserOptions) *AutoParser {
	a := &AutoParser{opts: opts.WithDefaults()}
	a.scan.marker = toolMarker(opts)
	return a
}

// toolMarker returns the opening marker of the options' text_tools
// convention when it can start a reply auto would otherwise give another
// format, nil otherwise. A marker that starts like JSON or a fence would
// be read as one; the table has none.
func toolMarker(opts transform.ParserOptions) []byte {
	conv, ok := texttools.Lookup(opts.TextTools)
	if !ok || conv.Open[0] == '{' || conv.Open[0] == '`' {
		return nil
	}
	return []byte(conv.Open)
}

// Feed scans p until the format is known, then forwards.
func (a *AutoParser) Feed(p []byte, emit transform.Emit) {
	if a.parser != nil {
		a.parser.Feed(p, emit)
		return
	}
	for i, c := range p {
		if len(a.held)+i >= a.opts.Limits.MaxBlockBytes {
			a.decide(Text, p, emit)
			return
		}
		if name, ok := a.scan.step(c); ok {
			a.decide(name, p, emit)
			return
		}
	}
	a.held = append(a.held, p...)
}

// step advances the scan by one byte and reports a decision.
func (s *keyScan) step(c byte) (Name, bool) {
	s.pos++
	switch s.state {
	case autoLead:
		switch {
		case s.bom == s.pos-1 && s.bom < len(bom) && c == bom[s.bom]:
			s.bom++
			return "", false
		case isBlank(c):
			return "", false
		case s.marker != nil && c == s.marker[0]:
			if len(s.marker) == 1 {
				return Text, true
			}
			s.state, s.matched = autoMarker, 1
			return "", false
		case c == '<' && tagFormat != "":
			return tagFormat, true
		case c == '{':
			s.state, s.depth, s.wantKey = autoObject, 1, true
			return "", false
		case c == '`':
			s.state, s.fence = autoFence, 1
			return "", false
		}
		return Text, true
	case autoFence:
		// A fence is ``` and an optional language tag on a line of its own.
		switch {
		case s.fence < 3:
			if c != '`' {
				return Text, true
			}
		case c == '\n':
			s.state = autoLead
			return "", false
		case s.fence >= maxFenceLine || !isFenceTag(c):
			return Text, true
		}
		s.fence++
		return "", false
	case autoMarker:
		if c != s.marker[s.matched] {
			// Not the marker: its first byte decides as it would alone.
			if s.marker[0] == '<' && tagFormat != "" {
				return tagFormat, true
			}
			return Text, true
		}
		if s.matched++; s.matched == len(s.marker) {
			return Text, true
		}
		return "", false
	}
	return s.object(c)
}

// object follows a JSON object just far enough to see its top-level keys.
func (s *keyScan) object(c byte) (Name, bool) {
	if s.inString {
		switch {
		case s.escaped:
			s.escaped = false
		case c == '\\':
			s.escaped = true
		case c == '"':
			s.inString = false
			if s.isKey {
				return keyFormat(s.key[:s.keyLen])
			}
			return "", false
		}
		if s.isKey && s.keyLen < len(s.key) {
			s.key[s.keyLen] = c
			s.keyLen++
		}
		return "", false
	}
	switch c {
	case '"':
		s.inString, s.isKey, s.keyLen = true, s.depth == 1 && s.wantKey, 0
	case '{', '[':
		s.depth++
	case '}', ']':
		s.depth--
		if s.depth == 0 {
			return Text, true // the object ended without a key of ours
		}
	case ',':
		s.wantKey = s.depth == 1
	case ':':
		if s.depth == 1 {
			s.wantKey = false
		}
	}
	return "", false
}

// keyFormats maps each detecting key of the format table to its format;
// tagFormat is the format a leading '<' selects.
var keyFormats, tagFormat = func() (map[string]Name, Name) {
	keys := map[string]Name{}
	var tag Name
	for _, f := range formats {
		for _, k := range f.DetectKeys {
			if len(k) > maxDecisiveKey {
				panic("format: detect key " + k + " is longer than maxDecisiveKey")
			}
			keys[k] = f.Name
		}
		if f.DetectTag {
			tag = f.Name
		}
	}
	return keys, tag
}()

// keyFormat maps a top-level key to the format it identifies.
func keyFormat(key []byte) (Name, bool) {
	n, ok := keyFormats[string(key)]
	return n, ok
}

// decide creates the parser for name and replays the held bytes and p.
func (a *AutoParser) decide(name Name, p []byte, emit transform.Emit) {
	a.name = name
	// A pooled AutoParser keeps the parsers it made, so that a route whose
	// replies keep one format builds its parser once, not per stream.
	if kept, ok := a.made[name]; ok {
		kept.Reset()
		a.parser = kept
	} else {
		a.parser, _ = New(name, a.opts) // every name the scan returns is known
		if a.made == nil {
			a.made = make(map[Name]transform.Parser, 1)
		}
		a.made[name] = a.parser
	}
	if len(a.held) > 0 {
		a.parser.Feed(a.held, emit)
		a.held = a.held[:0]
	}
	if len(p) > 0 {
		a.parser.Feed(p, emit)
	}
}

// Close decides on what was held (text, if nothing decided it) and closes.
func (a *AutoParser) Close(emit transform.Emit) {
	if a.parser == nil {
		a.decide(Text, nil, emit)
	}
	a.parser.Close(emit)
}

// Reset readies a for a new reply.
func (a *AutoParser) Reset() {
	marker := a.scan.marker
	*a = AutoParser{opts: a.opts, held: a.held[:0], made: a.made}
	a.scan.marker = marker
}

// Detected returns the format the parser chose, or "" while undecided.
func (a *AutoParser) Detected() Name { return a.name }

// Chosen returns the parser of the format chosen, nil while undecided, so
// that what it read can be asked of it (the checks of CONTRACT.md §10
// read a FinalResult's status).
func (a *AutoParser) Chosen() transform.Parser { return a.parser }

func isBlank(c byte) bool { return c == ' ' || c == '\t' || c == '\r' || c == '\n' }

// isFenceTag reports whether c may follow the backticks on a fence line: a
// language tag such as json or JSON, spaces, a CR.
func isFenceTag(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '_' || c == ' ' || c == '\r'
}
