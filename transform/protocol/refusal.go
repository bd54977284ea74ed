package protocol

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"time"

	"github.com/tidwall/gjson"

	"github.com/llmstream/llmstream/transform"
)

// Refusal is how a request fails when the upstream's reply cannot be
// streamed to the client (CONTRACT §6): the code and message of the
// protocol's error event, and the HTTP status answered instead when the
// client's response has not begun (InStream is false).
type Refusal struct {
	Status  int
	Code    string
	Message string
}

// MsgBrokeOff is the message of an upstream body that failed mid-reply.
const MsgBrokeOff = "upstream: the connection broke off mid-reply"

// UpstreamRefusal answers an upstream's non-2xx status: a 502 naming the
// upstream's status and the message its body gave.
func UpstreamRefusal(status int, body []byte) Refusal {
	return Refusal{Status: http.StatusBadGateway, Code: transform.CodeProviderError, Message: UpstreamMessage(status, body)}
}

// CompressedRefusal answers a 2xx body compressed despite the request's
// Accept-Encoding: identity: there is no text to parse.
func CompressedRefusal(status int, contentEncoding string) Refusal {
	return Refusal{
		Status: http.StatusBadGateway,
		Code:   transform.CodeProviderError,
		Message: "upstream answered " + strconv.Itoa(status) + " with a compressed body (Content-Encoding: " +
			contentEncoding + ") despite Accept-Encoding: identity",
	}
}

// UnreachableRefusal answers a request the proxy could not deliver; status
// is the proxy's, 0 if it gave none. The proxy's own error names internal
// addresses and source lines, so the message is a plain one for the status
// (a 5xx; anything else is a 502), which it names.
func UnreachableRefusal(status int) Refusal {
	msg := "the upstream could not be reached"
	if status < 500 {
		status = http.StatusBadGateway
	}
	switch status {
	case http.StatusServiceUnavailable:
		msg = "no upstream is available"
	case http.StatusGatewayTimeout:
		msg = "the upstream did not answer in time"
	}
	return Refusal{Status: status, Code: transform.CodeProviderError, Message: msg + " (HTTP " + strconv.Itoa(status) + ")"}
}

// IdleRefusal answers an upstream silent for idle (idle_timeout): 504.
func IdleRefusal(idle time.Duration) Refusal {
	return Refusal{Status: http.StatusGatewayTimeout, Code: transform.CodeUpstreamTimeout, Message: "no upstream byte for " + idle.String()}
}

// BrokeOffRefusal answers an upstream body that broke off before a client
// that asked for one JSON body got it: 502.
func BrokeOffRefusal() Refusal {
	return Refusal{Status: http.StatusBadGateway, Code: transform.CodeUpstreamError, Message: MsgBrokeOff}
}

// InStream reports whether a refusal is the protocol's error event rather
// than an HTTP status with RefusalBody: once the client's response has
// begun (open), or when the client gets an event stream that the protocol
// opens before the upstream answers (EarlyStart, CONTRACT §6).
func (pr *Protocol) InStream(stream, open bool) bool {
	return open || stream && pr.EarlyStart
}

// PassesRefusal reports whether an upstream's non-2xx answer goes to the
// client as it is (PassRefusals, openai): only while the client's response
// has not begun.
func (pr *Protocol) PassesRefusal(open bool) bool {
	return pr.PassRefusals && !open
}

// AppendRefusal appends the JSON body of r answered with its status.
func (pr *Protocol) AppendRefusal(dst []byte, r Refusal) []byte {
	return pr.RefusalBody(dst, r.Code, r.Message)
}

// maxTextMessage bounds how much of a plain-text body a message quotes.
const maxTextMessage = 512

// UpstreamMessage finds the message in a refused upstream's body: an
// OpenAI-style {"error":{"message":…}}, {"error":"…"} or {"message":…}, or
// the start of the body as text.
func UpstreamMessage(status int, body []byte) string {
	prefix := "upstream answered " + strconv.Itoa(status)
	if t := http.StatusText(status); t != "" {
		prefix += " " + t
	}
	if msg := ErrorMessage(body); msg != "" {
		return prefix + ": " + msg
	}
	if mt, _, _ := mime.ParseMediaType(http.DetectContentType(body)); mt == "text/plain" && len(body) > 0 {
		return prefix + ": " + string(body[:min(len(body), maxTextMessage)])
	}
	return prefix
}

// ErrorMessage extracts the message of a JSON error body, "" if there is
// none.
func ErrorMessage(body []byte) string {
	if !json.Valid(body) { // non-recursive, unlike gjson.Valid
		return ""
	}
	for _, path := range []string{"error.message", "error", "message", "detail"} {
		if v := gjson.GetBytes(body, path); v.Type == gjson.String && v.Str != "" {
			return v.Str
		}
	}
	return ""
}
