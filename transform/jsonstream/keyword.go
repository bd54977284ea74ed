package jsonstream

// MaxKeywordBytes bounds a Keyword: longer than every keyword a format
// knows (jsonl's event names, aiplan's response modes, final_result's
// statuses), short enough to keep in a fixed array.
const MaxKeywordBytes = 32

// Keyword collects a watched string value that names one of a few known
// words (jsonl's "event", aiplan's "response_mode", final_result's
// "status") from its TokenText pieces, without allocating.
//
// A value longer than MaxKeywordBytes is no keyword and is dropped whole:
// keeping the pieces that fitted would make what is kept, which violations
// quote, depend on where the reply was cut.
type Keyword struct {
	buf  [MaxKeywordBytes]byte
	n    int
	long bool
}

// Reset empties k for a new value.
func (k *Keyword) Reset() { k.n, k.long = 0, false }

// Append adds a piece of the value.
func (k *Keyword) Append(text []byte) {
	if k.long {
		return
	}
	if k.n+len(text) > len(k.buf) {
		k.n, k.long = 0, true
		return
	}
	k.n += copy(k.buf[k.n:], text)
}

// Bytes returns the value, empty when it was too long. It aliases k and is
// valid until the next Append or Reset.
func (k *Keyword) Bytes() []byte { return k.buf[:k.n] }

// TooLong reports whether the value outgrew MaxKeywordBytes.
func (k *Keyword) TooLong() bool { return k.long }
