package toolserver

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
)

// Calls that wait for the user (CONTRACT.md §13). A server asks the user
// something while a call runs (MCP elicitation) in one of two ways:
//
//   - the current revision (2026-07-28) answers the call with an
//     "input_required" result that names its questions and carries an
//     opaque requestState, and the client makes the call again with the
//     answers (multi-round-trip requests). The call is over meanwhile:
//     its park (agent.ResumeRetry) holds everything needed to make it
//     again, so any process that reaches the server can resume it, after
//     a restart too;
//   - earlier revisions (2025-11-25, which server-everything speaks) send
//     elicitation/create while the tools/call request stays open. The
//     call is held in this process (a hold, agent.ResumeHeld), and only
//     this process can answer it, until the hold's TTL or a config reload
//     ends it (the server gets notifications/cancelled).
//
// Either way the call comes back with Result.Park when the caller can show
// the question (CallOptions.Ask), and the server's elicitation is
// declined otherwise, so that the tool answers for itself. An elicitation
// is tied to its call by the session it comes on: when several calls run
// on one session (a stdio server shared by every user), it cannot be told
// whose it is, and is declined rather than shown to the wrong user.

// AskMode says which questions a caller can show its user.
type AskMode uint8

// The questions a caller can show.
const (
	// AskChoice: one choice among options (skillpet's interactive tool).
	AskChoice AskMode = 1 << iota
	// AskForm: a form of several fields (skillpet's ask_user form).
	AskForm
)

// DefaultHoldTTL is how long a call held open for the user waits at most,
// when CallOptions.HoldTTL is 0.
const DefaultHoldTTL = 10 * time.Minute

// maxInputRounds bounds how often one call is made again with answers
// llmstream gave itself (declined questions it cannot show).
const maxInputRounds = 3

// instanceID names this process in holds: a request that reaches another
// process can say where the call is held.
var instanceID = func() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}()

// heldAsk is an elicitation a server sent while a call runs.
type heldAsk struct {
	park   agent.Park
	answer chan *mcp.ElicitResult // buffered: the answer never waits
}

// callOutcome is what CallTool returned.
type callOutcome struct {
	res *mcp.CallToolResult
	err error
}

// running is a call in flight: start begins it, wait waits for its
// result or its question, finish lets go of what it holds. A call held
// open while the user decides outlives the request that made it: a hold
// owns it until the answer, or its TTL.
type running struct {
	srv    *server
	c      *conn
	t      Tool
	cl     *call
	params *mcp.CallToolParams
	ctx    context.Context // the call's own: ends on cancel or when the Set closes
	cancel context.CancelFunc
	// detach stops the request's context from cancelling the call (a
	// call that parks outlives its request).
	detach   func() bool
	reqCtx   context.Context
	timedOut atomic.Bool
	key      progressKey
	done     chan callOutcome
	rounds   int
	finished sync.Once
}

// start begins a call on c: its progress token, its deadline, and the
// tools/call request in a goroutine of its own.
func (srv *server) start(ctx context.Context, c *conn, t Tool, params *mcp.CallToolParams, opt CallOptions) *running {
	c.inflight.Add(1)
	callCtx, cancel := context.WithCancel(srv.set.ctx)
	r := &running{srv: srv, c: c, t: t, params: params, ctx: callCtx, cancel: cancel, reqCtx: ctx,
		done: make(chan callOutcome, 1)}
	r.detach = context.AfterFunc(ctx, cancel)
	r.cl = &call{relay: relay{fn: opt.Progress}, ask: make(chan *heldAsk, 1), ended: make(chan struct{}), modes: opt.Ask}
	r.cl.deadline = newDeadline(srv.timeout, config.ToolTimeoutCap, func() {
		r.timedOut.Store(true)
		cancel()
	})
	token := "llmstream-" + strconv.FormatUint(srv.set.tokens.Add(1), 10)
	r.key = progressKey{c.session, token}
	srv.set.calls.Store(r.key, r.cl)
	srv.set.activeCalls(c.session).add(r.cl)
	params.SetProgressToken(token)
	r.send(params)
	return r
}

// send makes the tools/call request.
func (r *running) send(params *mcp.CallToolParams) {
	go func() {
		res, err := r.c.session.CallTool(r.ctx, params)
		r.done <- callOutcome{res, err}
	}()
}

// finish lets go of the call: its context, timers, progress and counts.
func (r *running) finish() {
	r.finished.Do(func() {
		r.detach()
		r.cancel()
		r.cl.deadline.stop()
		r.cl.relay.stop()
		r.srv.set.calls.Delete(r.key)
		r.srv.set.activeCalls(r.c.session).remove(r.cl)
		close(r.cl.ended)
		r.c.lastUsed.Store(time.Now().UnixNano())
		r.c.inflight.Add(-1)
	})
}

// wait waits for the call's result, or for a question the server asks
// the user while it holds the call open; then the call is parked (a hold)
// and wait returns its park. outcome is for the log.
func (r *running) wait(ctx context.Context, opt CallOptions) (agent.Result, string) {
	for {
		select {
		case o := <-r.done:
			if o.err == nil && o.res != nil && o.res.NeedsInput() {
				if res, outcome, again := r.inputRequired(o.res, opt); !again {
					r.finish()
					return res, outcome
				}
				continue
			}
			res, outcome := r.srv.outcome(ctx, r, o)
			r.finish()
			return res, outcome
		case ask := <-r.cl.ask:
			return r.hold(ask, opt), "parked"
		}
	}
}

// outcome converts what the call returned into the model's result.
func (srv *server) outcome(ctx context.Context, r *running, o callOutcome) (agent.Result, string) {
	t, c, res, err := r.t, r.c, o.res, o.err
	switch {
	case err == nil && res == nil:
		return agent.ErrorResult(fmt.Sprintf("Tool %s returned nothing.", t.Name)), "failed"
	case err == nil:
		out := convert(res, srv.set.maxBinary)
		if out.IsError {
			return out, "tool_error"
		}
		return out, "ok"
	case r.timedOut.Load():
		if r.cl.deadline.hitCap() {
			return agent.ErrorResult(fmt.Sprintf("Tool %s timed out: it was still reporting progress after %s, the most a call may take. Try a smaller request, or answer without it.", t.Name, srv.timeout*config.ToolTimeoutCap)), "timeout"
		}
		return agent.ErrorResult(fmt.Sprintf("Tool %s timed out after %s without an answer. Try again later, or answer without it.", t.Name, srv.timeout)), "timeout"
	case ctx.Err() != nil:
		return agent.ErrorResult(fmt.Sprintf("Tool %s was cancelled.", t.Name)), "cancelled"
	case srv.set.ctx.Err() != nil:
		return agent.ErrorResult(fmt.Sprintf("Tool %s is not available: the tool servers are shutting down.", t.Name)), "closed"
	}
	var werr *jsonrpc.Error
	switch {
	case errors.As(err, &werr) && werr.Code == codeTooLarge:
		return agent.ErrorResult(fmt.Sprintf("Tool %s returned a result larger than %d bytes, which was dropped. Ask for less (a narrower query, a smaller range).", t.Name, srv.set.maxMessage)), "too_large"
	case errors.As(err, &werr) && werr.Code == codeRejected:
		// The SDK's transport failed this one call (HTTP: its request or
		// its response stream broke, as when the server dies mid-call);
		// "rejected by transport" would tell the model nothing.
		return agent.ErrorResult(fmt.Sprintf("Tool %s failed: the connection to its server %s broke during the call. Try again later, or answer without it.", t.Name, srv.name)), "connection_failed"
	case errors.As(err, &werr):
		msg := werr.Message
		if len(msg) > 1024 {
			msg = msg[:1024] + "…"
		}
		return agent.ErrorResult(fmt.Sprintf("Tool %s failed: %s", t.Name, msg)), "protocol_error"
	case errors.Is(err, mcp.ErrConnectionClosed) || c.ended(250*time.Millisecond):
		return agent.ErrorResult(fmt.Sprintf("Tool %s failed: its server %s stopped during the call (it is being restarted). Try again later, or answer without it.", t.Name, srv.name)), "server_stopped"
	default:
		return agent.ErrorResult(fmt.Sprintf("Tool %s failed: the call to its server %s did not complete. Try again later, or answer without it.", t.Name, srv.name)), "failed"
	}
}

// inputRequired handles an "input_required" result (multi-round-trip
// requests): one question the caller can show parks the call
// (agent.ResumeRetry: made again with the answer when it comes); any
// other input request is answered by llmstream itself (an elicitation
// declined, a sampling or roots request refused) and the call is made
// again at once, at most maxInputRounds times. again says the call was
// made again: wait goes on.
func (r *running) inputRequired(res *mcp.CallToolResult, opt CallOptions) (agent.Result, string, bool) {
	if len(res.InputRequests) == 1 {
		for id, ir := range res.InputRequests {
			if ep, ok := ir.(*mcp.ElicitParams); ok {
				if park, ok := elicitPark(ep, opt.Ask); ok {
					park.Resume.Mode, park.Resume.InputID, park.Resume.RequestState = agent.ResumeRetry, id, res.RequestState
					return agent.Result{Park: &park}, "parked", false
				}
			}
		}
	}
	r.rounds++
	if r.rounds > maxInputRounds || len(res.InputRequests) == 0 {
		return agent.ErrorResult(fmt.Sprintf("Tool %s kept asking for input it was not given; it was stopped. Answer without it.", r.t.Name)), "input_required", false
	}
	responses := mcp.InputResponseMap{}
	for id, ir := range res.InputRequests {
		if _, ok := ir.(*mcp.ElicitParams); !ok {
			// Sampling and roots requests: llmstream offers neither
			// capability; the server asked anyway.
			return agent.ErrorResult(fmt.Sprintf("Tool %s asked for something llmstream does not provide (%T); it was stopped. Answer without it.", r.t.Name, ir)), "input_required", false
		}
		responses[id] = &mcp.ElicitResult{Action: agent.ActionDecline}
	}
	p := *r.params
	p.InputResponses, p.RequestState = responses, res.RequestState
	r.send(&p)
	return agent.Result{}, "", true
}

// elicitPark reads an elicitation the caller may show: form mode, a
// schema llmstream can show, and a kind of question the caller can.
func elicitPark(ep *mcp.ElicitParams, modes AskMode) (agent.Park, bool) {
	if ep == nil || ep.Mode != "" && ep.Mode != "form" || ep.URL != "" {
		return agent.Park{}, false
	}
	var schema []byte
	if ep.RequestedSchema != nil {
		b, err := json.Marshal(ep.RequestedSchema)
		if err != nil {
			return agent.Park{}, false
		}
		schema = b
	}
	park, ok := agent.Elicitation(ep.Message, schema)
	switch {
	case !ok:
		return agent.Park{}, false
	case park.Await.Kind == transform.AwaitChoice && modes&AskChoice == 0:
		return agent.Park{}, false
	case park.Await.Kind == transform.AwaitForm && modes&AskForm == 0:
		return agent.Park{}, false
	}
	return park, true
}

// onElicit answers an elicitation/create a server sends while a call runs
// on its session (MCP 2025-11-25): the call is parked with the question,
// and the request waits for the user's answer (Resume) or the end of the
// call. An elicitation no call can show, or that could be any of several
// calls', is declined.
func (s *Set) onElicit(ctx context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	decline := &mcp.ElicitResult{Action: agent.ActionDecline}
	cl := s.activeCalls(req.Session).only()
	if cl == nil || req.Params == nil {
		return decline, nil
	}
	park, ok := elicitPark(req.Params, cl.modes)
	if !ok {
		return decline, nil
	}
	park.Resume.Mode = agent.ResumeHeld
	ask := &heldAsk{park: park, answer: make(chan *mcp.ElicitResult, 1)}
	select {
	case cl.ask <- ask:
	default:
		return decline, nil // a question is pending already
	}
	select {
	case res := <-ask.answer:
		return res, nil
	case <-cl.ended:
		return &mcp.ElicitResult{Action: "cancel"}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sessionCalls are the calls running on one session, to tie an
// elicitation to its call.
type sessionCalls struct {
	mu    sync.Mutex
	calls map[*call]bool
}

func (s *Set) activeCalls(session *mcp.ClientSession) *sessionCalls {
	v, _ := s.active.LoadOrStore(session, &sessionCalls{calls: map[*call]bool{}})
	return v.(*sessionCalls)
}

func (sc *sessionCalls) add(c *call) {
	sc.mu.Lock()
	sc.calls[c] = true
	sc.mu.Unlock()
}

func (sc *sessionCalls) remove(c *call) {
	sc.mu.Lock()
	delete(sc.calls, c)
	sc.mu.Unlock()
}

// only returns the session's one running call, nil when there are none
// or several.
func (sc *sessionCalls) only() *call {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	if len(sc.calls) != 1 {
		return nil
	}
	for c := range sc.calls {
		return c
	}
	return nil
}

// hold is a call held open while its user decides.
type hold struct {
	r     *running
	ask   *heldAsk
	timer *time.Timer
}

// holds are the calls held in this process, by id.
var holds = struct {
	sync.Mutex
	m map[string]*hold
}{m: map[string]*hold{}}

// hold parks a call its server holds open: the request it served is over,
// the call goes on under the hold until the answer or the TTL.
func (r *running) hold(ask *heldAsk, opt CallOptions) agent.Result {
	r.detach()
	r.cl.deadline.pause()
	r.cl.relay.setFn(nil)
	id := newHoldID()
	ttl := opt.HoldTTL
	if ttl <= 0 {
		ttl = DefaultHoldTTL
	}
	h := &hold{r: r, ask: ask}
	holds.Lock()
	holds.m[id] = h
	holds.Unlock()
	h.timer = time.AfterFunc(ttl, func() {
		if takeHold(id) != nil {
			// The server is told twice: its question is answered
			// "cancel" (the user dismissed it, in MCP's words), and the
			// call is cancelled (notifications/cancelled, which the SDK
			// sends best-effort, off the caller's path).
			ask.answer <- elicitResult("cancel", nil)
			r.cancel()
			go func() {
				<-r.done
				r.finish()
			}()
		}
	})
	park := ask.park
	park.Resume.Hold, park.Resume.Instance = id, instanceID
	return agent.Result{Park: &park}
}

func newHoldID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "hold_" + hex.EncodeToString(b[:])
}

// takeHold removes and returns the hold id, nil when there is none.
func takeHold(id string) *hold {
	holds.Lock()
	defer holds.Unlock()
	h := holds.m[id]
	delete(holds.m, id)
	return h
}

// Holds reports whether this process holds the call a park names: a
// ResumeHeld park can be answered only by its process.
func Holds(p *agent.Park) bool {
	if p == nil || p.Resume.Mode != agent.ResumeHeld {
		return true
	}
	holds.Lock()
	defer holds.Unlock()
	_, ok := holds.m[p.Resume.Hold]
	return ok
}

// ErrNotHeld is the error of Resume for a held call this process does not
// hold (another instance holds it, or this one restarted, or the hold
// expired).
var ErrNotHeld = errors.New("toolserver: the tool call waiting for this answer is not held by this process")

// Resume goes on with a parked call of tool name with args (as the model
// made it), given the user's answer (CONTRACT.md §13): an approval runs
// the call, or tells the model it was declined; a call the server answered
// "input required" is made again with the answer; a call held open gets
// the answer, here, where it is held. The result may be a park again (the
// server asks something more). It fails only with ErrNotHeld.
func (s *Set) Resume(ctx context.Context, name string, args []byte, park *agent.Park, a agent.Answer, opt CallOptions) (agent.Result, error) {
	switch park.Resume.Mode {
	case agent.ResumeApprove:
		if a.Declined() {
			return declined(name, a.Reason), nil
		}
		return s.Call(ctx, name, args, opt), nil
	case agent.ResumeHeld:
		h := takeHold(park.Resume.Hold)
		if h == nil {
			return agent.Result{}, ErrNotHeld
		}
		h.timer.Stop()
		action, content, err := park.Content(a)
		if err != nil {
			action, content = agent.ActionDecline, nil
		}
		r := h.r
		r.reqCtx = ctx
		r.detach = context.AfterFunc(ctx, r.cancel)
		r.cl.relay.setFn(opt.Progress)
		r.cl.modes = opt.Ask
		r.cl.deadline.restart()
		h.ask.answer <- elicitResult(action, content)
		res, _ := r.wait(ctx, opt)
		return res, nil
	}
	// ResumeRetry: the call again, with the answer.
	action, content, err := park.Content(a)
	if err != nil {
		action, content = agent.ActionDecline, nil
	}
	return s.call(ctx, name, args, opt, func(p *mcp.CallToolParams) {
		p.InputResponses = mcp.InputResponseMap{park.Resume.InputID: elicitResult(action, content)}
		p.RequestState = park.Resume.RequestState
	}), nil
}

// elicitResult is the elicitation result of an action and its content.
func elicitResult(action string, content json.RawMessage) *mcp.ElicitResult {
	res := &mcp.ElicitResult{Action: action}
	if action == agent.ActionAccept && len(content) > 0 {
		_ = json.Unmarshal(content, &res.Content)
	}
	return res
}

// declined is the result of a call the user did not approve.
func declined(name, reason string) agent.Result {
	text := fmt.Sprintf("The user declined the call of %s: it was not run.", name)
	if reason != "" {
		text += " Their reason: " + reason
	}
	return agent.Result{Denied: true, Parts: []agent.Part{{Kind: agent.PartText, Text: text}}}
}

// releaseHolds ends the calls this Set holds: its servers are going away
// (a config reload or shutdown), and so are the calls.
func (s *Set) releaseHolds() {
	holds.Lock()
	var mine []*hold
	for id, h := range holds.m {
		if h.r.srv.set == s {
			mine = append(mine, h)
			delete(holds.m, id)
		}
	}
	holds.Unlock()
	for _, h := range mine {
		h.timer.Stop()
		h.r.cancel()
		<-h.r.done
		h.r.finish()
	}
}

// activeCount counts the calls running on the Set's sessions (tests).
func (s *Set) activeCount() int {
	n := 0
	s.active.Range(func(_, v any) bool {
		sc := v.(*sessionCalls)
		sc.mu.Lock()
		n += len(sc.calls)
		sc.mu.Unlock()
		return true
	})
	return n
}
