package responses

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Stored is a response as a store keeps it (CONTRACT.md §14): enough to
// answer GET /v1/responses/{id} and to continue from it with
// previous_response_id (Open Responses: the previous response's input and
// output precede the new input).
type Stored struct {
	// V is the record's format version (1).
	V int `json:"v"`
	// ID is the response's id.
	ID string `json:"id"`
	// Prev is the previous_response_id it continued, "" for none: the
	// chain goes on there.
	Prev string `json:"prev,omitempty"`
	// Input is the request's own input items (Prepared.Own): compaction
	// items as the client sent them, sealed.
	Input []json.RawMessage `json:"input"`
	// Response is the Response object the terminal event carried.
	Response json.RawMessage `json:"response"`
}

// storedVersion is the record format this llmstream writes and reads.
const storedVersion = 1

// ErrBadStored is wrapped by the errors of DecodeStored.
var ErrBadStored = errors.New("responses: malformed stored response")

// EncodeStored returns the store's bytes for s.
func EncodeStored(s Stored) ([]byte, error) {
	s.V = storedVersion
	out, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("responses: encoding a stored response: %w", err)
	}
	return out, nil
}

// DecodeStored reads a record EncodeStored wrote, and checks what the
// chain and GET rely on: the version, an id, input items that are objects,
// and a Response object with an output array. It never panics, whatever
// the store returned.
func DecodeStored(b []byte) (Stored, error) {
	var s Stored
	if err := json.Unmarshal(b, &s); err != nil {
		return Stored{}, fmt.Errorf("%w: %v", ErrBadStored, err)
	}
	if s.V != storedVersion || !strings.HasPrefix(s.ID, "resp_") || kindOf(s.Response) != '{' {
		return Stored{}, fmt.Errorf("%w: version %d, id %q", ErrBadStored, s.V, printable(s.ID))
	}
	for _, it := range s.Input {
		if kindOf(it) != '{' {
			return Stored{}, fmt.Errorf("%w: an input item is not an object", ErrBadStored)
		}
	}
	if _, err := s.Output(); err != nil {
		return Stored{}, err
	}
	return s, nil
}

// Output returns the output items of the stored Response.
func (s *Stored) Output() ([]json.RawMessage, error) {
	var r struct {
		Output []json.RawMessage `json:"output"`
	}
	if err := json.Unmarshal(s.Response, &r); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadStored, err)
	}
	for _, it := range r.Output {
		if kindOf(it) != '{' {
			return nil, fmt.Errorf("%w: an output item is not an object", ErrBadStored)
		}
	}
	return r.Output, nil
}

// Chain gathers the items of a previous_response_id chain, newest response
// first, within a history budget: the newest response is always taken
// whole; older ones while the items and their bytes fit the budget
// (MaxItems, MaxBytes; 0: no bound). A response is taken whole or not at all, and what is
// left out is the oldest, as the conversation store does (CONTRACT.md §9).
type Chain struct {
	// MaxItems and MaxBytes bound what is sent: input and output items,
	// and their JSON bytes.
	MaxItems, MaxBytes int
	parts              [][]json.RawMessage
	n, size            int
	full               bool
}

// Add offers the next older response of the chain. It reports whether the
// chain can take more: false once the budget is full (s is then left out,
// unless it is the first).
func (c *Chain) Add(s Stored) bool {
	if c.full {
		return false
	}
	out, err := s.Output()
	if err != nil {
		out = nil
	}
	part := make([]json.RawMessage, 0, len(s.Input)+len(out))
	part = append(append(part, s.Input...), out...)
	size := 0
	for _, it := range part {
		size += len(it)
	}
	if len(c.parts) > 0 && (c.MaxItems > 0 && c.n+len(part) > c.MaxItems || c.MaxBytes > 0 && c.size+size > c.MaxBytes) {
		c.full = true
		return false
	}
	c.parts = append(c.parts, part)
	c.n += len(part)
	c.size += size
	return true
}

// Items returns the chain's items, oldest first. A tool output whose call
// was left out with an older response is left out too, so that the
// upstream request stays valid for strict servers.
func (c *Chain) Items() []json.RawMessage {
	out := make([]json.RawMessage, 0, c.n)
	for i := len(c.parts) - 1; i >= 0; i-- {
		out = append(out, c.parts[i]...)
	}
	if !c.full {
		return out
	}
	for len(out) > 0 && itemType(out[0]) == "function_call_output" {
		out = out[1:]
	}
	return out
}

// TrimItems fits a conversation's items (oldest first) to a history
// budget (maxItems items, maxBytes bytes of item JSON; 0: no bound) by
// leaving out the oldest, then whatever would start the rest without its
// context: items before the first message, so that no tool output is left
// without its call. The newest message and what follows it are kept
// whatever their size.
func TrimItems(items []json.RawMessage, maxItems, maxBytes int) []json.RawMessage {
	size := 0
	for _, it := range items {
		size += len(it)
	}
	start := 0
	for start < len(items) && (maxItems > 0 && len(items)-start > maxItems || maxBytes > 0 && size > maxBytes) {
		size -= len(items[start])
		start++
	}
	if start == 0 {
		return items
	}
	for start < len(items) && itemType(items[start]) != "message" && !hasRole(items[start]) {
		start++
	}
	if start == len(items) {
		// Nothing but tool traffic fits: keep from the last message on.
		for start = len(items) - 1; start > 0 && itemType(items[start]) != "message" && !hasRole(items[start]); start-- {
		}
	}
	return items[start:]
}

// hasRole reports whether an item is a message written as {role, content}
// without a type.
func hasRole(raw json.RawMessage) bool {
	var it struct {
		Type string          `json:"type"`
		Role json.RawMessage `json:"role"`
	}
	return json.Unmarshal(raw, &it) == nil && it.Type == "" && it.Role != nil
}
