package jsonformat

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonstream"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// Format is what a JSON format adds to Base: what its fields mean. Base
// calls it while a Feed or Close is under way, so that its methods may
// emit, and never after a fatal error.
//
// Formats implement it on an unexported type (type fields Parser) and pass
// a pointer, so that the hooks stay out of the Parser's API.
type Format interface {
	// FieldStart handles the start of a field's value (TokenStart): its
	// Type and Offset are known.
	FieldStart(id int, tk *jsonstream.Token)
	// FieldText handles a piece of a field's value: decoded string content
	// (TokenText), or the raw JSON text of a Raw field (TokenRaw). text is
	// borrowed.
	FieldText(id int, text []byte)
	// FieldEnd handles the end of a field's value (TokenEnd), with the
	// complete text of a number or literal.
	FieldEnd(id int, tk *jsonstream.Token)
	// Broken handles a TokenInvalid or a TokenLimit: the reply is not, or
	// stopped being, the JSON it should be (it broke, or outgrew max_key or
	// max_depth). It is not fatal; the format reports it with its own code
	// and settles what the broken reply leaves open. The reply from
	// tk.Offset on follows as answer text (CONTRACT.md §7: nothing the
	// model wrote vanishes), except in jsonl, whose lines are the format's.
	Broken(tk *jsonstream.Token)
	// Finish handles the end of a reply that did not fail, once the
	// tokenizer has reported how it ended: the format reports what the
	// reply lacked and sends what waited for its end. Base then closes the
	// sections still open.
	Finish()
}

// Input is implemented by a Format whose reply is not one JSON document
// and which hands the tokenizer its parts itself (jsonl: one object per
// line, prose between them), with FeedTokens and CloseTokens. Base calls
// FeedInput and CloseInput where it would feed and close the tokenizer.
type Input interface {
	// FeedInput reads the next bytes of the reply.
	FeedInput(p []byte)
	// CloseInput ends the reply's input.
	CloseInput()
}

// Base is the part every JSON format parser shares (see the package
// comment). A parser embeds it, calls Init from its constructor, and gets
// Feed, Close and Reset, which implement transform.Parser; a parser with
// state of its own wraps Reset. Base's other methods are for that parser,
// while a Feed or Close is under way.
type Base struct {
	tok    jsonstream.Tokenizer
	ids    []int // Fields.ids: the Field ID of each path index
	format Format
	input  Input // nil: the whole reply goes to the tokenizer

	emit   transform.Emit
	raw    parsekit.RawEcho
	off    int64 // reply offset of the current Feed's first byte
	failed bool  // a fatal error was reported: input is ignored
	lim    transform.Limits

	// in is what the tokenizer is reading, inOff its reply offset and
	// inN how much of it it consumed, for the record.
	in    []byte
	inOff int64
	rec   record
	// text says the reply held a byte that is not blank; native that the
	// upstream's own tool calls carried it (NoteNativeCalls).
	text, native bool

	sections
}

// record is the text of the reply that a format holds from a value's
// start on (Base.Record), bounded by MaxBlockBytes.
type record struct {
	on   bool
	from int64 // reply offset of the first byte held
	buf  []byte
	over bool // the text outgrew MaxBlockBytes and was dropped
}

// Init readies b for the replies of format f, whose fields are fs, read in
// document mode doc under limits lim. It allocates the tokenizer's buffers
// once; Reset reuses them.
func (b *Base) Init(f Format, fs *Fields, doc jsonstream.DocMode, lim transform.Limits) {
	b.format, b.ids = f, fs.ids
	b.input, _ = f.(Input)
	b.lim = lim.WithDefaults()
	b.tok.Init(jsonstream.Config{Paths: fs.paths, Limits: lim, Doc: doc})
	b.Reset()
}

// Reset readies b for a new reply.
func (b *Base) Reset() {
	b.tok.Reset()
	b.raw.Reset()
	b.emit, b.off, b.failed = nil, 0, false
	b.in, b.inOff = nil, 0
	b.rec = record{buf: b.rec.buf[:0]}
	b.sections = sections{}
	b.text, b.native = false, false
}

// NoteNativeCalls says that the upstream's own tool calls carried the
// reply (transform.NativeCallsNoter): a reply with no text is then not a
// broken document, and the format reports nothing of it.
func (b *Base) NoteNativeCalls() { b.native = true }

// Feed consumes the next bytes of the reply: it echoes them raw and reads
// them.
func (b *Base) Feed(p []byte, emit transform.Emit) {
	if b.failed {
		return
	}
	b.emit = emit
	b.raw.Feed(p, emit)
	if !b.text {
		for _, c := range p {
			if !isBlank(c) {
				b.text = true
				break
			}
		}
	}
	if b.input != nil {
		b.input.FeedInput(p)
	} else {
		b.FeedTokens(p)
	}
	b.off += int64(len(p))
	b.emit = nil
}

// Close ends the reply: the tokenizer reports a reply cut off inside its
// JSON (unterminated_json, JO26) or holding none, the format finishes, and
// every section still open is closed.
func (b *Base) Close(emit transform.Emit) {
	if b.failed {
		return
	}
	b.emit = emit
	defer func() { b.emit = nil }()
	b.raw.Close(emit)
	if b.native && !b.text {
		b.CloseSections()
		return
	}
	if b.input != nil {
		b.input.CloseInput()
	} else {
		b.tok.Close((*tokens)(b))
	}
	if b.failed {
		return
	}
	b.format.Finish()
	if !b.failed {
		b.CloseSections()
	}
}

// Tokenizer returns the tokenizer, for an Input format that restarts it
// for each of its documents (ResetAt) and asks where it stopped.
func (b *Base) Tokenizer() *jsonstream.Tokenizer { return &b.tok }

// FeedTokens hands p to the tokenizer, for an Input format, and returns
// how much of p it consumed (jsonstream.Tokenizer.Feed).
func (b *Base) FeedTokens(p []byte) int {
	b.in, b.inOff = p, b.tok.Offset()
	n := b.tok.Feed(p, (*tokens)(b))
	b.keep(p[:n])
	b.in = nil
	return n
}

// Record starts holding the reply's text from off on, the Offset of a
// TokenStart being handled, until Recorded or StopRecording: a format
// holds the text of a value that it may have to deliver as it was
// written, such as an aiplan tool call that turns out to be no call.
// One value at a time is recorded; MaxBlockBytes bounds it.
func (b *Base) Record(off int64) {
	b.rec = record{on: true, from: off, buf: b.rec.buf[:0]}
}

// StopRecording drops the text held since Record.
func (b *Base) StopRecording() { b.rec.on = false }

// Recording reports whether text is held since Record.
func (b *Base) Recording() bool { return b.rec.on }

// Recorded returns the reply's text from the Record offset through end,
// inclusive (a TokenEnd's Offset, or the byte before a TokenInvalid's),
// and stops recording. ok is false when the text is longer than
// MaxBlockBytes: it was not kept. The text is borrowed until the next
// Feed or Close.
func (b *Base) Recorded(end int64) (text []byte, ok bool) {
	r := &b.rec
	r.on = false
	n := end - r.from + 1
	switch {
	case r.over || n > int64(b.lim.MaxBlockBytes):
		return nil, false
	case n <= 0:
		return nil, true
	}
	if need := n - int64(len(r.buf)); need > 0 {
		// The rest is in the input being read.
		start := min(max(r.from-b.inOff, 0), int64(len(b.in)))
		r.buf = append(r.buf, b.in[start:min(start+need, int64(len(b.in)))]...)
	}
	return r.buf[:min(n, int64(len(r.buf)))], true
}

// keep adds the part of the input read, consumed, that the record holds.
// A record that outgrows MaxBlockBytes is dropped, not failed: where it
// outgrows it depends on how the reply was cut, and Recorded reports it
// where the value ends.
func (b *Base) keep(consumed []byte) {
	r := &b.rec
	if !r.on || r.over {
		return
	}
	part := consumed[min(max(r.from-b.inOff, 0), int64(len(consumed))):]
	if len(r.buf)+len(part) > b.lim.MaxBlockBytes {
		r.over, r.buf = true, r.buf[:0]
		return
	}
	r.buf = append(r.buf, part...)
}

// CloseTokens ends the tokenizer's input, for an Input format.
func (b *Base) CloseTokens() { b.tok.Close((*tokens)(b)) }

// Offset returns the reply offset of the first byte of the Feed under way,
// or of the reply's end during Close.
func (b *Base) Offset() int64 { return b.off }

// Failed reports whether a fatal error ended the stream.
func (b *Base) Failed() bool { return b.failed }

// Emit emits ev.
func (b *Base) Emit(ev transform.Event) { b.emit(ev) }

// Violation emits a KindViolation.
func (b *Base) Violation(code string, text []byte, off int64) {
	b.emit(transform.Event{Kind: transform.KindViolation, Code: code, Text: text, Offset: off})
}

// Fail ends the stream with a fatal error (transform.KindError), after
// closing the sections that are open, and ignores the rest of the input.
// What the format tracks itself, such as a tool call whose arguments the
// error cut off, is the format's to close first or to leave open.
func (b *Base) Fail(code, msg string) {
	b.CloseSections()
	b.emit(transform.Event{Kind: transform.KindError, Code: code, Text: []byte(msg)})
	b.failed = true
}

// tokens receives the tokenizer's reports for Base.
type tokens Base

// HandleToken hands a field's tokens to the format and handles the others
// as every JSON format does.
func (t *tokens) HandleToken(tk *jsonstream.Token) {
	b := (*Base)(t)
	if b.failed {
		return
	}
	switch tk.Kind {
	case jsonstream.TokenText, jsonstream.TokenRaw:
		b.format.FieldText(b.ids[tk.Path], tk.Text)
	case jsonstream.TokenStart:
		b.format.FieldStart(b.ids[tk.Path], tk)
	case jsonstream.TokenEnd:
		b.format.FieldEnd(b.ids[tk.Path], tk)
	case jsonstream.TokenViolation:
		if tk.Code == jsonstream.CodeLeadingText {
			// The prose before the object was the answer's text; the
			// object's fields come in their own sections.
			b.CloseAnswer()
		}
		b.Violation(tk.Code, tk.Text, tk.Offset)
	case jsonstream.TokenInvalid, jsonstream.TokenLimit:
		b.format.Broken(tk)
	case jsonstream.TokenProse:
		// Text of the reply that is not its JSON: the model's text is the
		// answer (CONTRACT.md §7: nothing the model wrote vanishes).
		b.proseText(tk.Text)
	}
}
