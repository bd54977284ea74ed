package skillpet

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// A sub-agent's own stream (CONTRACT.md §13, specs/002 §3.5), nested in
// the call that consulted it: agent_thinking and agent_token {id, t,
// agentName, agentId} (the text is "t", not "content"), agent_tool_start
// {parentId, name, label} and agent_tool_result {parentId, name, summary,
// status} for the sub-agent's own tool calls, agent_round {id} between its
// rounds. They come between the consulting call's tool_start and its
// tool_result; a sub-agent's events of a call that is not running are
// dropped (the client has no card to put them in).

// maxSummary bounds an agent_tool_result's summary: the sub-agent got
// the whole result, the card shows a line of it.
const maxSummary = 200

// appendAgent appends one event of a sub-agent's stream.
func (e *Encoder) appendAgent(dst []byte, ev transform.Event) []byte {
	if e.running(ev.ID) < 0 || ev.Tool == nil {
		return dst
	}
	t := ev.Tool
	switch ev.Code {
	case transform.AgentThinking, transform.AgentToken:
		if len(ev.Text) == 0 {
			return dst
		}
		if ev.Code == transform.AgentThinking && e.req.NoThinking {
			return dst
		}
		dst = append(dst, "event: agent_"...)
		dst = append(dst, ev.Code...)
		dst = append(dst, "\ndata: {\"id\":"...)
		dst = jsonout.AppendStringS(dst, ev.ID)
		dst = append(dst, `,"t":`...)
		dst = jsonout.AppendString(dst, ev.Text)
		dst = append(dst, `,"agentName":`...)
		dst = jsonout.AppendStringS(dst, t.AgentName)
		dst = append(dst, `,"agentId":`...)
		dst = jsonout.AppendStringS(dst, t.AgentID)
		return append(dst, "}\n\n"...)
	case transform.AgentToolStart:
		dst = append(dst, "event: agent_tool_start\ndata: {\"parentId\":"...)
		dst = jsonout.AppendStringS(dst, ev.ID)
		dst = append(dst, `,"name":`...)
		dst = jsonout.AppendStringS(dst, ev.Name)
		dst = append(dst, `,"label":`...)
		dst = jsonout.AppendStringS(dst, labelOf(t.Label, ev.Name))
		return append(dst, "}\n\n"...)
	case transform.AgentToolResult:
		status := transform.ToolFailed
		if t.Status == transform.ToolCompleted || t.Status == transform.ToolDenied {
			status = transform.ToolCompleted
		}
		dst = append(dst, "event: agent_tool_result\ndata: {\"parentId\":"...)
		dst = jsonout.AppendStringS(dst, ev.ID)
		dst = append(dst, `,"name":`...)
		dst = jsonout.AppendStringS(dst, ev.Name)
		dst = append(dst, `,"summary":`...)
		dst = jsonout.AppendStringS(dst, summary(t.Output))
		dst = append(dst, `,"status":"`...)
		dst = append(dst, status...)
		return append(dst, "\"}\n\n"...)
	case transform.AgentRound:
		dst = append(dst, "event: agent_round\ndata: {\"id\":"...)
		dst = jsonout.AppendStringS(dst, ev.ID)
		return append(dst, "}\n\n"...)
	}
	return dst
}

// labelOf is a label, else the name.
func labelOf(label, name string) string {
	if label != "" {
		return label
	}
	return name
}

// summary is the first line of a result, at most maxSummary bytes on a
// character boundary.
func summary(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\n' {
			s = s[:i]
			break
		}
	}
	if len(s) <= maxSummary {
		return s
	}
	cut := maxSummary
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + "…"
}
