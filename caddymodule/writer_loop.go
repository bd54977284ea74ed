package caddymodule

import (
	"context"
	"net/http"

	"go.uber.org/zap"

	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/protocol"
)

// The writer's part of the agent loop (CONTRACT.md §12): a reply that
// called tools the gateway runs leaves the client's stream open; the
// calls' runs, progress and results are written to it as they happen,
// from the goroutines that run them (hence the lock), and the next round's
// upstream response is written to the same stream, as a retry's is
// (writer_retry.go).

// codeParkFailed ends a stream whose waiting round could not be kept.
const codeParkFailed = "park_failed"

// toolsDue reports whether the reply ended with server calls to run, and
// the client is still there to see them.
func (sw *streamWriter) toolsDue() bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	return !sw.gone && !sw.clientLeft() && sw.p.ToolsPending()
}

// startTools writes the start of every server call of the reply
// (KindToolRun) and returns the calls, copied: they run while the stream
// goes on.
func (sw *streamWriter) startTools() []pipeline.ServerCall {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	calls := append([]pipeline.ServerCall(nil), sw.p.ServerCalls()...)
	for i := range calls {
		sw.out = sw.p.RunTool(sw.out[:0], i)
		sw.send()
	}
	return calls
}

// toolProgress writes a running call's progress.
func (sw *streamWriter) toolProgress(i int, pr agent.Progress) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.gone {
		return
	}
	sw.out = sw.p.ToolProgress(sw.out[:0], i, pr)
	sw.send()
}

// toolResult writes a call's result.
func (sw *streamWriter) toolResult(i int, r agent.Result) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	sw.out = sw.p.ToolResult(sw.out[:0], i, r)
	sw.send()
}

// roundStep decides what follows the round whose calls ran (agent.Next)
// and, when the turn ends there, ends it: for a mixed turn the client's
// calls finish it, and a last round's calls were not run; a round with
// calls waiting for the user is parked first (park keeps it; when it
// cannot, the stream ends with an error rather than a question no answer
// can reach). The round's messages, for the next request, come with a
// next round. It reports false when the client left meanwhile.
func (sw *streamWriter) roundStep(park func(pipeline.RoundState) error) (agent.Step, []byte, bool) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.gone || sw.clientLeft() || !sw.p.ToolsPending() {
		return agent.StepEnd, nil, false
	}
	step := sw.p.Next()
	if step == agent.StepEnd && sw.p.Parked() {
		if err := park(sw.p.ParkedRound()); err != nil {
			sw.logger.Warn("a round waiting for the user could not be kept", zap.String("request_id", sw.requestID), zap.Error(err))
			sw.out = sw.p.Fail(sw.out[:0], codeParkFailed, "the tool call waiting for your answer could not be kept: "+err.Error())
			sw.send()
			return step, nil, true
		}
	}
	if step == agent.StepEnd {
		sw.out = sw.p.EndTurn(sw.out[:0])
		sw.send()
		return step, nil, true
	}
	return step, sw.p.AppendRoundMessages(nil), true
}

// nextRound readies the writer for the next round's upstream response,
// whose request runs under a context that cancel ends, and writes the
// round's start. The previous upstream request, whose reply is over, is
// let go. It reports false when the client left meanwhile: the round is
// not asked.
func (sw *streamWriter) nextRound(cancel context.CancelCauseFunc, last bool) bool {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if !sw.nextReply(cancel) {
		return false
	}
	sw.out = sw.p.NextRound(sw.out[:0], last)
	sw.send()
	return true
}

// nextReply readies the writer for another upstream response on the same
// client stream (a retry's, or the loop's next round): what belongs to one
// upstream response (its status, headers, refusal body, the idle timer)
// starts over; what belongs to the client's stream (committed headers, the
// encoder's state, heartbeats) goes on. sw.mu is held.
func (sw *streamWriter) nextReply(cancel context.CancelCauseFunc) bool {
	sw.cancel(errUpstreamDone)
	sw.cancel = cancel
	if sw.gone || sw.clientLeft() {
		return false
	}
	sw.mode = modeWaiting
	sw.upstream = make(http.Header)
	sw.errStatus, sw.errBody, sw.errRefusal = 0, sw.errBody[:0], protocol.Refusal{}
	sw.timedOut = false
	sw.keep.newReply()
	return true
}
