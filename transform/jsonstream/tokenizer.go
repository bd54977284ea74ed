package jsonstream

import (
	"github.com/llmstream/llmstream/transform"
)

// DocMode says what a Tokenizer accepts around the JSON object.
type DocMode uint8

// The document modes.
const (
	// DocBare: the input is one object, after optional blanks, and nothing
	// else is consumed: Feed stops after the object's last byte, or at the
	// byte that broke it, and reports how far it got. The jsonl parser uses
	// it for each line (PARSING.md §5.6).
	DocBare DocMode = iota
	// DocStrict: the whole reply is one object, possibly after a byte order
	// mark and blanks, possibly fenced (```json … ```). A reply whose first
	// other byte is not '{' is reported as TokenInvalid expected_object and
	// then delivered as TokenProse (final_result: the text becomes the
	// answer), as is text after the object or after the point where it
	// broke.
	DocStrict
	// DocLenient is DocStrict, except that prose before the object streams
	// as TokenProse while the object is looked for, and is reported as
	// leading_text once the object starts (aiplan, JO04). A '{' starts the
	// object only when the next byte that is not blank is '"' or '}', so
	// that "Here is {note}:" is never captured; a fence at a line's start
	// just before the object is the object's wrapper.
	DocLenient
)

// Config configures a Tokenizer.
type Config struct {
	// Paths are the watched values; nil watches nothing.
	Paths *Paths
	// Limits bounds the nesting depth (MaxDepth), the buffered keys and
	// numbers (MaxKeyBytes) and what the document stage holds while it
	// decides whether it reads the value's wrapper (MaxTagBytes: a fence
	// header and the blanks after it). Zero fields take the defaults.
	Limits transform.Limits
	// Doc is the document mode.
	Doc DocMode
	// Root is the type the top-level value must have: TypeObject, the
	// default, or TypeArray (thinkingml's serp_queries list, whose
	// elements are watched as "[*]"). An array is read in DocBare or
	// DocStrict mode: DocLenient's search for the object in prose is for
	// objects only.
	Root Type
}

// Tokenizer is an incremental JSON tokenizer (see the package comment). The
// zero value is not usable: call Init. A Tokenizer is not safe for
// concurrent use.
type Tokenizer struct {
	paths *Paths
	lim   transform.Limits
	mode  DocMode
	open  byte // the top-level value's first byte: '{' or '['

	h    Handler
	tk   Token
	base int64 // reply offset of p[0] in the current Feed

	doc document
	st  state

	// stack holds the open containers; its capacity is Limits.MaxDepth and
	// it never grows past it.
	stack []frame
	// valNode and valIdx describe the value about to begin: its watch node
	// (-1 when unwatched) and its Index.
	valNode int32
	valIdx  int
	// cur* describe the scalar or string being scanned.
	curNode int32
	curIdx  int
	curOff  int64

	str    stringState
	key    []byte // the key being read, in a watched object
	keyOff int64

	num     numberState
	scalar  []byte // the text of a watched number
	scalarX bool   // the watched number outgrew scalar
	lit     string // the literal being matched
	litPos  int

	// keyRaw holds the text of the key being read, as written, from its
	// opening quote up to the previous Feed's end; keyRawStart is where
	// its rest starts in the current p. A key too long is released from
	// it. It grows with the key: at most six bytes of text (a \uXXXX
	// escape) per byte of key, and a cut-off escape.
	keyRaw      []byte
	keyRawStart int

	cap capture

	stopAt int // where in p tokenizing stopped (stDead)
}

// frame is one open container.
type frame struct {
	node  int32 // watch node of the container, -1 when unwatched
	obj   bool
	idx   int    // the container's own Index
	count int    // elements so far (arrays)
	seen  uint64 // watched members seen so far (objects)
}

// state is the tokenizer's position in the JSON grammar.
type state uint8

const (
	stValue    state = iota // a value must begin
	stArrFirst              // after '[': a value or ']'
	stObjFirst              // after '{': a key or '}'
	stObjKey                // after ',' in an object: a key
	stColon                 // after a key: ':'
	stAfter                 // after a value in a container: ',' or the closer
	stStr                   // inside a string (key or value)
	stStrEsc                // after '\'
	stStrU                  // inside \uXXXX
	stStrHi                 // after a high surrogate: expecting '\'
	stStrHiEsc              // after a high surrogate and '\': expecting 'u'
	stNumber                // inside a number
	stLiteral               // inside true, false or null
	stDone                  // the top-level object is complete
	stDead                  // the reply broke or a limit was exceeded
)

// Init readies t for a reply with configuration c. It allocates the stack
// and buffers once; Reset reuses them. It panics on a Root other than
// TypeObject and TypeArray, or an array in DocLenient mode, which are
// programming errors.
func (t *Tokenizer) Init(c Config) {
	t.paths = c.Paths
	if t.paths == nil {
		t.paths = MustCompile()
	}
	t.lim = c.Limits.WithDefaults()
	t.mode = c.Doc
	switch {
	case c.Root == TypeObject:
		t.open = '{'
	case c.Root == TypeArray && c.Doc != DocLenient:
		t.open = '['
	default:
		panic("jsonstream: the top-level value must be an object, or an array outside DocLenient mode")
	}
	t.stack = make([]frame, 0, t.lim.MaxDepth)
	t.key = make([]byte, 0, t.lim.MaxKeyBytes)
	t.keyRaw = make([]byte, 0, 64)
	t.doc.hold = make([]byte, 0, t.lim.MaxTagBytes+len(bom))
	t.doc.blank = make([]byte, 0, maxTrailBlank)
	t.scalar = make([]byte, 0, 32)
	t.str.scratch = make([]byte, 0, 512)
	t.Reset()
}

// Reset readies t for a new reply with the same configuration.
func (t *Tokenizer) Reset() { t.ResetAt(0) }

// ResetAt readies t for a new input whose next byte is at offset off of the
// reply. The jsonl parser calls it for each line's object.
func (t *Tokenizer) ResetAt(off int64) {
	t.base = off
	t.doc.reset(t.mode)
	t.st = stValue
	t.stack = t.stack[:0]
	t.str.reset()
	t.key = t.key[:0]
	t.keyRaw = t.keyRaw[:0]
	t.scalar = t.scalar[:0]
	t.cap = capture{}
	t.h = nil
}

// Offset returns the reply offset of the next byte Feed reads.
func (t *Tokenizer) Offset() int64 { return t.base }

// Done reports whether the top-level object is complete.
func (t *Tokenizer) Done() bool { return t.st == stDone }

// Stopped reports whether tokenizing has stopped: the object is complete
// in DocBare mode, or the reply broke, or a limit was exceeded.
func (t *Tokenizer) Stopped() bool {
	return t.st == stDead || (t.mode == DocBare && t.st == stDone)
}

// Feed tokenizes the next bytes of the reply and reports to h. It returns
// how many bytes it consumed: all of p, except in DocBare mode once the
// object ended or broke or a limit was exceeded (see Stopped): then it
// stops at the byte after the object or at the byte where tokenizing
// stopped (after a key too long, the key's text was reported as
// TokenProse), and consumes nothing more until Reset. p is not retained.
func (t *Tokenizer) Feed(p []byte, h Handler) int {
	if t.mode == DocBare && t.Stopped() {
		return 0
	}
	t.h = h
	i := t.resume(p)
	for i < len(p) {
		if t.doc.st != docValue {
			i = t.docStep(p, i)
			if t.doc.st == docStopped {
				return t.advance(i)
			}
			continue
		}
		i = t.scan(p, i)
		switch t.st {
		case stDone:
			if t.mode == DocBare {
				return t.advance(i)
			}
			t.doc.st = docTrail
			t.doc.hold, t.doc.ticks, t.doc.blank = t.doc.hold[:0], 0, t.doc.blank[:0]
		case stDead:
			// The value broke (TokenInvalid) or outgrew a limit
			// (TokenLimit) at stopAt: the rest of the reply is the
			// model's text (CONTRACT.md §7), the caller's in DocBare
			// mode.
			if t.mode == DocBare {
				return t.advance(t.stopAt)
			}
			t.startProse(t.stopAt)
			i = len(p)
		}
	}
	t.suspend(p)
	return t.advance(len(p))
}

// advance moves the reply offset past n consumed bytes and returns n.
func (t *Tokenizer) advance(n int) int {
	t.base += int64(n)
	t.h = nil
	return n
}

// resume completes, at the start of p, a rune cut at the end of the
// previous Feed, and returns where scanning starts.
func (t *Tokenizer) resume(p []byte) int {
	t.cap.start = 0
	if t.cap.on && t.cap.carry.Pending() {
		out, rest := t.cap.carry.Resume(p)
		t.cap.start = len(p) - len(rest)
		t.emitData(TokenRaw, t.cap.path, t.cap.idx, out)
		// The completing bytes are still scanned: they are continuation
		// bytes inside a string, where scanning them changes nothing.
	}
	t.keyRawStart = 0
	if t.doc.st == docProse || t.doc.st == docSkip {
		return t.resumeProse(p)
	}
	if t.st == stStr && t.str.sink == sinkText && t.str.carry.Pending() {
		out, rest := t.str.carry.Resume(p)
		t.textCopy(out)
		return len(p) - len(rest) // continuation bytes: plain string content
	}
	return 0
}

// suspend flushes, at the end of a Feed, what is pending, holding back a
// rune the next Feed must complete.
func (t *Tokenizer) suspend(p []byte) {
	switch {
	case t.doc.st == docProse || t.doc.st == docSkip:
		t.flushProse(p, true)
	case t.st == stDead || t.st == stDone:
	default:
		t.flushText(t.st == stStr)
		t.flushCapture(p, len(p), true)
		if t.inKey() {
			t.keyRaw = append(t.keyRaw, p[t.keyRawStart:]...)
		}
	}
}

// Close ends the reply: it reports an object cut off (unterminated_json,
// JO26) or a reply that held no object (expected_object), and flushes held
// bytes.
func (t *Tokenizer) Close(h Handler) {
	t.h = h
	defer func() { t.h = nil }()
	if t.doc.st != docValue {
		t.docClose()
		return
	}
	if t.st == stDone || t.st == stDead {
		return
	}
	t.flushCarried()
	t.invalid(nil, 0, CodeUnterminated, t.rootDetail("the reply ended inside the JSON object", "the reply ended inside the JSON array"), t.base)
}

// flushCarried releases, at the end of the reply, a rune the reply cut
// off and any escape left unfinished inside a watched string, so that no
// byte of the model's text is lost.
func (t *Tokenizer) flushCarried() {
	if t.st >= stStr && t.st <= stStrHiEsc && t.str.sink == sinkText {
		t.textCopy(t.str.carry.Flush())
		t.textCopy(t.str.unfinishedEscape(t.st))
		t.flushText(false)
	}
	if t.cap.on {
		t.emitData(TokenRaw, t.cap.path, t.cap.idx, t.cap.carry.Flush())
	}
}

// report hands the shared Token to the Handler.
func (t *Tokenizer) report(kind TokenKind, path int32, idx int, typ Type, text []byte, code string, off int64) {
	t.tk = Token{Kind: kind, Path: int(path), Index: idx, Type: typ, Text: text, Code: code, Offset: off}
	t.h.HandleToken(&t.tk)
}

// emitData reports a non-empty delta.
func (t *Tokenizer) emitData(kind TokenKind, path int32, idx int, text []byte) {
	if len(text) > 0 {
		t.report(kind, path, idx, 0, text, "", 0)
	}
}

// violation reports a recoverable anomaly after flushing the pending
// deltas, so that it lands at the same place in the token sequence however
// the reply was split.
func (t *Tokenizer) violation(p []byte, i int, code string, detail []byte, off int64) {
	t.flushText(false)
	t.flushCapture(p, i, false)
	t.report(TokenViolation, -1, -1, 0, detail, code, off)
}

// invalid reports that the object broke at p[i] and stops tokenizing;
// the reply from p[i] on follows as TokenProse, in DocBare mode is the
// caller's.
func (t *Tokenizer) invalid(p []byte, i int, code, detail string, off int64) {
	t.flushText(false)
	t.flushCapture(p, i, false)
	t.st = stDead
	t.stopAt = i
	t.report(TokenInvalid, -1, -1, 0, detailBytes(detail), code, off)
}

// limit reports an exceeded limit at p[i] and stops tokenizing, as a
// broken object does: the reply is no longer the JSON it should be, and
// the model's text from there is prose (CONTRACT.md §7: only the limits
// that protect the memory of a stream may end it; these bound the
// tokenizer's own, which it no longer holds). A key too long is reported
// at its opening quote, and its text so far is the prose's start; other
// limits at p[i].
//
// Inside a raw capture (a watched value delivered as written, whose own
// keys are read too), the key's text so far went out with the capture:
// the prose starts at p[i] instead, so that no byte is delivered twice.
func (t *Tokenizer) limit(p []byte, i int, code, msg string) {
	t.flushText(false)
	key := t.inKey() && !t.cap.on
	t.flushCapture(p, i, false)
	t.st = stDead
	t.stopAt = i
	off := t.off(i)
	if key {
		off = t.keyOff
	}
	t.report(TokenLimit, -1, -1, 0, detailBytes(msg), code, off)
	if key {
		t.keyRaw = append(t.keyRaw, p[t.keyRawStart:i]...)
		t.emitData(TokenProse, -1, -1, t.keyRaw)
	}
}

// inKey reports whether the tokenizer is inside a key that it buffers
// (a key of a watched object).
func (t *Tokenizer) inKey() bool {
	return t.st >= stStr && t.st <= stStrHiEsc && t.str.key && t.str.sink == sinkKey
}

// off returns the reply offset of p[i].
func (t *Tokenizer) off(i int) int64 { return t.base + int64(i) }
