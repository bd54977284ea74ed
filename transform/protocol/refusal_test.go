package protocol

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
)

func TestUpstreamMessage(t *testing.T) {
	long := strings.Repeat("x", 600)
	tests := []struct {
		name   string
		status int
		body   string
		want   string
	}{
		{"openai_error", 429, `{"error":{"message":"Rate limit reached","type":"requests","code":"rate_limit_exceeded"}}`,
			"upstream answered 429 Too Many Requests: Rate limit reached"},
		{"error_string", 400, `{"error":"bad model"}`, "upstream answered 400 Bad Request: bad model"},
		{"message", 500, `{"message":"kaboom"}`, "upstream answered 500 Internal Server Error: kaboom"},
		{"detail", 422, `{"detail":"messages: field required"}`, "upstream answered 422 Unprocessable Entity: messages: field required"},
		{"error_message_first", 500, `{"message":"outer","error":{"message":"inner"}}`, "upstream answered 500 Internal Server Error: inner"},
		{"empty_message_skipped", 500, `{"error":{"message":""},"message":"fallback"}`, "upstream answered 500 Internal Server Error: fallback"},
		{"non_string_message", 500, `{"error":{"message":42}}`, "upstream answered 500 Internal Server Error: {\"error\":{\"message\":42}}"},
		{"json_without_message", 503, `{"status":"down"}`, `upstream answered 503 Service Unavailable: {"status":"down"}`},
		{"text", 502, "bad gateway from nginx", "upstream answered 502 Bad Gateway: bad gateway from nginx"},
		{"text_bounded", 500, long, "upstream answered 500 Internal Server Error: " + long[:maxTextMessage]},
		{"cut_json_as_text", 503, `{"error":{"message":"overloaded, try`, `upstream answered 503 Service Unavailable: {"error":{"message":"overloaded, try`},
		{"html_left_out", 502, "<html><body>Bad Gateway</body></html>", "upstream answered 502 Bad Gateway"},
		{"binary_left_out", 500, "\x1f\x8b\x08\x00\x00", "upstream answered 500 Internal Server Error"},
		{"empty", 503, "", "upstream answered 503 Service Unavailable"},
		{"unknown_status", 599, "", "upstream answered 599"},
		{"deep_json", 500, strings.Repeat("[", 100000), "upstream answered 500 Internal Server Error: " + strings.Repeat("[", maxTextMessage)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := UpstreamMessage(tt.status, []byte(tt.body)); got != tt.want {
				t.Errorf("UpstreamMessage(%d, %.40q) = %q, want %q", tt.status, tt.body, got, tt.want)
			}
		})
	}
}

func TestRefusals(t *testing.T) {
	tests := []struct {
		name string
		got  Refusal
		want Refusal
	}{
		{"upstream", UpstreamRefusal(429, []byte(`{"error":"slow down"}`)),
			Refusal{http.StatusBadGateway, transform.CodeProviderError, "upstream answered 429 Too Many Requests: slow down"}},
		{"compressed", CompressedRefusal(200, "gzip"),
			Refusal{http.StatusBadGateway, transform.CodeProviderError, "upstream answered 200 with a compressed body (Content-Encoding: gzip) despite Accept-Encoding: identity"}},
		{"unreachable", UnreachableRefusal(http.StatusBadGateway),
			Refusal{http.StatusBadGateway, transform.CodeProviderError, "the upstream could not be reached (HTTP 502)"}},
		{"unreachable_no_status", UnreachableRefusal(0),
			Refusal{http.StatusBadGateway, transform.CodeProviderError, "the upstream could not be reached (HTTP 502)"}},
		{"unreachable_4xx_is_502", UnreachableRefusal(http.StatusNotFound),
			Refusal{http.StatusBadGateway, transform.CodeProviderError, "the upstream could not be reached (HTTP 502)"}},
		{"no_upstream", UnreachableRefusal(http.StatusServiceUnavailable),
			Refusal{http.StatusServiceUnavailable, transform.CodeProviderError, "no upstream is available (HTTP 503)"}},
		{"dial_timeout", UnreachableRefusal(http.StatusGatewayTimeout),
			Refusal{http.StatusGatewayTimeout, transform.CodeProviderError, "the upstream did not answer in time (HTTP 504)"}},
		{"other_5xx", UnreachableRefusal(http.StatusInternalServerError),
			Refusal{http.StatusInternalServerError, transform.CodeProviderError, "the upstream could not be reached (HTTP 500)"}},
		{"idle", IdleRefusal(90 * time.Second),
			Refusal{http.StatusGatewayTimeout, transform.CodeUpstreamTimeout, "no upstream byte for 1m30s"}},
		{"broke_off", BrokeOffRefusal(),
			Refusal{http.StatusBadGateway, transform.CodeUpstreamError, MsgBrokeOff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("got %+v, want %+v", tt.got, tt.want)
			}
		})
	}
}

// TestRefusalForm checks, for every protocol row, how a refusal reaches
// the client (CONTRACT §6), and that its RefusalBody is one JSON object
// carrying the message.
func TestRefusalForm(t *testing.T) {
	for _, pr := range Protocols() {
		t.Run(pr.Name, func(t *testing.T) {
			// Once the client's response has begun, every protocol answers
			// in-stream and nothing is passed through.
			if !pr.InStream(true, true) || !pr.InStream(false, true) || pr.PassesRefusal(true) {
				t.Error("an open response must get the error event, and no passed-through refusal")
			}
			// A client that asked for one JSON body and got nothing yet
			// gets a status.
			if pr.InStream(false, false) {
				t.Error("a one-body client before its response must get a status")
			}
			// Before the upstream answered, a stream client gets the error
			// event only from a protocol that opened its stream early.
			if got := pr.InStream(true, false); got != pr.EarlyStart {
				t.Errorf("stream client before the answer: in-stream %v, want EarlyStart (%v)", got, pr.EarlyStart)
			}
			if got := pr.PassesRefusal(false); got != pr.PassRefusals {
				t.Errorf("refusal before the response: passed %v, want PassRefusals (%v)", got, pr.PassRefusals)
			}
			r := UpstreamRefusal(503, []byte(`{"error":{"message":"over \"capacity\""}}`))
			body := pr.AppendRefusal([]byte("prefix:"), r)
			rest, ok := strings.CutPrefix(string(body), "prefix:")
			if !ok {
				t.Fatalf("AppendRefusal did not append: %s", body)
			}
			var v map[string]any
			if err := json.Unmarshal([]byte(rest), &v); err != nil {
				t.Fatalf("RefusalBody is not JSON: %v: %s", err, rest)
			}
			if !strings.Contains(rest, `over \"capacity\"`) {
				t.Errorf("RefusalBody lacks the message: %s", rest)
			}
		})
	}
}
