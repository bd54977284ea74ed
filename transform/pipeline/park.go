package pipeline

import (
	"encoding/json"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
)

// A round whose calls wait for the user (CONTRACT.md §13): the turn ends
// showing the questions, and the round is kept (RoundState, in the
// conversation store) until the user's answer resumes it in a later
// request, on a new stream: its calls that ran keep their results, the
// answered ones run on, and the loop goes on from there as if it had
// never stopped.

// RoundState is what a resumed round needs of a round that ended with
// calls waiting for the user. It is plain data: it is stored as JSON.
type RoundState struct {
	// Round is the round's number in its turn (1 for the first).
	Round int `json:"round"`
	// ToolsOff says the round was asked with tools disabled.
	ToolsOff bool `json:"tools_off,omitempty"`
	// Content is the round's assistant message content, as the next
	// round's request repeats it.
	Content string `json:"content"`
	// Calls are the round's server calls, in order.
	Calls []CallState `json:"calls"`
	// Usage is the turn's usage so far, summed over its rounds.
	Usage json.RawMessage `json:"usage,omitempty"`
}

// CallState is one server call of a parked round.
type CallState struct {
	Index     int    `json:"index"`
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Label     string `json:"label,omitempty"`
	Server    string `json:"server,omitempty"`
	// Result is a call's result as the model got it, when it ran.
	Result *string `json:"result,omitempty"`
	// Refused is the result of a call that was not to run.
	Refused string `json:"refused,omitempty"`
	// Park is set on a call that waits for the user.
	Park *agent.Park `json:"park,omitempty"`
}

// ParkedRound returns the round whose calls wait for the user (Parked).
// Call it before EndTurn.
func (p *Pipeline) ParkedRound() RoundState {
	lp := &p.loop
	content := lp.content
	if lp.parserCalls {
		content = lp.answer
	}
	st := RoundState{Round: lp.round, ToolsOff: lp.toolsOff, Content: string(content)}
	if u := agent.AddUsage(append([]byte(nil), lp.usage...), p.up.usage); len(u) > 0 {
		st.Usage = u
	}
	for _, c := range lp.calls {
		cs := CallState{Index: c.Index, ID: c.ID, Name: c.Name, Arguments: string(c.Arguments),
			Label: c.Tool.Label, Server: c.Tool.Server, Refused: c.Refused}
		switch {
		case c.done:
			r := c.result
			cs.Result = &r
		case c.Park != nil:
			cs.Park = c.Park
		}
		st.Calls = append(st.Calls, cs)
	}
	return st
}

// Resume readies p to go on with a parked round, on a new stream: its
// calls are ServerCalls again, pending (ToolsPending), those that ran with
// their results (Done: not run again, not shown again), the parked ones
// with the user's answers by call id (Answer; a parked call without one
// still waits). The caller runs them (RunTool, ToolResult) and asks Next
// what follows, as after any round. Call it after Reset and SetLoop,
// before anything is written.
func (p *Pipeline) Resume(st RoundState, answers map[string]agent.Answer) {
	lp := &p.loop
	lp.round, lp.toolsOff = max(st.Round, 1), st.ToolsOff
	p.sum.Rounds = lp.round
	lp.usage = append(lp.usage[:0], st.Usage...)
	lp.content = append(lp.content[:0], st.Content...)
	lp.parserCalls = false
	lp.calls = lp.calls[:0]
	next := 0
	for _, cs := range st.Calls {
		c := ServerCall{Index: cs.Index, ID: cs.ID, Name: cs.Name, Arguments: []byte(cs.Arguments), Refused: cs.Refused,
			Tool: transform.Tool{Label: cs.Label, Server: cs.Server, Round: lp.round}}
		switch {
		case cs.Result != nil:
			c.done, c.result = true, *cs.Result
		case cs.Park != nil:
			c.Park = cs.Park
			if a, ok := answers[cs.ID]; ok {
				c.Answer = &a
			}
		}
		lp.calls = append(lp.calls, c)
		next = max(next, cs.Index+1)
	}
	// The next round's calls are numbered after the resumed ones, which
	// the client stream shows again.
	p.calls = next
	lp.pending = true
}
