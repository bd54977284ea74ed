package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/tidwall/gjson"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/request"
)

// Sub-agents (CONTRACT.md §13, specs/002 §3.5, §7.3): a route's tools
// block declares agents, and the model is offered consult_agent {agent,
// question}. A call of it runs the agent: a loop of its own against the
// same upstream (the route's next handler, reverse_proxy, called again),
// with the agent's system prompt, the question as the user's message,
// and the route's tools the agent may use. Its stream is nested in the
// call: reasoning and answer text, its tool calls and their results, its
// rounds reach the client as they happen (skillpet agent_thinking,
// agent_token, agent_tool_start, agent_tool_result, agent_round); its
// answer is the call's result, which the consulting model reads, and the
// conversation stores (init replays it as the call's tool card). Other
// protocols show the call as the tool call it is, with the answer as its
// output. An agent's calls that would wait for the user are not made
// (it has no one to ask); it consults no agent.

// AgentHeader names the sub-agent a request to the upstream is made
// for; the consulting model's own requests do not carry it.
const AgentHeader = "X-Llmstream-Agent"

// consultTimeout bounds one consultation, all its rounds.
const consultTimeout = 5 * time.Minute

// agentTool is the consult_agent tool the model is offered.
func (h *Handler) agentTool() []byte {
	agents := h.settings.ToolServers.Agents
	var desc strings.Builder
	desc.WriteString("Consult one of your sub-agents: it works on the question with its own instructions and tools, and answers you. It sees only the question: put in it everything it needs (what the user decided, names, constraints). Agents:")
	ids := make([]string, len(agents))
	for i := range agents {
		a := &agents[i]
		ids[i] = a.ID
		desc.WriteString("\n- " + a.ID + " (" + a.DisplayName() + ")")
		if a.Description != "" {
			desc.WriteString(": " + a.Description)
		}
	}
	b := []byte(`{"type":"function","function":{"name":"` + config.ConsultTool + `","description":`)
	b = jsonout.AppendStringS(b, desc.String())
	enum, _ := json.Marshal(ids)
	b = append(b, `,"parameters":{"type":"object","properties":{"agent":{"type":"string","enum":`...)
	b = append(b, enum...)
	b = append(b, `,"description":"The agent to consult"},"question":{"type":"string","description":"What to ask, with everything the agent needs to know"}},"required":["agent","question"]}}}`...)
	return b
}

// agentConfig returns the route's agent id.
func (h *Handler) agentConfig(id string) *config.Agent {
	if h.settings.ToolServers == nil {
		return nil
	}
	for i := range h.settings.ToolServers.Agents {
		if a := &h.settings.ToolServers.Agents[i]; a.ID == id {
			return a
		}
	}
	return nil
}

// describeConsult names the agent a consult_agent call consults on its
// events (tool_start agentId, agentAvatarUrl; its label).
func (h *Handler) describeConsult(name string, args []byte, t *transform.Tool) {
	if name != config.ConsultTool {
		return
	}
	if a := h.agentConfig(gjson.GetBytes(args, "agent").String()); a != nil {
		t.AgentID, t.AgentName, t.AgentAvatar, t.Label = a.ID, a.DisplayName(), a.Avatar, a.DisplayLabel()
	}
}

// consult runs the agent call i consults and returns its answer as the
// call's result.
func (h *Handler) consult(sw *streamWriter, c *chat, i int, call pipeline.ServerCall) agent.Result {
	var args struct {
		Agent    string `json:"agent"`
		Question string `json:"question"`
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil || strings.TrimSpace(args.Question) == "" {
		return agent.ErrorResult("consult_agent needs {\"agent\": <an agent's id>, \"question\": <what to ask>}.")
	}
	a := h.agentConfig(args.Agent)
	if a == nil {
		return agent.ErrorResult(fmt.Sprintf("There is no agent %q. Consult one of the agents consult_agent lists.", args.Agent))
	}
	if c.next == nil || c.req == nil {
		return agent.ErrorResult("The agent cannot be consulted on this request.")
	}
	ctx, cancel := context.WithTimeout(sw.client, consultTimeout)
	defer cancel()
	run := &agentRun{h: h, sw: sw, c: c, index: i, a: a}
	answer, err := run.loop(ctx, args.Question)
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("The agent %s could not answer: %v", a.DisplayName(), err))
	}
	return agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: answer}}}
}

// agentRun is one consultation: the agent's loop, its stream relayed to
// the consulting call.
type agentRun struct {
	h     *Handler
	sw    *streamWriter
	c     *chat
	index int // the consulting call, in the parent's ServerCalls
	a     *config.Agent
}

// loop runs the agent's rounds and returns its answer: the text of its
// last round.
func (run *agentRun) loop(ctx context.Context, question string) (string, error) {
	h, a := run.h, run.a
	body, err := run.request(question)
	if err != nil {
		return "", err
	}
	enc := &agentEncoder{run: run}
	p := h.pool.Get().(*pipeline.Pipeline)
	defer h.pool.Put(p)
	meta := transform.Meta{MessageID: newID("msg_"), RequestID: run.sw.requestID, Stream: true, Limits: h.settings.Limits, Now: time.Now}
	p.Reset(enc, meta)
	allowed := map[string]transform.Tool{}
	if run.c.tools != nil {
		for _, name := range a.Tools {
			if t, ok := run.c.tools.byName[name]; ok {
				allowed[name] = t
			}
		}
	}
	p.SetLoop(&pipeline.Loop{
		Server:         func(name string) (transform.Tool, bool) { t, ok := allowed[name]; return t, ok },
		MaxRounds:      a.Rounds(),
		MaxResultBytes: h.settings.ToolServers.ResultBytes(),
	})
	for {
		enc.answer.Reset()
		if err := run.round(ctx, p, body); err != nil {
			return "", err
		}
		if enc.failed != "" {
			return "", errors.New(enc.failed)
		}
		if !p.ToolsPending() {
			break
		}
		calls := append([]pipeline.ServerCall(nil), p.ServerCalls()...)
		results := make([]agent.Result, len(calls))
		var wg sync.WaitGroup
		for j, call := range calls {
			p.RunTool(nil, j)
			if call.Refused != "" {
				results[j] = agent.ErrorResult(call.Refused)
				continue
			}
			if run.c.tools != nil && run.c.tools.approve[call.Name] {
				results[j] = agent.ErrorResult("This tool needs the user's approval, which an agent cannot ask: it was not run.")
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				var resolve toolserver.Resolver
				if run.c.tools != nil {
					resolve = run.c.tools.resolver
				}
				results[j] = h.servers.Call(ctx, call.Name, call.Arguments, toolserver.CallOptions{Resolver: resolve})
			}()
		}
		wg.Wait()
		for j := range calls {
			p.ToolResult(nil, j, results[j])
		}
		step := p.Next()
		if step == agent.StepEnd {
			p.EndTurn(nil)
			break
		}
		msgs := p.AppendRoundMessages(nil)
		nb, err := request.AppendMessages(make([]byte, 0, len(body)+len(msgs)+64), body, msgs)
		if err == nil && step == agent.StepLastRound {
			nb, err = request.AppendToolsOff(nil, nb)
		}
		if err != nil {
			return "", err
		}
		body = nb
		p.NextRound(nil, step == agent.StepLastRound)
	}
	if enc.failed != "" {
		return "", errors.New(enc.failed)
	}
	return strings.TrimSpace(enc.answer.String()), nil
}

// request is the agent's first request: its prompt, the question, the
// tools it may use, streamed.
func (run *agentRun) request(question string) ([]byte, error) {
	a := run.a
	model := a.Model
	if model == "" {
		model = gjson.GetBytes(run.c.body, "model").String()
	}
	b := []byte(`{"model":`)
	b = jsonout.AppendStringS(b, model)
	b = append(b, `,"stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":`...)
	b = jsonout.AppendStringS(b, run.h.settings.AgentPrompts[a.ID])
	b = append(b, `},{"role":"user","content":`...)
	b = jsonout.AppendStringS(b, question)
	b = append(b, `}]`...)
	if run.c.tools != nil {
		n := 0
		for _, t := range run.c.tools.tools {
			for _, name := range a.Tools {
				if t.Name == name {
					if n == 0 {
						b = append(b, `,"tools":[`...)
					} else {
						b = append(b, ',')
					}
					b = append(b, t.JSON...)
					n++
				}
			}
		}
		if n > 0 {
			b = append(b, ']')
		}
	}
	b = append(b, '}')
	if !json.Valid(b) {
		return nil, errors.New("the agent's request is not valid JSON")
	}
	return b, nil
}

// round sends one request of the agent through the route's upstream and
// feeds the reply to p.
func (run *agentRun) round(ctx context.Context, p *pipeline.Pipeline, body []byte) (err error) {
	r := run.c.req.Clone(ctx)
	setBody(r, body)
	// The agent's requests say whose they are, so that a Caddyfile can
	// send an agent to a model or an upstream of its own with a header
	// matcher, and the upstream's logs can tell them apart (the default
	// Caddyfile's demo gives its agent its own llm_mock this way).
	r.Header.Set(AgentHeader, run.a.ID)
	aw := &agentWriter{p: p, header: http.Header{}}
	defer func() {
		if rec := recover(); rec != nil {
			if rec != http.ErrAbortHandler {
				panic(rec)
			}
			err = errors.New("the upstream broke off the agent's reply")
		}
	}()
	if perr := run.c.next.ServeHTTP(aw, r); perr != nil && aw.status == 0 {
		return perr
	}
	if aw.status != 0 && (aw.status < 200 || aw.status > 299) {
		return fmt.Errorf("the upstream answered %d: %s", aw.status, strings.TrimSpace(string(aw.errBody)))
	}
	if !aw.started {
		return errors.New("the upstream sent no reply")
	}
	p.Close(nil)
	return ctx.Err()
}

// agentWriter is the ResponseWriter of an agent's upstream request: the
// reply goes to the agent's pipeline, a refusal's body is kept for the
// error.
type agentWriter struct {
	p       *pipeline.Pipeline
	header  http.Header
	status  int
	started bool
	errBody []byte
}

func (aw *agentWriter) Header() http.Header { return aw.header }

func (aw *agentWriter) WriteHeader(status int) {
	if aw.status != 0 || status >= 100 && status <= 199 {
		return
	}
	aw.status = status
	if status >= 200 && status <= 299 {
		aw.started = true
		aw.p.Start(nil, aw.header.Get("Content-Type"), aw.header.Get("X-Request-Id"))
	}
}

func (aw *agentWriter) Write(b []byte) (int, error) {
	if aw.status == 0 {
		aw.WriteHeader(http.StatusOK)
	}
	if !aw.started {
		if n := min(len(b), 1024-len(aw.errBody)); n > 0 {
			aw.errBody = append(aw.errBody, b[:n]...)
		}
		return len(b), nil
	}
	aw.p.Feed(nil, b)
	return len(b), nil
}

// Flush does nothing: the reply is parsed as it arrives.
func (aw *agentWriter) Flush() {}

// ReadFrom makes io.Copy go through Write.
func (aw *agentWriter) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{aw}, r)
}

// agentEncoder relays an agent's stream to the consulting call: each
// event it shows becomes a KindAgent of the parent stream (written at
// once), and the answer text is kept as the call's result.
type agentEncoder struct {
	run    *agentRun
	answer strings.Builder
	failed string
}

func (e *agentEncoder) Begin(dst []byte) []byte                        { return dst }
func (e *agentEncoder) AppendHeartbeat(dst []byte, _ time.Time) []byte { return dst }

func (e *agentEncoder) AppendEvent(dst []byte, ev transform.Event) []byte {
	a := e.run.a
	tool := &transform.Tool{AgentID: a.ID, AgentName: a.DisplayName()}
	switch ev.Kind {
	case transform.KindReasoningDelta, transform.KindPhaseDelta:
		e.run.sw.agentEvent(e.run.index, transform.Event{Code: transform.AgentThinking, Text: ev.Text, Tool: tool})
	case transform.KindAnswerDelta:
		e.answer.Write(ev.Text)
		e.run.sw.agentEvent(e.run.index, transform.Event{Code: transform.AgentToken, Text: ev.Text, Tool: tool})
	case transform.KindToolRun:
		if ev.Tool != nil {
			tool.Label = ev.Tool.Label
		}
		e.run.sw.agentEvent(e.run.index, transform.Event{Code: transform.AgentToolStart, Name: ev.Name, Tool: tool})
	case transform.KindToolResult:
		if ev.Tool != nil {
			tool.Status, tool.Output = ev.Tool.Status, ev.Tool.Output
		}
		e.run.sw.agentEvent(e.run.index, transform.Event{Code: transform.AgentToolResult, Name: ev.Name, Tool: tool})
	case transform.KindRoundStart:
		e.run.sw.agentEvent(e.run.index, transform.Event{Code: transform.AgentRound, Tool: tool})
	case transform.KindError:
		e.failed = string(ev.Text)
		if e.failed == "" {
			e.failed = ev.Code
		}
	}
	return dst
}

// agentEvent writes one event of a sub-agent's stream, nested in server
// call i.
func (sw *streamWriter) agentEvent(i int, ev transform.Event) {
	sw.mu.Lock()
	defer sw.mu.Unlock()
	if sw.gone {
		return
	}
	sw.out = sw.p.Agent(sw.out[:0], i, ev)
	sw.send()
}

var _ http.Flusher = (*agentWriter)(nil)
