package caddymodule

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/pipeline"
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
func (h *Handler) turns(sw *streamWriter, r *http.Request, c *chat, next caddyhttp.Handler) error {
	body := c.body
	for first := true; ; first = false {
		// A resumed round (resume.go) starts with its calls, not with an
		// upstream reply: the reply was the earlier turn's.
		if !first || c.resume == nil {
			r = sw.trace.startCall(r, body, sw.p.Round()) // tracing.go
			err := h.proxy(sw, r, next)
			sw.endCall()
			if err != nil {
				return err
			}
		}
		nb, round, last, ok := h.nextRequest(sw, c, body)
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
// whose server calls are due has them run first; a round whose calls wait
// for the user is parked (park.go) and ends the turn. body is the request
// of the reply that ended.
func (h *Handler) nextRequest(sw *streamWriter, c *chat, body []byte) (nb []byte, round, last, ok bool) {
	if sw.toolsDue() {
		h.runTools(sw, c)
		step, msgs, ok := sw.roundStep(func(st pipeline.RoundState) error {
			if c.park == nil {
				return errors.New("the route keeps no waiting calls")
			}
			return c.park.save(body, st)
		})
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
// client as they happen. It returns when every call has its result, or
// waits for the user. The calls run under the client's request context: a
// client that leaves cancels them all (the MCP cancellation goes to each
// server). A call to a tool the route marks approve waits for the user
// before it runs (CONTRACT.md §13), where the client can answer; a
// resumed round's calls (resume.go) run on with the user's answer, or
// wait again without one.
func (h *Handler) runTools(sw *streamWriter, c *chat) {
	tools := c.tools
	calls := sw.startTools()
	progress := newProgressPump(sw)
	opt := func(i int) toolserver.CallOptions {
		o := toolserver.CallOptions{
			Resolver: tools.resolver,
			Progress: func(pr agent.Progress) { progress.push(i, pr) },
		}
		if c.park != nil {
			o.Ask, o.HoldTTL = c.park.p.asks, c.park.p.ttl
		}
		return o
	}
	result := func(i int, res agent.Result) {
		if res.Park != nil && c.park != nil {
			c.park.shown(res.Park, calls[i].Index)
		}
		c.files.publish(sw.client, calls[i].Name, &res)
		sw.toolResult(i, res)
	}
	var wg sync.WaitGroup
	for i, call := range calls {
		switch {
		case call.Done():
			continue // ran before the round was parked
		case call.Refused != "":
			sw.toolResult(i, agent.ErrorResult(call.Refused))
			continue
		case call.Park != nil && call.Answer == nil:
			result(i, agent.Result{Park: call.Park}) // still waiting
			continue
		case call.Park == nil && tools != nil && tools.approve[call.Name]:
			if c.park == nil || !c.park.p.approvals {
				sw.toolResult(i, awaitDenied(call.Tool.Label))
				continue
			}
			park := agent.Approval(call.Tool.Label)
			result(i, agent.Result{Park: &park})
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				// A bug in a tool server's client must not take Caddy
				// down: the model gets an error result, the log the rest.
				if rec := recover(); rec != nil {
					h.logger.Error("tool call panicked", zap.String("request_id", sw.requestID), zap.String("tool", call.Name), zap.Any("panic", rec))
					sw.toolResult(i, agent.ErrorResult("the tool call failed inside the gateway"))
				}
			}()
			span := sw.trace.toolSpan(call) // tracing.go
			var done toolserver.CallRecord
			o := opt(i)
			o.Done = func(cr toolserver.CallRecord) { done = cr }
			var res agent.Result
			switch {
			case call.Name == config.ConsultTool && call.Park == nil:
				res = h.consult(sw, c, i, call) // agents.go
			case call.Park != nil:
				var err error
				res, err = h.servers.Resume(sw.client, call.Name, call.Arguments, call.Park, *call.Answer, o)
				if err != nil { // not held here: checked before the stream began
					res = agent.ErrorResult("The tool call waiting for the user's answer is no longer held: " + err.Error())
				}
			default:
				res = h.servers.Call(sw.client, call.Name, call.Arguments, o)
			}
			if done.Outcome != "" { // a call a server made (not a consultation, nor a held call's answer)
				h.metrics.toolCalled(sw.route, done)
			}
			result(i, res)
			sw.trace.endTool(span, done, res, h.settings.ToolServers.ResultBytes())
		}()
	}
	wg.Wait()
	progress.stop()
	if c.updates != nil {
		// The resource updates the calls caused, before the next round.
		ctx, cancel := context.WithTimeout(sw.client, settleUpdates)
		h.servers.SettleUpdates(ctx)
		cancel()
		c.updates.flush()
	}
}

// settleUpdates bounds the wait for the resource updates a round's calls
// caused.
const settleUpdates = 2 * time.Second

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
