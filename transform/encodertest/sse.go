package encodertest

import (
	"encoding/json"
	"fmt"
	"strings"
)

// SSEEvent is one event of an SSE stream.
type SSEEvent struct {
	// Name is the event: line's value, empty without one.
	Name string
	// Data is the data: line's value.
	Data string
	// Comment is set for a comment (": …"), which has no data.
	Comment bool
}

// ReadSSE splits out into events and checks the framing every protocol
// shares: events end with a blank line, and each has at most one event:
// line and exactly one data: line, or is a comment.
func ReadSSE(out []byte) ([]SSEEvent, error) {
	s := string(out)
	if s == "" {
		return nil, nil
	}
	if !strings.HasSuffix(s, "\n\n") {
		return nil, fmt.Errorf("stream does not end with a blank line: %q", tail(s))
	}
	var evs []SSEEvent
	for block := range strings.SplitSeq(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		var e SSEEvent
		datas := 0
		for line := range strings.SplitSeq(block, "\n") {
			switch {
			case strings.HasPrefix(line, ": "):
				e.Comment = true
			case strings.HasPrefix(line, "event: ") && e.Name == "" && datas == 0:
				e.Name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				e.Data = strings.TrimPrefix(line, "data: ")
				datas++
			default:
				return nil, fmt.Errorf("unexpected line %q in event %q", line, block)
			}
		}
		if e.Comment != (datas == 0) || datas > 1 || (e.Comment && e.Name != "") {
			return nil, fmt.Errorf("malformed event %q", block)
		}
		evs = append(evs, e)
	}
	return evs, nil
}

// DecodeData decodes the event's data as one JSON object.
func (e SSEEvent) DecodeData() (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(e.Data))
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("event %s: data is not a JSON object: %v: %s", e.Name, err, e.Data)
	}
	if dec.More() {
		return nil, fmt.Errorf("event %s: data holds more than one value: %s", e.Name, e.Data)
	}
	return m, nil
}

// tail returns the end of a long stream, for an error message.
func tail(s string) string {
	if len(s) > 80 {
		return s[len(s)-80:]
	}
	return s
}
