package pipeline

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/chatmsg"
)

// The pipeline's part of the agent loop (CONTRACT.md §12): it tells the
// calls to tools the gateway runs from the client's own, holds a reply
// that made such calls open instead of finishing it, shows the calls as
// they run and their results, and starts the next round on the same client
// stream. Running the calls and calling the upstream again is the caller's
// (caddymodule); what follows a round is agent.Next's.

// Loop is what a stream's agent loop tells the pipeline; nil runs no
// tools.
type Loop struct {
	// Server reports whether name is a tool the gateway runs, with the
	// label and server name its events carry.
	Server func(name string) (transform.Tool, bool)
	// MaxRounds is the number of rounds with tool calls before one last
	// round is asked with tools disabled (agent.Next).
	MaxRounds int
	// MaxResultBytes bounds what the model is given of one result
	// (agent.ModelText).
	MaxResultBytes int
	// Describe, when set, completes the tool a call's events carry from
	// its complete arguments: a consult_agent call names the sub-agent
	// it consults (CONTRACT.md §13), and its start shows it.
	Describe func(name string, args []byte, t *transform.Tool)
}

// ServerCall is a call to a tool the gateway runs, made by the reply that
// just ended.
type ServerCall struct {
	// Index is the call's index in the client stream; ID, Name and
	// Arguments (raw JSON text) are the call as the model made it.
	Index     int
	ID, Name  string
	Arguments []byte
	// Refused is set when the call is not to be run: its arguments failed
	// their check (the correction), or the round was asked with tools
	// disabled. It is the model's result instead.
	Refused string
	// Tool is its label and server.
	Tool transform.Tool
	// Park is set while the call waits for the user (CONTRACT.md §13):
	// its result was a park. Answer is set on a resumed call the user
	// answered (Resume): the caller runs it on.
	Park   *agent.Park
	Answer *agent.Answer

	result string // the tool message's content, once the result came
	done   bool
}

// choice returns the option a resumed call's answer picked, nil when it
// is not resumed or the answer is a form's.
func (c *ServerCall) choice() *transform.Option {
	if c.Park == nil || c.Answer == nil || c.Answer.OptionID == "" {
		return nil
	}
	for _, o := range c.Park.Await.Options {
		if o.ID == c.Answer.OptionID {
			return &o
		}
	}
	return &transform.Option{ID: c.Answer.OptionID}
}

// Done reports whether the call has its result: a resumed round's calls
// that ran before it was parked are not run again.
func (c *ServerCall) Done() bool { return c.done }

// loopState is a stream's state of its loop.
type loopState struct {
	cfg   *Loop
	round int // the current round, 1 for the first
	// toolsOff says the current round was asked with tools disabled: the
	// rounds ran out.
	toolsOff bool
	// pending says the reply ended with server calls to run: the stream
	// stays open for their results (RunTool, ToolResult) and what follows
	// (NextRound or EndTurn).
	pending bool
	calls   []ServerCall // the reply's server calls
	// clientCalls counts the reply's calls the client is to run.
	clientCalls int
	// parserCalls says a call of the reply came from its text (aiplan,
	// text_tools), not from the upstream's tool_calls.
	parserCalls bool
	content     []byte // the reply's content, as the model wrote it
	answer      []byte // the reply's answer text
	usage       []byte // the usage of the rounds before, summed
	sum         []byte // usage and the reply's, for KindUsage
}

// SetLoop sets the stream's agent loop; nil runs no tools. Call it after
// Reset, before the upstream answers.
func (p *Pipeline) SetLoop(l *Loop) {
	p.loop.cfg = l
	p.loop.round = 1
}

// resetLoop forgets the stream's loop.
func (p *Pipeline) resetLoop() {
	lp := &p.loop
	lp.cfg, lp.round, lp.toolsOff = nil, 0, false
	lp.usage = lp.usage[:0]
	p.startRound()
}

// startRound readies the loop's record of a reply.
func (p *Pipeline) startRound() {
	lp := &p.loop
	lp.pending, lp.clientCalls, lp.parserCalls = false, 0, false
	clear(lp.calls)
	lp.calls = lp.calls[:0]
	if cap(lp.content) > maxKeptBody {
		lp.content, lp.answer = nil, nil
	}
	lp.content, lp.answer = lp.content[:0], lp.answer[:0]
}

// serverCall reports whether a call named name is one the gateway runs,
// with the tool its events carry.
func (p *Pipeline) serverCall(name string) (*transform.Tool, bool) {
	if p.loop.cfg == nil || p.loop.cfg.Server == nil {
		return nil, false
	}
	t, ok := p.loop.cfg.Server(name)
	if !ok {
		return nil, false
	}
	t.Round = p.loop.round
	return &t, true
}

// keepLoopText keeps the reply's content and answer for the assistant
// message of the next round.
func (p *Pipeline) keepLoopText(ev *transform.Event) {
	if p.loop.cfg == nil {
		return
	}
	switch ev.Kind {
	case transform.KindAnswerDelta:
		p.loop.answer = append(p.loop.answer, ev.Text...)
	}
}

// keepLoopContent keeps the reply's content as the model wrote it.
func (p *Pipeline) keepLoopContent(b []byte) {
	if p.loop.cfg != nil {
		p.loop.content = append(p.loop.content, b...)
	}
}

// recordCall keeps a complete call of the reply: a server call to run,
// or one more call for the client.
func (p *Pipeline) recordCall(ev transform.Event, c *call, native bool) {
	if !native {
		p.loop.parserCalls = true
	}
	if !c.server {
		p.loop.clientCalls++
		return
	}
	sc := ServerCall{Index: ev.Index, ID: ev.ID, Name: ev.Name, Arguments: append([]byte(nil), ev.Text...), Tool: *c.tool}
	if d := p.loop.cfg.Describe; d != nil {
		d(ev.Name, ev.Text, &sc.Tool)
	}
	if p.loop.toolsOff {
		sc.Refused = agent.NotRunLastRound
	}
	p.loop.calls = append(p.loop.calls, sc)
}

// refuseCall marks the server call of stream index i as not to be run:
// its arguments failed their check, and correction is the model's result.
func (p *Pipeline) refuseCall(i int, correction string) bool {
	for j := range p.loop.calls {
		if c := &p.loop.calls[j]; c.Index == i {
			if c.Refused == "" {
				c.Refused = correction
			}
			return true
		}
	}
	return false
}

// ToolsPending reports whether the reply ended with server calls to run:
// the caller runs ServerCalls (RunTool, ToolProgress, ToolResult), then
// asks Next what follows.
func (p *Pipeline) ToolsPending() bool { return p.loop.pending && !p.ended }

// ServerCalls returns the reply's calls to run. The slice is valid until
// NextRound or EndTurn; the caller reads it and must not change it.
func (p *Pipeline) ServerCalls() []ServerCall { return p.loop.calls }

// Round returns the current round: 1, then 2 after the first tool round.
func (p *Pipeline) Round() int { return p.loop.round }

// RunTool appends KindToolRun for server call i (an index into
// ServerCalls): the call starts running.
func (p *Pipeline) RunTool(dst []byte, i int) []byte {
	if !p.ToolsPending() {
		return dst
	}
	p.out = dst
	defer p.release()
	c := &p.loop.calls[i]
	if c.done {
		return p.out // a resumed round's call that had its result
	}
	tool := c.Tool
	tool.Choice = c.choice()
	p.deliver(transform.Event{Kind: transform.KindToolRun, Index: c.Index, ID: c.ID, Name: c.Name, Text: c.Arguments, Tool: &tool})
	return p.out
}

// ToolProgress appends KindToolProgress for running server call i.
// Progress after the call's result is dropped (CONTRACT.md §12).
func (p *Pipeline) ToolProgress(dst []byte, i int, pr agent.Progress) []byte {
	if !p.ToolsPending() || p.loop.calls[i].done {
		return dst
	}
	p.out = dst
	defer p.release()
	c := &p.loop.calls[i]
	tool := c.Tool
	tool.Progress, tool.Total, tool.Message = pr.Progress, pr.Total, pr.Message
	p.deliver(transform.Event{Kind: transform.KindToolProgress, Index: c.Index, ID: c.ID, Name: c.Name, Tool: &tool})
	return p.out
}

// ToolResult appends KindToolResult for server call i with the call's
// result, and keeps the text the model is given (agent.ModelText, cut at
// MaxResultBytes). A second result for the call is dropped.
func (p *Pipeline) ToolResult(dst []byte, i int, r agent.Result) []byte {
	if !p.ToolsPending() || p.loop.calls[i].done {
		return dst
	}
	p.out = dst
	defer p.release()
	c := &p.loop.calls[i]
	if r.Park != nil {
		// The call waits for the user: shown as asked, and the round
		// ends (Next) to be resumed by the answer.
		c.Park, c.Answer = r.Park, nil
		tool := c.Tool
		tool.Status, tool.Output, tool.Await = transform.ToolAwaiting, r.Park.Await.Message, &r.Park.Await
		p.deliver(transform.Event{Kind: transform.KindToolResult, Index: c.Index, ID: c.ID, Name: c.Name, Tool: &tool})
		return p.out
	}
	choice := c.choice()
	c.done, c.Park, c.Answer = true, nil, nil
	c.result = agent.ModelText(r, p.loop.cfg.MaxResultBytes)
	tool := c.Tool
	tool.Choice = choice
	tool.Artifacts = agent.Artifacts(c.Tool.Event, r)
	tool.Images = agent.Images(r)
	tool.Status, tool.Output = transform.ToolCompleted, c.result
	switch {
	case r.Denied:
		tool.Status = transform.ToolDenied
	case r.IsError:
		tool.Status = transform.ToolFailed
	}
	events := 0
	for _, a := range tool.Artifacts {
		if agent.IsArtifactEvent(a) {
			events++
		}
	}
	p.evidence(c.Name, events)
	p.deliver(transform.Event{Kind: transform.KindToolResult, Index: c.Index, ID: c.ID, Name: c.Name, Tool: &tool})
	return p.out
}

// Next returns what follows the reply whose server calls ran
// (agent.Next): the next round, the last round with tools disabled, or
// the end of the turn.
func (p *Pipeline) Next() agent.Step {
	lp := &p.loop
	return agent.Next(agent.Reply{
		Round: lp.round, ServerCalls: len(lp.calls), ClientCalls: lp.clientCalls, ToolsOff: lp.toolsOff, Parked: p.parked(),
	}, lp.cfg.MaxRounds)
}

// parked counts the reply's calls that wait for the user.
func (p *Pipeline) parked() int {
	n := 0
	for i := range p.loop.calls {
		if c := &p.loop.calls[i]; c.Park != nil && !c.done {
			n++
		}
	}
	return n
}

// Parked reports whether a call of the reply waits for the user: the
// turn ends after the round (EndTurn), and the caller keeps the round
// (ParkedRound) for the answer to resume (Resume).
func (p *Pipeline) Parked() bool { return p.ToolsPending() && p.parked() > 0 }

// AppendRoundMessages appends, comma-separated, the messages the next
// round's request adds to the last one's: the reply as an assistant
// message with its calls, and one tool message per call with its result
// (a call with no result, which cannot happen once ToolResult was called
// for each, is answered as not run). The content is what the model wrote;
// when its calls came from its text (aiplan, text_tools) it is the answer
// text instead, since the calls follow as tool_calls.
func (p *Pipeline) AppendRoundMessages(dst []byte) []byte {
	lp := &p.loop
	content := lp.content
	if lp.parserCalls {
		content = lp.answer
	}
	calls := make([]chatmsg.ToolCall, len(lp.calls))
	for i, c := range lp.calls {
		calls[i] = chatmsg.ToolCall{ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)}
	}
	dst = chatmsg.AppendAssistant(dst, string(content), calls)
	for _, c := range lp.calls {
		dst = append(dst, ',')
		dst = chatmsg.AppendTool(dst, c.ID, c.modelResult())
	}
	return dst
}

// modelResult is the tool message's content of the call.
func (c *ServerCall) modelResult() string {
	switch {
	case c.done:
		return c.result
	case c.Refused != "":
		return c.Refused
	}
	return agent.NotRun
}

// NextRound readies p for the next round's reply on the same client
// stream, and appends KindRoundStart. lastRound says the round is asked
// with tools disabled, since the rounds ran out: that is reported
// (agent.CodeMaxRounds).
func (p *Pipeline) NextRound(dst []byte, lastRound bool) []byte {
	p.out = dst
	defer p.release()
	lp := &p.loop
	lp.usage = agent.AddUsage(lp.usage, p.up.usage)
	lp.round++
	lp.toolsOff = lastRound
	p.sum.Rounds = lp.round
	p.resetReply()
	p.startAttemptReply()
	p.startRound()
	p.deliver(transform.Event{Kind: transform.KindRoundStart, Index: lp.round})
	if lastRound {
		p.deliver(transform.Event{Kind: transform.KindViolation, Code: agent.CodeMaxRounds, Offset: p.sum.ContentBytes,
			Text: []byte(agent.MaxRoundsDetail(lp.cfg.MaxRounds))})
	}
	return p.out
}

// EndTurn ends a turn whose last reply's server calls ran and that goes
// no further (a mixed turn: the client runs its own calls; the last
// round; a call waiting for the user): the reply finishes as any other,
// with finish reason tool_calls while a call waits (the client has a
// question to answer).
func (p *Pipeline) EndTurn(dst []byte) []byte {
	p.out = dst
	defer p.release()
	if p.ended {
		return p.out
	}
	p.loop.pending = false
	p.conclude()
	return p.out
}

// summedUsage returns the usage of the whole turn: the rounds before,
// summed, and the reply's own.
func (p *Pipeline) summedUsage() []byte {
	if len(p.loop.usage) == 0 {
		return p.up.usage
	}
	p.loop.sum = agent.AddUsage(append(p.loop.sum[:0], p.loop.usage...), p.up.usage)
	return p.loop.sum
}

// evidence records a server call for the terminal-state rules: called
// tools (called_tools: the artifact tools called, failed or not) and the
// artifact events the call emitted (emitted_events, which the rules
// trust first: specs/004 §7.3.1 "events first"). A call that failed, or
// whose result carried no file and is no configured event, emitted
// none, whatever its text says.
func (p *Pipeline) evidence(name string, artifacts int) {
	v := p.val.cfg
	if v == nil || !v.Terminal {
		return
	}
	if v.ArtifactTools.Has(name) {
		v.Evidence.AddCall(name)
	}
	v.Evidence.Artifacts += artifacts
}

// ranResult returns the result the model was given for the server call
// id, when it ran.
func (p *Pipeline) ranResult(id string) (string, bool) {
	for _, c := range p.loop.calls {
		if c.ID == id && c.done {
			return c.result, true
		}
	}
	return "", false
}

// ResourceUpdated appends KindResourceUpdated: a resource the route
// subscribes to changed (CONTRACT.md §13). It may come at any time while
// the stream is open; snapshot is JSON.
func (p *Pipeline) ResourceUpdated(dst []byte, key string, snapshot []byte) []byte {
	if !p.begun || p.ended {
		return dst
	}
	p.out = dst
	defer p.release()
	p.deliver(transform.Event{Kind: transform.KindResourceUpdated, Name: key, Text: snapshot})
	return p.out
}

// Agent appends one event of a sub-agent's stream (KindAgent) nested in
// server call i, which consults it (CONTRACT.md §13): ev's Code, Text,
// Name and Tool say what; its ID and Index are the call's. Nothing is
// written once the call has its result.
func (p *Pipeline) Agent(dst []byte, i int, ev transform.Event) []byte {
	if !p.ToolsPending() || i < 0 || i >= len(p.loop.calls) || p.loop.calls[i].done {
		return dst
	}
	p.out = dst
	defer p.release()
	c := &p.loop.calls[i]
	ev.Kind, ev.Index, ev.ID = transform.KindAgent, c.Index, c.ID
	p.deliver(ev)
	return p.out
}
