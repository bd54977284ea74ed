package skillpet

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// The agent loop's events (CONTRACT.md §12) as specs/002 §3 shows a backend
// that runs tools itself: a server call's arguments stream as
// tool_args_heartbeat and it has no tool_start of its own when the model
// finishes writing it; the gateway starting it is tool_start {id, name,
// label, args}; its progress is status {message}, the transient line the
// next token clears (§3.2); its outcome is tool_result {id, name, label,
// mode: "auto", status, message} (§3.3); the next round is round_start
// {round} (§3.2), after which thinking may come again (§3.9).

// maxCalls bounds the server calls a stream tracks, far above what a turn
// makes (max_rounds × max_tool_calls), so that a bad sequence cannot grow
// the lists without bound.
const maxCalls = 1 << 10

// runningCall is a server call whose tool_start went out and whose
// tool_result has not.
type runningCall struct {
	id, name, label string
	// image is the call's image mode when it generates images, prompt
	// its prompt argument (specs/002 §3.7).
	image, prompt string
}

// appendToolRun appends tool_start for a server call the gateway starts,
// as the reply's part: the thinking ends first. A call already started
// (the same id) is not started twice: the client keys its tool card by id.
func (e *Encoder) appendToolRun(dst []byte, ev transform.Event) []byte {
	if e.started(ev.ID) {
		return dst
	}
	label := ev.Name
	if ev.Tool != nil && ev.Tool.Label != "" {
		label = ev.Tool.Label
	}
	if len(e.runs) >= maxCalls || len(e.starts) >= maxCalls {
		return dst
	}
	dst = e.beginReply(dst)
	rc := runningCall{id: ev.ID, name: ev.Name, label: label}
	if ev.Tool != nil && ev.Tool.Image != "" {
		rc.image, rc.prompt = ev.Tool.Image, promptOf(ev.Text)
	}
	e.runs = append(e.runs, rc)
	e.starts = append(e.starts, ev.ID)
	dst = e.appendStart(dst, ev, label)
	if rc.image != "" {
		// An image tool shows a skeleton while it runs.
		dst = appendImageGenerating(dst, ev.ID, rc.prompt)
	}
	return dst
}

// appendStart appends a server call's tool_start.
func (e *Encoder) appendStart(dst []byte, ev transform.Event, label string) []byte {
	if ev.Tool != nil && ev.Tool.AgentID != "" {
		// A call that consults a sub-agent (specs/002 §3.3): tool_start
		// names the agent and its avatar.
		dst = appendToolStart(dst, ev.ID, ev.Name, label, ev.Text)
		dst = dst[:len(dst)-len("}\n\n")]
		dst = append(dst, `,"agentId":`...)
		dst = jsonout.AppendStringS(dst, ev.Tool.AgentID)
		if ev.Tool.AgentAvatar != "" {
			dst = append(dst, `,"agentAvatarUrl":`...)
			dst = jsonout.AppendStringS(dst, ev.Tool.AgentAvatar)
		}
		return append(dst, "}\n\n"...)
	}
	return appendToolStart(dst, ev.ID, ev.Name, label, ev.Text)
}

// appendToolProgress appends status {message} for a running call: the
// tool's own message, else its label with "(progress/total)", or "…"
// when the total is unknown (a bare progress number is an opaque count). Progress of a call that is not
// running is dropped.
func (e *Encoder) appendToolProgress(dst []byte, ev transform.Event) []byte {
	i := e.running(ev.ID)
	if i < 0 || ev.Tool == nil {
		return dst
	}
	dst = append(dst, "event: status\ndata: {\"message\":"...)
	if ev.Tool.Message != "" {
		dst = jsonout.AppendStringS(dst, ev.Tool.Message)
	} else {
		dst = append(dst, '"')
		dst = jsonout.AppendStringBodyS(dst, e.runs[i].label)
		if ev.Tool.Total > 0 {
			dst = append(dst, " ("...)
			dst = strconv.AppendFloat(dst, ev.Tool.Progress, 'f', -1, 64)
			dst = append(dst, '/')
			dst = strconv.AppendFloat(dst, ev.Tool.Total, 'f', -1, 64)
			dst = append(dst, ')')
		} else {
			dst = append(dst, "…"...)
		}
		dst = append(dst, '"')
	}
	return append(dst, "}\n\n"...)
}

// appendToolResult appends tool_result for a running call, with the
// result the model got as its message. A result for a call that is not
// running (no tool_start went out) is dropped: the client matches
// tool_result to a tool_start.
func (e *Encoder) appendToolResult(dst []byte, ev transform.Event) []byte {
	i := e.running(ev.ID)
	if i < 0 {
		return dst
	}
	status, output := transform.ToolFailed, ""
	rc := e.runs[i]
	if ev.Tool != nil {
		if ev.Tool.Status == transform.ToolAwaiting && ev.Tool.Await != nil {
			return e.appendAwaiting(dst, i, ev.Tool.Await)
		}
		output = ev.Tool.Output
		if ev.Tool.Status == transform.ToolCompleted || ev.Tool.Status == transform.ToolDenied {
			// A declined call is no failure: the user chose, and the
			// message says so.
			status = transform.ToolCompleted
		}
	}
	dst = e.appendResultOf(dst, i, status, output)
	if ev.Tool != nil {
		dst = appendArtifactResources(dst, ev.Tool.Artifacts)
		if rc.image != "" || len(ev.Tool.Images) > 0 {
			dst = appendImageGeneration(dst, ev.ID, rc.prompt, rc.image, ev.Tool.Images)
		}
	}
	return dst
}

// appendArtifactResources appends a resource event (specs/002 §3.8) per
// artifact of a result, after its tool_result: a file as resourceType
// "file" {url, name, type} with its name as the fallback text, the
// route's event of the tool as resourceType <event> with the result's
// data. The component shows them as parts of the reply, and the
// conversation stores them in its parts.
func appendArtifactResources(dst []byte, arts []transform.Artifact) []byte {
	for _, a := range arts {
		dst = append(dst, "event: resource\ndata: {\"resourceType\":"...)
		if a.Kind == transform.ArtifactResource {
			dst = jsonout.AppendStringS(dst, a.Name)
			dst = append(dst, `,"data":`...)
			dst = jsonout.AppendOrString(dst, a.Data)
			dst = append(dst, "}\n\n"...)
			continue
		}
		dst = jsonout.AppendStringS(dst, a.Kind)
		dst = append(dst, `,"data":`...)
		if a.Kind == transform.ArtifactFile {
			dst = append(dst, `{"url":`...)
			dst = jsonout.AppendStringS(dst, a.URL)
			dst = append(dst, `,"name":`...)
			dst = jsonout.AppendStringS(dst, a.Name)
			dst = append(dst, `,"type":`...)
			dst = jsonout.AppendStringS(dst, a.Type)
			dst = append(dst, `},"fallbackText":`...)
			dst = jsonout.AppendStringS(dst, fileLabel+a.Name)
		} else {
			dst = jsonout.AppendOrString(dst, a.Data)
		}
		dst = append(dst, "}\n\n"...)
	}
	return dst
}

// fileLabel starts a file resource's fallback text.
const fileLabel = "文件："

// appendAwaiting appends the tool_result of a call that waits for the user
// (CONTRACT.md §13, specs/002 §3.3): an approval or a choice as mode
// "interactive", status "awaiting_user", with its options (the component
// then posts the user's pick to /tool-response); a form as mode
// "ask_user", followed by the ask_user event with its questions (the
// component sends the answers as the next message, §3.4).
func (e *Encoder) appendAwaiting(dst []byte, i int, w *transform.Await) []byte {
	c := e.runs[i]
	e.runs = append(e.runs[:i], e.runs[i+1:]...)
	mode := "interactive"
	if w.Kind == transform.AwaitForm {
		mode = "ask_user"
	}
	dst = append(dst, "event: tool_result\ndata: {\"id\":"...)
	dst = jsonout.AppendStringS(dst, c.id)
	dst = append(dst, `,"name":`...)
	dst = jsonout.AppendStringS(dst, c.name)
	dst = append(dst, `,"label":`...)
	dst = jsonout.AppendStringS(dst, c.label)
	dst = append(dst, `,"mode":"`...)
	dst = append(dst, mode...)
	dst = append(dst, `","status":"awaiting_user","message":`...)
	dst = jsonout.AppendStringS(dst, w.Message)
	if w.Kind != transform.AwaitForm {
		dst = append(dst, `,"options":[`...)
		for j, o := range w.Options {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = append(dst, `{"id":`...)
			dst = jsonout.AppendStringS(dst, o.ID)
			dst = append(dst, `,"label":`...)
			dst = jsonout.AppendStringS(dst, o.Label)
			if o.Description != "" {
				dst = append(dst, `,"description":`...)
				dst = jsonout.AppendStringS(dst, o.Description)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	dst = append(dst, "}\n\n"...)
	if w.Kind == transform.AwaitForm {
		qs := make([]AskUserQuestion, 0, len(w.Questions))
		for _, q := range w.Questions {
			aq := AskUserQuestion{ID: q.ID, Prompt: q.Prompt, AllowFreeText: q.AllowFreeText, AllowMultiple: q.AllowMultiple,
				FreeTextPlaceholder: q.Placeholder}
			for _, o := range q.Options {
				aq.Options = append(aq.Options, AskUserOption{ID: o.ID, Label: o.Label})
			}
			qs = append(qs, aq)
		}
		dst = appendAskUserEvent(dst, qs)
	}
	return dst
}

// appendResultOf appends tool_result for running call i and forgets it.
func (e *Encoder) appendResultOf(dst []byte, i int, status, message string) []byte {
	c := e.runs[i]
	e.runs = append(e.runs[:i], e.runs[i+1:]...)
	dst = append(dst, "event: tool_result\ndata: {\"id\":"...)
	dst = jsonout.AppendStringS(dst, c.id)
	dst = append(dst, `,"name":`...)
	dst = jsonout.AppendStringS(dst, c.name)
	dst = append(dst, `,"label":`...)
	dst = jsonout.AppendStringS(dst, c.label)
	dst = append(dst, `,"mode":"auto","status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","message":`...)
	dst = jsonout.AppendStringS(dst, message)
	return append(dst, "}\n\n"...)
}

// abandonRuns appends an error tool_result for every call still running
// when the stream ends, with the stream's failure as the message, so that
// no tool card is left spinning: the client cancels nothing, llmstream
// did.
func (e *Encoder) abandonRuns(dst []byte, message string) []byte {
	for len(e.runs) > 0 {
		dst = e.appendResultOf(dst, 0, transform.ToolFailed, message)
	}
	return dst
}

// running returns the index in runs of the call with id, -1 if none.
func (e *Encoder) running(id string) int {
	for i := range e.runs {
		if e.runs[i].id == id {
			return i
		}
	}
	return -1
}

// started reports whether a tool_start with id went out: the client keys
// its tool cards by id, so none is started twice.
func (e *Encoder) started(id string) bool {
	for _, d := range e.starts {
		if d == id {
			return true
		}
	}
	return false
}

// appendRound appends round_start {round} for the next round, thinking_done
// first when thinking is open and the held answer before it: the client
// moves the text and thinking so far into the message's parts (§3.2), and
// the new round may think again. The encoder numbers the rounds itself, 2
// for the first round_start, so that the wire counts up by one whether the
// round is the agent loop's or a validation retry's.
func (e *Encoder) appendRound(dst []byte) []byte {
	dst = e.beginReply(dst)
	dst = e.endThinking(dst)
	e.round++
	dst = append(dst, "event: round_start\ndata: {\"round\":"...)
	dst = strconv.AppendInt(dst, int64(e.round+1), 10)
	dst = append(dst, "}\n\n"...)
	o := &e.order
	o.replied, o.leftOut = false, false
	e.thought, e.newBlock = false, false
	return dst
}
