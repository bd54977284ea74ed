package conversation

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// The roles of stored records (specs/002 §2.2 HistoryMessage.role).
const (
	RoleUser      = "user"
	RoleAssistant = "assistant"
	RoleTool      = "tool"
)

// Record is one stored message: a HistoryMessage of specs/002 §2.2 (ID,
// Role and Content are what init returns) and what llmstream keeps beside
// it to rebuild the upstream request.
type Record struct {
	// ID is the message id, unique in the conversation.
	ID string `json:"id"`
	// Role is RoleUser, RoleAssistant or RoleTool.
	Role string `json:"role"`
	// Content is the stored body in the format of specs/002 §4: a user's
	// message as its text, an assistant's reply as a "_pub_asst" JSON
	// object, a tool message as a "_pub_tool" JSON object.
	Content string `json:"content"`
	// Upstream is a user message's content as it was sent upstream, as raw
	// JSON, when that is not Content as a JSON string: the message with its
	// attachments (image_url parts, attachment lines). Empty otherwise.
	Upstream json.RawMessage `json:"upstream,omitempty"`
	// Time is when the record was made, in Unix milliseconds.
	Time int64 `json:"time,omitempty"`
}

// HistoryMessage is what init returns of a Record (specs/002 §2.2).
type HistoryMessage struct {
	ID      string `json:"id"`
	Role    string `json:"role"`
	Content string `json:"content"`
}

// History returns the HistoryMessages of recs, in order.
func History(recs []Record) []HistoryMessage {
	out := make([]HistoryMessage, len(recs))
	for i, r := range recs {
		out[i] = HistoryMessage{ID: r.ID, Role: r.Role, Content: r.Content}
	}
	return out
}

// ErrBadRecord is wrapped by the errors of DecodeRecord.
var ErrBadRecord = errors.New("conversation: malformed record")

// AppendRecord appends the JSON encoding of r, on one line without its
// newline. Text is not HTML-escaped: the stores are read by llmstream, and
// the component gets Content through encoding/json again.
func AppendRecord(dst []byte, r Record) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return dst, fmt.Errorf("conversation: encoding a record: %w", err)
	}
	return append(dst, bytes.TrimSuffix(buf.Bytes(), []byte("\n"))...), nil
}

// DecodeRecord decodes one record encoded by AppendRecord and checks it.
func DecodeRecord(b []byte) (Record, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return Record{}, fmt.Errorf("%w: %v", ErrBadRecord, err)
	}
	switch r.Role {
	case RoleUser, RoleAssistant, RoleTool:
	default:
		return Record{}, fmt.Errorf("%w: unknown role %q", ErrBadRecord, r.Role)
	}
	if r.ID == "" {
		return Record{}, fmt.Errorf("%w: no id", ErrBadRecord)
	}
	return r, nil
}
