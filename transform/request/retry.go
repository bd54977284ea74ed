package request

import (
	"github.com/llmstream/llmstream/transform/chatmsg"
)

// RetryTurn is a reply that failed validation and the correction that
// follows it, appended to the request for the retry (specs/004 §7.3.2:
// the same request, the same tools, the failed turn's history kept, so
// that the model sees what it did and why it was refused).
type RetryTurn struct {
	// Content is the reply's text as the model wrote it (the content
	// deltas, not the reasoning, which chat-completions requests do not
	// carry back). Empty with Calls: the message's content is null.
	Content []byte
	// Calls are the reply's native tool calls. None of them ran: the
	// client never saw them. Each is answered by a tool message (strict
	// OpenAI-compatible servers refuse a call left unanswered) whose
	// content is its Result.
	Calls []RetryCall
	// Correction is the user message after the turn, naming the broken
	// rule; "" for none (the tool messages then carry the correction).
	Correction string
}

// RetryCall is one native tool call of a failed reply.
type RetryCall struct {
	// ID, Name and Arguments are the call as the model made it (ID as the
	// client would have seen it); Arguments is raw JSON text.
	ID, Name  string
	Arguments []byte
	// Result is the tool message's content: why the call was refused, or
	// that it did not run.
	Result string
}

// AppendRetry appends to dst the request body for a retry: body, a
// chat-completions request (the one sent for the failed attempt), with
// turn's messages appended to its "messages" array. Every other byte of
// body is copied as it is, in place: the retry is the same request with
// the failed turn added (the contract of specs/004 §7.3.2, which the tests
// check byte for byte).
func AppendRetry(dst, body []byte, turn RetryTurn) ([]byte, error) {
	return AppendMessages(dst, body, appendTurn(nil, turn))
}

// appendTurn appends the turn's messages, comma-separated.
func appendTurn(dst []byte, t RetryTurn) []byte {
	calls := make([]chatmsg.ToolCall, len(t.Calls))
	for i, c := range t.Calls {
		calls[i] = chatmsg.ToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)}
	}
	dst = chatmsg.AppendAssistant(dst, string(t.Content), calls)
	for _, c := range t.Calls {
		dst = append(dst, ',')
		dst = chatmsg.AppendTool(dst, c.ID, c.Result)
	}
	if t.Correction != "" {
		dst = append(dst, ',')
		dst = chatmsg.AppendUser(dst, t.Correction)
	}
	return dst
}
