package anthropic

import (
	"net/http"
	"strconv"

	"github.com/llmstream/llmstream/transform/request"
)

// AnswerCountTokens answers POST /v1/messages/count_tokens
// (request.Endpoint): {"input_tokens": n}, n the EstimateTokens of the
// body the upstream would get for the same messages, the route's system
// prompt and tools included. Claude Code calls it to size its context;
// chat completions has no counting endpoint to forward it to, so it gets
// an estimate, never the upstream.
func AnswerCountTokens(chat []byte, _ request.Info) (int, []byte) {
	out := append([]byte(`{"input_tokens":`), strconv.Itoa(EstimateTokens(chat))...)
	return http.StatusOK, append(out, '}')
}
