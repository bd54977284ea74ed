package caddymodule

import (
	"context"
	"net/http"
	"sync"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/request"
)

// turns is one client turn: the request proxied through next, then again
// for every round the reply asks for, on the same client stream
// (CONTRACT.md §12). A reply asks for another round in two ways: it called
// tools the gateway runs (the calls run, their results are appended, the
// upstream is asked again), or it failed its validation with retries left
// (specs/004 §7.3.2: the failed reply and a correction are appended). Both
// are one loop: what follows a reply is decided by nextRequest, and each
// round's request is the last one with messages appended. A client that
// leaves cancels the upstream and every running call, and nothing more is
// sent. body is the request r carries.
func (h *Handler) turns(sw *streamWriter, r *http.Request, body []byte, next caddyhttp.Handler, tools *offer) error {
	for {
		r = sw.trace.startCall(r, body, sw.p.Round()) // tracing.go
		err := h.proxy(sw, r, next)
		sw.endCall()
		if err != nil {
			return err
		}
		nb, round, last, ok := h.nextRequest(sw, body, tools)
		if !ok {
			return nil
		}
		ctx, cancel := context.WithCancelCause(sw.client)
		defer cancel(errUpstreamDone)
		if round && !sw.nextRound(cancel, last) || !round && !sw.nextAttempt(cancel) {
			return nil // the client left: nothing more is asked
		}
		body = nb
		r = r.WithContext(ctx)
		setBody(r, body)
	}
}

// nextRequest returns the body of the next upstream request of the turn,
// whether it is a round of the agent loop (and the last, with tools
// disabled) rather than a retry, and false when the turn is over. A reply
// whose server calls are due has them run first.
func (h *Handler) nextRequest(sw *streamWriter, body []byte, tools *offer) (nb []byte, round, last, ok bool) {
	if sw.toolsDue() {
		h.runTools(sw, tools)
		step, msgs, ok := sw.roundStep()
		if !ok {
			return nil, false, false, false
		}
		if step != agent.StepEnd {
			nb, err := request.AppendMessages(make([]byte, 0, len(body)+len(msgs)+64), body, msgs)
			if err == nil && step == agent.StepLastRound {
				nb, err = request.AppendToolsOff(nil, nb)
			}
			if err != nil {
				return nil, false, false, false // body is ours, valid; an error is a bug
			}
			return nb, true, step == agent.StepLastRound, true
		}
		// The turn ended; a mixed turn's end may still ask for a retry.
	}
	turn, reason, due := sw.retryDue()
	if !due {
		return nil, false, false, false
	}
	retry, err := request.AppendRetry(make([]byte, 0, len(body)+len(turn.Content)+512), body, turn)
	if err != nil {
		return nil, false, false, false
	}
	h.metrics.retried(reason)
	if c := h.logger.Check(zapcore.DebugLevel, "reply retried"); c != nil {
		c.Write(zap.String("request_id", sw.requestID), zap.Int("attempt", sw.p.Attempt()), zap.String("reason", reason))
	}
	return retry, false, false, true
}

// runTools runs the reply's server calls in parallel, each bounded by its
// server's timeout, and writes their starts, progress and results to the
// client as they happen. It returns when every call has its result. The
// calls run under the client's request context: a client that leaves
// cancels them all (the MCP cancellation goes to each server).
func (h *Handler) runTools(sw *streamWriter, tools *offer) {
	calls := sw.startTools()
	progress := newProgressPump(sw)
	var wg sync.WaitGroup
	for i, c := range calls {
		if c.Refused != "" {
			sw.toolResult(i, agent.ErrorResult(c.Refused))
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				// A bug in a tool server's client must not take Caddy
				// down: the model gets an error result, the log the rest.
				if rec := recover(); rec != nil {
					h.logger.Error("tool call panicked", zap.String("request_id", sw.requestID), zap.String("tool", c.Name), zap.Any("panic", rec))
					sw.toolResult(i, agent.ErrorResult("the tool call failed inside the gateway"))
				}
			}()
			span := sw.trace.toolSpan(c) // tracing.go
			var done toolserver.CallRecord
			res := h.servers.Call(sw.client, c.Name, c.Arguments, toolserver.CallOptions{
				Resolver: tools.resolver,
				Progress: func(pr agent.Progress) { progress.push(i, pr) },
				Done:     func(cr toolserver.CallRecord) { done = cr },
			})
			h.metrics.toolCalled(sw.route, done)
			sw.toolResult(i, res)
			sw.trace.endTool(span, done, res, h.settings.ToolServers.ResultBytes())
		}()
	}
	wg.Wait()
	progress.stop()
}

// progressPump hands the calls' progress to the client stream from a
// goroutine of its own: a tool server's notification must never wait for
// a slow client (the MCP session that carries it would stall), so the
// latest report of each call is kept and written when the stream is free.
type progressPump struct {
	sw     *streamWriter
	mu     sync.Mutex
	latest map[int]agent.Progress
	wake   chan struct{}
	done   chan struct{}
}

func newProgressPump(sw *streamWriter) *progressPump {
	pp := &progressPump{sw: sw, latest: map[int]agent.Progress{}, wake: make(chan struct{}, 1), done: make(chan struct{})}
	go pp.run()
	return pp
}

// push keeps call i's latest report; it never blocks.
func (pp *progressPump) push(i int, pr agent.Progress) {
	pp.mu.Lock()
	pp.latest[i] = pr
	pp.mu.Unlock()
	select {
	case pp.wake <- struct{}{}:
	default:
	}
}

// run writes the reports until stop.
func (pp *progressPump) run() {
	defer close(pp.done)
	for range pp.wake {
		pp.mu.Lock()
		batch := pp.latest
		pp.latest = map[int]agent.Progress{}
		pp.mu.Unlock()
		for i, pr := range batch {
			pp.sw.toolProgress(i, pr)
		}
	}
}

// stop ends the pump once every call returned; what it still holds is
// dropped (progress after a result means nothing), and it returns when
// the pump's goroutine has ended.
func (pp *progressPump) stop() {
	close(pp.wake)
	<-pp.done
}
