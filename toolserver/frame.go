package toolserver

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strconv"
)

// What a server sends is bounded per message: a stdio line, an HTTP JSON
// body or an SSE event larger than the Set's message bound is never held
// whole. It is read through, skimmed for its JSON-RPC id, and replaced by
// a JSON-RPC error response to that id (codeTooLarge), so that the call
// waiting for it gets a clear error and the session goes on. An oversized
// message that is not a response (a notification, a request) is dropped.

// codeTooLarge is the JSON-RPC error code of a reply replaced because it
// was too large (the implementation-defined server error range, JSON-RPC
// 2.0 §5.1).
const codeTooLarge = -32099

// codeRejected is the code of the go-sdk's jsonrpc2.ErrRejected ("rejected
// by transport"), which its streamable-HTTP client wraps around a call
// whose request or response stream failed.
const codeRejected = -32005

// tooLargeMessage is the message of that error; Call recognises it.
const tooLargeMessage = "llmstream: the tool server's reply was larger than the limit and was dropped"

// tooLargeResponse returns the JSON-RPC error response that replaces an
// oversized reply to id (raw JSON), without a trailing newline.
func tooLargeResponse(id []byte) []byte {
	b := make([]byte, 0, 160)
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, id...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, codeTooLarge, 10)
	b = append(b, `,"message":`...)
	b = strconv.AppendQuote(b, tooLargeMessage)
	b = append(b, "}}"...)
	return b
}

// skimmer reads a JSON-RPC message as it streams past, keeping only what
// identifies it: its top-level "id" (raw, at most 128 bytes) and whether
// it has a "method". Memory is constant whatever the message's size.
type skimmer struct {
	depth      int
	inStr, esc bool
	keyPos     bool // at depth 1, the next string is a key
	inKey      bool
	key        []byte
	curKey     string
	capturing  bool // reading the value of "id"
	id         []byte
	method     bool
}

// feed reads the next bytes of the message.
func (s *skimmer) feed(b []byte) {
	for _, c := range b {
		if s.inStr {
			switch {
			case s.esc:
				s.esc = false
			case c == '\\':
				s.esc = true
			case c == '"':
				s.inStr = false
				if s.inKey {
					s.inKey = false
					s.curKey = string(s.key)
					continue
				}
			}
			if s.inKey && len(s.key) < 16 {
				s.key = append(s.key, c)
			}
			if s.capturing {
				s.appendID(c)
			}
			continue
		}
		switch c {
		case '"':
			s.inStr = true
			if s.depth == 1 && s.keyPos {
				s.inKey, s.keyPos = true, false
				s.key = s.key[:0]
			} else if s.capturing {
				s.appendID(c)
			}
		case '{', '[':
			if s.capturing { // an id is a string or a number
				s.capturing, s.id = false, nil
			}
			s.depth++
			s.keyPos = s.depth == 1 && c == '{'
		case '}', ']':
			s.depth--
			if s.depth < 1 {
				s.capturing = false
			}
		case ':':
			if s.depth == 1 {
				switch s.curKey {
				case "id":
					s.capturing, s.id = true, s.id[:0]
				case "method":
					s.method = true
				}
			}
		case ',':
			if s.depth == 1 {
				s.capturing, s.keyPos = false, true
			}
		case ' ', '\t', '\r', '\n':
		default:
			if s.capturing {
				s.appendID(c)
			}
		}
	}
}

func (s *skimmer) appendID(c byte) {
	if len(s.id) < 128 {
		s.id = append(s.id, c)
	}
}

// replacement returns the error response that replaces the skimmed
// message, or nil when it must be dropped (not a response, or no id).
func (s *skimmer) replacement() []byte {
	if s.method || len(s.id) == 0 || len(s.id) >= 128 || !json.Valid(s.id) || string(s.id) == "null" {
		return nil
	}
	return tooLargeResponse(s.id)
}

// lineFrames is the stdout of a stdio server, as the SDK's IOTransport
// reads it: one JSON-RPC message a line. A line longer than max is
// replaced (see skimmer); a line that is not JSON (a server that logs to
// stdout) is dropped instead of breaking the session, and a line that
// starts as a message but is not valid JSON ends the session (Read fails);
// onDrop is told of each, with the line's size only (never its content:
// it may be a result).
type lineFrames struct {
	src    *bufio.Reader
	closer io.Closer
	max    int
	onDrop func(what string, n int)
	line   []byte
	out    []byte
	err    error
}

// newLineFrames reads r, which Close closes.
func newLineFrames(r io.ReadCloser, max int, onDrop func(string, int)) *lineFrames {
	return &lineFrames{src: bufio.NewReaderSize(r, 64<<10), closer: r, max: max, onDrop: onDrop}
}

// Read implements io.Reader.
func (f *lineFrames) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// Close closes the underlying reader.
func (f *lineFrames) Close() error { return f.closer.Close() }

// keepBuffer is the largest buffer a frame reader keeps between
// messages: after a large one, the memory goes back.
const keepBuffer = 256 << 10

// next reads one line into out (or sets err).
func (f *lineFrames) next() {
	f.line = reuse(f.line)
	for {
		chunk, err := f.src.ReadSlice('\n')
		if len(f.line)+len(chunk) > f.max {
			f.skipLong(chunk, err)
			return
		}
		f.line = append(f.line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			f.err = err
			if len(f.line) == 0 {
				return
			}
			f.line = append(f.line, '\n')
		}
		break
	}
	t := bytes.TrimSpace(f.line)
	switch {
	case len(t) == 0:
	case t[0] != '{' && t[0] != '[':
		f.onDrop("a line that is not JSON", len(f.line))
	case !json.Valid(t):
		// A message that breaks: the session cannot go on (the SDK's
		// decoder would read the next line as its continuation).
		f.onDrop("a message that is not valid JSON", len(f.line))
		f.err = errBrokenMessage
	default:
		f.out = f.line
	}
}

// errBrokenMessage ends a stdio session whose server wrote a line that
// starts as a JSON message and is not one: the server is restarted.
var errBrokenMessage = errors.New("the tool server wrote a line that is not valid JSON")

// skipLong reads the rest of an oversized line through a skimmer.
func (f *lineFrames) skipLong(chunk []byte, err error) {
	var s skimmer
	s.feed(f.line)
	n := len(f.line) + len(chunk)
	s.feed(chunk)
	for errors.Is(err, bufio.ErrBufferFull) {
		chunk, err = f.src.ReadSlice('\n')
		n += len(chunk)
		s.feed(chunk)
	}
	if err != nil {
		f.err = err
	}
	f.onDrop("a message larger than the limit", n)
	if r := s.replacement(); r != nil {
		f.line = append(append(f.line[:0], r...), '\n')
		f.out = f.line
	}
}

// sseFrames is the body of a streamable-HTTP server's text/event-stream
// response: events pass through whole, and an event whose data is longer
// than max is replaced by an event carrying the error response (see
// skimmer), keeping its id line for resumption.
type sseFrames struct {
	src    *bufio.Reader
	closer io.Closer
	max    int
	onDrop func(string, int)
	event  []byte
	out    []byte
	err    error
}

func newSSEFrames(r io.ReadCloser, max int, onDrop func(string, int)) *sseFrames {
	return &sseFrames{src: bufio.NewReaderSize(r, 64<<10), closer: r, max: max, onDrop: onDrop}
}

// Read implements io.Reader.
func (f *sseFrames) Read(p []byte) (int, error) {
	for len(f.out) == 0 {
		if f.err != nil {
			return 0, f.err
		}
		f.next()
	}
	n := copy(p, f.out)
	f.out = f.out[n:]
	return n, nil
}

// Close closes the body.
func (f *sseFrames) Close() error { return f.closer.Close() }

// next reads one event (up to and including its blank line) into out.
func (f *sseFrames) next() {
	f.event = reuse(f.event)
	var (
		s         skimmer
		idLine    []byte
		over      bool
		isData    bool
		lineStart = true
		n         int
	)
	for {
		chunk, err := f.src.ReadSlice('\n')
		n += len(chunk)
		complete := !errors.Is(err, bufio.ErrBufferFull)
		blank := lineStart && complete && len(chunk) > 0 && len(bytes.TrimRight(chunk, "\r\n")) == 0
		switch {
		case !over:
			f.event = append(f.event, chunk...)
			if len(f.event) <= f.max {
				break
			}
			// Over the limit: skim what is held, and the rest as it comes.
			over = true
			lines := bytes.SplitAfter(f.event, []byte("\n"))
			for _, l := range lines {
				if bytes.HasPrefix(l, []byte("data:")) {
					s.feed(l[5:])
				} else if bytes.HasPrefix(l, []byte("id:")) && bytes.HasSuffix(l, []byte("\n")) && len(l) < 256 {
					idLine = append(idLine[:0], l...)
				}
			}
			isData = bytes.HasPrefix(lines[len(lines)-1], []byte("data:"))
			f.event = f.event[:0]
		case lineStart:
			isData = bytes.HasPrefix(chunk, []byte("data:"))
			if isData {
				s.feed(chunk[5:])
			} else if bytes.HasPrefix(chunk, []byte("id:")) && complete && len(chunk) < 256 {
				idLine = append(idLine[:0], chunk...)
			}
		case isData:
			s.feed(chunk)
		}
		if err != nil && complete {
			f.err = err
			if !over {
				f.out = f.event
			}
			return
		}
		lineStart = complete
		if blank {
			break
		}
	}
	if !over {
		f.out = f.event
		return
	}
	f.onDrop("an event larger than the limit", n)
	if r := s.replacement(); r != nil {
		f.event = append(append(append(f.event[:0], idLine...), "data: "...), r...)
		f.event = append(f.event, "\n\n"...)
		f.out = f.event
	}
}

// reuse empties b for the next message, or drops it when it grew large.
func reuse(b []byte) []byte {
	if cap(b) > keepBuffer {
		return nil
	}
	return b[:0]
}
