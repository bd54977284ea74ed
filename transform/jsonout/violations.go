package jsonout

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
)

// MaxListedViolations bounds the violations a ViolationList keeps, so that
// a reply that breaks its structure on every line costs bounded memory.
// Further violations are dropped from the list (the log still has them).
const MaxListedViolations = 100

// ViolationList collects the transform.KindViolation events of a stream as JSON
// objects {code, offset, detail} (CONTRACT.md §4), for the protocols that
// report them together before the end (gymbro completed.metadata, aisdk
// data-violations). It keeps at most MaxListedViolations of them. The zero
// value is an empty list.
type ViolationList struct {
	// objects holds the encoded objects, comma-separated: encoding them as
	// they come copies the events' borrowed Text.
	objects []byte
	n       int
}

// Note adds the violation ev to the list, unless it is full.
func (l *ViolationList) Note(ev transform.Event) {
	if l.n >= MaxListedViolations {
		return
	}
	if l.n > 0 {
		l.objects = append(l.objects, ',')
	}
	l.n++
	l.objects = append(l.objects, `{"code":`...)
	l.objects = AppendStringS(l.objects, ev.Code)
	l.objects = append(l.objects, `,"offset":`...)
	l.objects = strconv.AppendInt(l.objects, ev.Offset, 10)
	l.objects = append(l.objects, `,"detail":`...)
	l.objects = AppendString(l.objects, ev.Text)
	l.objects = append(l.objects, '}')
}

// Len returns the number of violations in the list.
func (l *ViolationList) Len() int { return l.n }

// AppendJSON appends the list as a JSON array, [] when it is empty.
func (l *ViolationList) AppendJSON(dst []byte) []byte {
	dst = append(dst, '[')
	dst = append(dst, l.objects...)
	return append(dst, ']')
}
