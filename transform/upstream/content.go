package upstream

import "github.com/llmstream/llmstream/transform/parsekit"

// A message's content is a string, or an array of typed parts (Mistral's
// Magistral models, and gateways that pass Anthropic-style blocks on):
//
//	[{"type":"thinking","thinking":[{"type":"text","text":"…"}]},{"type":"text","text":"…"}]
//
// Text parts (and parts without a type that have a text string) are
// content; thinking and reasoning parts are reasoning, their text being
// their "thinking" (a string, or an array of parts read the same way),
// "reasoning" or "text" member. A part of any other type is a violation
// (CodeUnknownContentPart), and its text, if it has one, is still
// delivered where the part stood, so that nothing the model wrote is lost
// (CONTRACT.md §7). The parts of each kind are joined in order.

// segment is one piece of a message's text, in order: a raw JSON string,
// or the raw JSON of a number or literal delivered as text.
type segment struct {
	raw       []byte
	reasoning bool
}

// maxDetail bounds a violation's Detail.
const maxDetail = 64

// content reads the value of a message's "content" member.
func (d *ChunkDecoder) content(msg *object) {
	switch msg.c.peek() {
	case '[':
		if parts, ok := msg.array(); ok {
			d.parts(&parts, false)
		}
	case '{':
		if part, ok := msg.object(); ok {
			d.part(&part, false)
		}
	default:
		d.scalar(msg.raw(), false)
	}
}

// parts reads an array of content parts; inside a thinking part
// (reasoning) every text is reasoning.
func (d *ChunkDecoder) parts(parts *array, reasoning bool) {
	for parts.next() {
		switch parts.c.peek() {
		case '{':
			if part, ok := parts.object(); ok {
				d.part(&part, reasoning)
			}
		default:
			d.scalar(parts.raw(), reasoning)
		}
	}
}

// scalar takes a content value or part that is not a typed part: a string
// is text; a number or literal is delivered as its JSON text, with a
// violation, since a server that sends one has mangled text; an object or
// array there is only reported; null is nothing.
func (d *ChunkDecoder) scalar(raw []byte, reasoning bool) {
	switch {
	case len(raw) == 0 || isNull(raw):
	case isString(raw):
		d.segs = append(d.segs, segment{raw: raw, reasoning: reasoning})
	case raw[0] == '{' || raw[0] == '[':
		d.violation(raw)
	default:
		d.violation(raw)
		d.segs = append(d.segs, segment{raw: raw, reasoning: reasoning})
	}
}

// part reads one typed content part. Its members come in any order, so
// they are found first and read after.
func (d *ChunkDecoder) part(obj *object, reasoning bool) {
	depth := obj.depth
	var typ, text, thinking, reasoningText []byte
	for key, ok := obj.next(); ok; key, ok = obj.next() {
		switch string(key) {
		case "type":
			typ = obj.raw()
		case "text":
			text = obj.raw()
		case "thinking":
			thinking = obj.raw()
		case "reasoning":
			reasoningText = obj.raw()
		}
	}
	if obj.c.bad {
		return
	}
	if isNull(typ) {
		typ = nil
	}
	kind := d.text(typ)
	switch {
	case string(kind) == "text" || (typ == nil && isString(text)):
		if isString(text) {
			d.segs = append(d.segs, segment{raw: text, reasoning: reasoning})
		} else if len(text) > 0 && !isNull(text) {
			d.violation(kind) // a text part whose text is not a string
		}
	case string(kind) == "thinking" || string(kind) == "reasoning":
		for _, raw := range [...][]byte{thinking, reasoningText, text} {
			if len(raw) > 0 && !isNull(raw) {
				d.thinking(raw, depth)
				break
			}
		}
	default:
		if isString(typ) {
			d.violation(kind)
		} else {
			d.violation(typ)
		}
		if isString(text) {
			d.segs = append(d.segs, segment{raw: text, reasoning: reasoning})
		}
	}
}

// thinking reads the text of a thinking part: a string, or an array of
// parts (Mistral's), walked again from its raw text, which the part's walk
// has already checked.
func (d *ChunkDecoder) thinking(raw []byte, depth int) {
	if raw[0] != '[' {
		d.scalar(raw, true)
		return
	}
	cur := cursor{data: raw}
	parts := cur.openArray(depth)
	d.parts(&parts, true)
}

// violation records an unknown part, its detail cut to maxDetail bytes on
// a UTF-8 boundary.
func (d *ChunkDecoder) violation(detail []byte) {
	c := &d.chunk
	if len(c.Violations) >= maxChunkViolations {
		return
	}
	if len(detail) > maxDetail {
		n := maxDetail
		for n > 0 && detail[n]&0xC0 == 0x80 {
			n--
		}
		detail = detail[:n]
	}
	c.Violations = append(c.Violations, Violation{Code: CodeUnknownContentPart, Detail: detail})
}

// join returns the text of the segments of one kind (content or
// reasoning), joined in order: a segment alone is read like any string
// (aliasing the input when it has no escape); several are unescaped one
// after the other into the scratch buffer.
func (d *ChunkDecoder) join(reasoning bool) []byte {
	var one []byte
	n := 0
	for _, s := range d.segs {
		if s.reasoning == reasoning {
			one = s.raw
			n++
		}
	}
	switch n {
	case 0:
		return nil
	case 1:
		return d.segmentText(one)
	}
	start := len(d.scratch)
	for _, s := range d.segs {
		switch {
		case s.reasoning != reasoning:
		case isString(s.raw):
			d.scratch = parsekit.AppendUnescaped(d.scratch, s.raw[1:len(s.raw)-1])
		default:
			d.scratch = append(d.scratch, s.raw...)
		}
	}
	return d.scratch[start:len(d.scratch):len(d.scratch)]
}

// segmentText returns the text of one segment.
func (d *ChunkDecoder) segmentText(raw []byte) []byte {
	if isString(raw) {
		return d.text(raw)
	}
	return raw
}
