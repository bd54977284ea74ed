package skillpet

import "github.com/llmstream/llmstream/transform/jsonout"

// AppendChatFailed appends the JSON body of a request that failed before
// the stream started, {"error": "CHAT_FAILED", "message": …} (specs/002
// §2.3 错误响应), for the Caddy layer to send with the refusal's status
// (CONTRACT.md §6: 502, or 504 for a timeout) and Content-Type
// application/json instead of an SSE stream. Once the stream
// has started, failures are the Encoder's error event.
func AppendChatFailed(dst []byte, message string) []byte {
	dst = append(dst, `{"error":"CHAT_FAILED","message":`...)
	dst = jsonout.AppendStringS(dst, message)
	return append(dst, "}\n"...)
}
