package conversation

import (
	"errors"
	"strconv"

	"github.com/tidwall/gjson"
)

// ErrNoUserMessage is the error of NewTurnMessage for a body whose last
// message is not the user's.
var ErrNoUserMessage = errors.New("conversation: the request's last message is not a user message")

// TurnMessage is the new user message of a shaped upstream request: where
// it sits in the body, and its content as sent.
type TurnMessage struct {
	start, end int
	// Content is the message's content as raw JSON: a string, or an array
	// of parts with the attachments.
	Content []byte
}

// FindTurnMessage finds the last element of body's "messages" array, the
// user message that request_format skillpet made of the client's message
// (after it, the shaper adds nothing). body is a shaped request, valid
// JSON.
func FindTurnMessage(body []byte) (TurnMessage, error) {
	n := gjson.GetBytes(body, "messages.#").Int()
	if n == 0 {
		return TurnMessage{}, ErrNoUserMessage
	}
	last := gjson.GetBytes(body, "messages."+strconv.FormatInt(n-1, 10))
	if last.Index <= 0 || last.Get("role").String() != RoleUser {
		return TurnMessage{}, ErrNoUserMessage
	}
	return TurnMessage{start: last.Index, end: last.Index + len(last.Raw), Content: []byte(last.Get("content").Raw)}, nil
}

// Record returns the user record of the message, with text as its
// Content: what the client sent as its message, which the component shows.
// The content sent upstream is kept too when it says more (attachments).
func (m TurnMessage) Record(id, text string, now int64) Record {
	r := Record{ID: id, Role: RoleUser, Content: text, Time: now}
	if gjson.ParseBytes(m.Content).Type != gjson.String || gjson.ParseBytes(m.Content).String() != text {
		r.Upstream = append(r.Upstream, m.Content...)
	}
	return r
}

// Replace returns body with the message replaced by messages, a fragment
// of array elements (Messages' output).
func (m TurnMessage) Replace(body, messages []byte) []byte {
	out := make([]byte, 0, len(body)-(m.end-m.start)+len(messages))
	out = append(out, body[:m.start]...)
	out = append(out, messages...)
	return append(out, body[m.end:]...)
}
