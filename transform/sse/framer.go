// Package sse decodes the Server-Sent Events stream of an upstream reply,
// incrementally: the first layer of the upstream decoding (PARSING.md §5.1).
// It knows nothing of what the events carry; transform/upstream decodes
// their data.
package sse

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/llmstream/llmstream/transform"
)

// ErrLineTooLong is returned, wrapped with the limit, when a line or the
// joined data of one event is longer than Framer.MaxLine. The caller ends
// the stream with transform.CodeSSELineTooLong.
var ErrLineTooLong = errors.New("sse: line too long")

// ErrTruncated is returned by Framer.Close when the body ended in the middle
// of a line, so that the caller can tell an upstream that broke off from one
// that merely omitted the last blank line.
var ErrTruncated = errors.New("sse: body ended mid-line")

// Event is one dispatched Server-Sent Event. Its slices are borrowed: they
// alias the fed bytes or the Framer's buffers and are valid only during the
// callback that receives the event.
type Event struct {
	// Name is the event: field, nil when the event has none (the WHATWG
	// default type "message").
	Name []byte
	// Data is the event's data: lines joined with "\n". An upstream's
	// "data: [DONE]" arrives as the Data "[DONE]", for the decoder to
	// recognise.
	Data []byte
	// ID is the last event ID: per the WHATWG rules it is set by an id:
	// field and kept for the events that follow. Nil when none was sent.
	ID []byte
}

// Where the data of the event being built lives, so that Feed can tell
// whether it must be secured before the bytes it aliases go away.
const (
	dataNone  = iota // no data: field yet
	dataInput        // aliases the bytes passed to the current Feed
	dataLine         // aliases f.line (a line that spanned Feeds)
	dataOwned        // held in f.data
)

// newline joins the data lines of one event.
var newline = []byte{'\n'}

// bom is the UTF-8 byte order mark that may open the stream.
const bom = "\xEF\xBB\xBF"

// Framer is an incremental Server-Sent Events decoder for an upstream body,
// following the WHATWG event-stream parsing rules: "\n", "\r\n" and "\r"
// line ends (also when a "\r\n" is cut between two Feeds), comment lines,
// the optional space after the colon, multi-line data joined with "\n",
// fields without a colon, one leading byte order mark, and events without
// data not dispatched.
//
// A Framer never holds more than MaxLine bytes per buffer. Lines that
// complete within one Feed are sliced from the input; only a line spanning
// Feeds, or the data of an event that spans Feeds or has several data
// lines, is copied, into buffers that are reused, so that a Framer in
// steady state does not allocate.
//
// The zero value is ready to use. A Framer is not safe for concurrent use.
type Framer struct {
	// MaxLine bounds one line, and the joined data of one event, in bytes.
	// Zero means transform.DefaultMaxSSELineBytes.
	MaxLine int

	line []byte // the start of a line cut at the end of a Feed
	data []byte // the event's data when dataOwned
	name []byte // the event's event: field
	id   []byte // the last event ID

	cur     []byte // the event's data (aliasing per src)
	src     int    // dataNone, dataInput, dataLine or dataOwned
	hasName bool
	hasID   bool
	skipLF  bool // the last Feed ended with "\r": a leading "\n" ends nothing
	bomSeen int  // bytes of a leading BOM matched so far
	started bool // past the point where a BOM may occur
	err     error
}

func (f *Framer) maxLine() int {
	if f.MaxLine > 0 {
		return f.MaxLine
	}
	return transform.DefaultMaxSSELineBytes
}

// Feed consumes the next body bytes and calls event for each event they
// complete. p is not retained. After an error (ErrLineTooLong) the Framer
// stays failed: Feed and Close return the same error until Reset.
func (f *Framer) Feed(p []byte, event func(Event)) error {
	if f.err != nil {
		return f.err
	}
	if !f.started {
		p = f.skipBOM(p)
	}
	if f.skipLF && len(p) > 0 {
		// A "\r" ended the previous Feed: with this "\n" it is one line end.
		f.skipLF = false
		if p[0] == '\n' {
			p = p[1:]
		}
	}
	limit := f.maxLine()
	// nl and cr cache the next line-end candidates so that each byte is
	// searched at most once for each, also in a "\r"-only stream.
	nl, cr := -1, -1
	i := 0
	for i < len(p) {
		if nl < i {
			nl = indexFrom(p, i, '\n')
		}
		if cr < i {
			cr = indexFrom(p, i, '\r')
		}
		end := min(nl, cr)
		if end == len(p) {
			break
		}
		line, src := p[i:end], dataInput
		if len(f.line) > 0 {
			if len(f.line)+len(line) > limit {
				return f.fail(fmt.Errorf("sse: line longer than %d bytes: %w", limit, ErrLineTooLong))
			}
			f.line = appendBounded(f.line, line, limit)
			line, src = f.line, dataLine
			f.line = f.line[:0]
		} else if len(line) > limit {
			return f.fail(fmt.Errorf("sse: line longer than %d bytes: %w", limit, ErrLineTooLong))
		}
		i = end + 1
		if p[end] == '\r' {
			if i < len(p) {
				if p[i] == '\n' {
					i++
				}
			} else {
				f.skipLF = true
			}
		}
		if err := f.processLine(line, src, limit, event); err != nil {
			return f.fail(err)
		}
	}
	// The event's data must outlive p, and f.line is about to be reused.
	f.secure()
	if i < len(p) {
		tail := p[i:]
		if len(f.line)+len(tail) > limit {
			return f.fail(fmt.Errorf("sse: line longer than %d bytes: %w", limit, ErrLineTooLong))
		}
		f.line = appendBounded(f.line, tail, limit)
	}
	return nil
}

// Close ends the body. It dispatches a pending event whose data lines were
// complete, leniently, for an upstream that omits the last blank line (the
// WHATWG rules would drop it). A line the body cut off is discarded and
// reported as ErrTruncated, after that event. Close returns the Framer's
// earlier error if it has one. Reset readies the Framer for a new body.
func (f *Framer) Close(event func(Event)) error {
	if f.err != nil {
		return f.err
	}
	cut := len(f.line) > 0 || (!f.started && f.bomSeen > 0)
	f.line = f.line[:0]
	f.dispatch(event)
	if cut {
		return f.fail(ErrTruncated)
	}
	return nil
}

// Reset forgets the body read so far, keeping the buffers for the next one.
func (f *Framer) Reset() {
	*f = Framer{
		MaxLine: f.MaxLine,
		line:    f.line[:0],
		data:    f.data[:0],
		name:    f.name[:0],
		id:      f.id[:0],
	}
}

func (f *Framer) fail(err error) error {
	f.err = err
	return err
}

// skipBOM drops one leading byte order mark, also when it is cut across
// Feeds. Bytes that began to match but turn out not to be one are the start
// of the first line.
func (f *Framer) skipBOM(p []byte) []byte {
	for len(p) > 0 {
		if p[0] != bom[f.bomSeen] {
			f.line = append(f.line, bom[:f.bomSeen]...)
			f.started = true
			return p
		}
		f.bomSeen++
		p = p[1:]
		if f.bomSeen == len(bom) {
			f.started = true
			return p
		}
	}
	return p
}

// processLine interprets one complete line (WHATWG "process the field").
func (f *Framer) processLine(line []byte, src, limit int, event func(Event)) error {
	if len(line) == 0 {
		f.dispatch(event)
		return nil
	}
	if line[0] == ':' {
		return nil // a comment, such as ": keep-alive"
	}
	field, value := line, line[len(line):]
	if c := bytes.IndexByte(line, ':'); c >= 0 {
		field, value = line[:c], line[c+1:]
		if len(value) > 0 && value[0] == ' ' {
			value = value[1:]
		}
	}
	switch string(field) {
	case "data":
		return f.appendData(value, src, limit)
	case "event":
		f.name = appendBounded(f.name[:0], value, limit)
		f.hasName = true
	case "id":
		if bytes.IndexByte(value, 0) < 0 {
			f.id = appendBounded(f.id[:0], value, limit)
			f.hasID = true
		}
	}
	// "retry" and unknown fields are ignored: the proxy never reconnects.
	return nil
}

// appendData adds one data line to the event: the first is only referenced,
// a second one joins them in f.data.
func (f *Framer) appendData(value []byte, src, limit int) error {
	if f.src == dataNone {
		f.cur, f.src = value, src
		return nil
	}
	if len(f.cur)+1+len(value) > limit {
		return fmt.Errorf("sse: event data longer than %d bytes: %w", limit, ErrLineTooLong)
	}
	if f.src != dataOwned {
		f.data = appendBounded(f.data[:0], f.cur, limit)
		f.src = dataOwned
	}
	f.data = appendBounded(f.data, newline, limit)
	f.data = appendBounded(f.data, value, limit)
	f.cur = f.data
	return nil
}

// secure makes the event's data independent of the current Feed's input and
// of f.line, which the next line reuses: the one copy an event pays for
// spanning Feeds.
func (f *Framer) secure() {
	if f.src == dataInput || f.src == dataLine {
		f.data = appendBounded(f.data[:0], f.cur, f.maxLine())
		f.cur, f.src = f.data, dataOwned
	}
}

// dispatch delivers the event built so far, if it has data, and starts the
// next one. The last event ID is kept (WHATWG).
func (f *Framer) dispatch(event func(Event)) {
	if f.src != dataNone {
		ev := Event{Data: f.cur}
		if f.hasName && len(f.name) > 0 {
			ev.Name = f.name
		}
		if f.hasID && len(f.id) > 0 {
			ev.ID = f.id
		}
		event(ev)
	}
	f.cur, f.src, f.hasName = nil, dataNone, false
}

// indexFrom returns the index of the first c in p at or after i, or len(p).
func indexFrom(p []byte, i int, c byte) int {
	if k := bytes.IndexByte(p[i:], c); k >= 0 {
		return i + k
	}
	return len(p)
}

// appendBounded appends src to dst, growing dst to at most limit bytes of
// capacity, so that a buffer never holds more memory than the limit allows.
// Callers check len(dst)+len(src) <= limit first.
func appendBounded(dst, src []byte, limit int) []byte {
	need := len(dst) + len(src)
	if need > cap(dst) {
		c := max(2*cap(dst), need, 64)
		c = min(c, max(limit, need))
		grown := make([]byte, len(dst), c)
		copy(grown, dst)
		dst = grown
	}
	return append(dst, src...)
}
