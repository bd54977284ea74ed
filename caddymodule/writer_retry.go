package caddymodule

import (
	"context"

	"github.com/llmstream/llmstream/transform/request"
)

// The writer's part of a retry (CONTRACT.md §10): a reply that failed its
// validation leaves the client's stream open, and the next upstream
// response is written to the same stream. What belongs to one upstream
// response (its status, headers, refusal body, the idle timer) starts
// over; what belongs to the client's stream (committed headers, the
// encoder's state, heartbeats) goes on.

// replyDone reports whether the current upstream reply needs no more
// bytes: the stream ended, or the reply failed its validation and the
// retry is due, or it called tools the gateway runs (writer_loop.go).
func (sw *streamWriter) replyDone() bool {
	return sw.p.Ended() || sw.p.RetryPending() || sw.p.ToolsPending()
}

// retryDue returns the turn to append for the retry and the failure code
// that asks for it, and false when no retry is due (the reply passed, or
// the stream ended, or the client left).
func (sw *streamWriter) retryDue() (request.RetryTurn, string, bool) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.gone || sw.clientLeft() || !sw.p.RetryPending() {
		return request.RetryTurn{}, "", false
	}
	return sw.p.RetryTurn(), sw.p.RetryReason(), true
}

// nextAttempt readies the writer for the retry's upstream response, whose
// request runs under a context that cancel ends (nextReply). It reports
// false when the client left meanwhile: the retry is not sent.
func (sw *streamWriter) nextAttempt(cancel context.CancelCauseFunc) bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if !sw.nextReply(cancel) {
		return false
	}
	sw.p.NextAttempt()
	return true
}
