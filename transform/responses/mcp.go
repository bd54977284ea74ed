package responses

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// A call to a tool the gateway runs (CONTRACT.md §12) is an mcp_call
// output item, as OpenAI shows the calls of its hosted MCP tool: added in
// progress when the model starts writing it (server_label the route's
// tool server, arguments empty), its arguments streamed as
// response.mcp_call_arguments.delta and completed by
// response.mcp_call_arguments.done, response.mcp_call.in_progress when
// the gateway runs it, then response.mcp_call.completed or
// response.mcp_call.failed and response.output_item.done with the item's
// output (the result the model got) or its error. The rounds' items
// continue in the one response, whose usage is summed over them.
//
// The error is the object openai-go (v3.96) types it as,
// {"type":"mcp_tool_execution_error","content":[{"type":"text","text":…}]}:
// openai-node (6.49) still types it as a string but does not check it,
// and the object is the API's current shape; both SDKs decode either
// without error. A stream that fails while a call runs fails the call
// first (response.mcp_call.failed and its item done), with the failure as
// its error; an item whose arguments were still streaming stays
// incomplete in response.failed, like any other unfinished item.

// mcpCall is what an mcp_call item adds to an item: its server and its
// outcome.
type mcpCall struct {
	server string
	// argsDone: response.mcp_call_arguments.done went out; running:
	// response.mcp_call.in_progress did and no outcome yet.
	argsDone, running bool
	// failed: the outcome is an error; cut: the response ended before
	// the call ran (status incomplete, no outcome).
	failed, cut bool
	outcome     string // output, or the error's text when failed
}

// newMCPItem returns the mcp_call item of server call ev.
func newMCPItem(ev transform.Event) item {
	m := &mcpCall{}
	if ev.Tool != nil {
		m.server = ev.Tool.Server
	}
	return item{kind: itemMCP, callID: ev.ID, name: ev.Name, mcp: m}
}

// argsClosed reports whether a call item's arguments are complete: it is
// done, or it is an mcp_call whose arguments.done went out.
func (it *item) argsClosed() bool {
	return it.done || it.kind == itemMCP && it.mcp.argsDone
}

// mcpArgsDone completes mcp_call i's arguments: the item stays open until
// the call's outcome.
func (e *Encoder) mcpArgsDone(dst []byte, i int) []byte {
	it := &e.items[i]
	if it.mcp.argsDone {
		return dst
	}
	it.mcp.argsDone = true
	if !e.meta.Stream {
		return dst
	}
	dst = e.eventHead(dst, "response.mcp_call_arguments.done")
	dst = e.appendItemRef(dst, i)
	dst = append(dst, `,"arguments":`...)
	dst = jsonout.AppendString(dst, it.text)
	return append(dst, eventTail...)
}

// mcpItem returns the output index of the mcp_call item of server call
// ev.Index, -1 when it has none (a loop event for a call whose start never
// came, or for a client's call, is not sent).
func (e *Encoder) mcpItem(ev transform.Event) int {
	if ev.Index < 0 || ev.Index >= len(e.tools) || e.tools[ev.Index] == 0 {
		return -1
	}
	i := int(e.tools[ev.Index]) - 1
	if e.items[i].kind != itemMCP || e.items[i].done {
		return -1
	}
	return i
}

// mcpRun sends response.mcp_call.in_progress when the gateway runs the
// call, completing its arguments first if the model's end never came.
func (e *Encoder) mcpRun(dst []byte, ev transform.Event) []byte {
	i := e.mcpItem(ev)
	if i < 0 && ev.Index >= 0 && (ev.Index >= len(e.tools) || e.tools[ev.Index] == 0) {
		// A call resumed after the user answered (CONTRACT.md §13): its
		// model round was an earlier response, so its item opens here,
		// with the arguments the run carries.
		ev.Server = true
		var ok bool
		if dst, i, ok = e.toolItem(dst, ev); !ok {
			return dst
		}
		if len(ev.Text) > 0 {
			dst = e.argsDelta(dst, i, ev.Text)
		}
	}
	if i < 0 || e.items[i].mcp.running {
		return dst
	}
	dst = e.closeText(dst, e.kindOpen())
	dst = e.mcpArgsDone(dst, i)
	e.items[i].mcp.running = true
	if !e.meta.Stream {
		return dst
	}
	dst = e.eventHead(dst, "response.mcp_call.in_progress")
	dst = e.appendItemRef(dst, i)
	return append(dst, eventTail...)
}

// mcpResult ends a running call with its outcome.
func (e *Encoder) mcpResult(dst []byte, ev transform.Event) []byte {
	i := e.mcpItem(ev)
	if i < 0 || !e.items[i].mcp.running {
		return dst
	}
	failed, outcome := true, ""
	if ev.Tool != nil {
		failed, outcome = ev.Tool.Status != transform.ToolCompleted, ev.Tool.Output
	}
	return e.mcpEnd(dst, i, failed, outcome)
}

// mcpAwait shows a call that waits for the user's approval (CONTRACT.md
// §13, tools a route marks approve) as OpenAI shows its hosted MCP tool's
// (require_approval): an mcp_approval_request item {id, server_label,
// name, arguments}, whose id the client sends back as an
// mcp_approval_response's approval_request_id. The mcp_call item the
// model's call opened ends incomplete (the call did not run); the next
// request's mcp_approval_response resumes it in a new response, as a new
// mcp_call. Only approvals are asked on this protocol; any other question
// fails the call, saying so.
func (e *Encoder) mcpAwait(dst []byte, ev transform.Event) []byte {
	i := e.mcpItem(ev)
	if i < 0 {
		return dst
	}
	if ev.Tool.Await == nil || ev.Tool.Await.Kind != transform.AwaitApproval || ev.Tool.Await.ID == "" {
		e.items[i].mcp.running = true
		return e.mcpEnd(dst, i, true, "the tool call waits for an answer this protocol cannot ask for")
	}
	dst = e.closeText(dst, e.kindOpen())
	dst = e.mcpArgsDone(dst, i)
	call := &e.items[i]
	call.mcp.running, call.mcp.cut = false, true
	dst = e.itemDone(dst, i)
	call = &e.items[i]
	args := append([]byte(nil), call.text...)
	dst, j := e.addItem(dst, item{kind: itemApproval, callID: ev.Tool.Await.ID, name: call.name, text: args, mcp: &mcpCall{server: call.mcp.server}})
	return e.itemDone(dst, j)
}

// mcpEnd sends mcp_call i's outcome event and its output_item.done.
func (e *Encoder) mcpEnd(dst []byte, i int, failed bool, outcome string) []byte {
	m := e.items[i].mcp
	m.running, m.failed, m.outcome = false, failed, outcome
	if e.meta.Stream {
		if failed {
			dst = e.eventHead(dst, "response.mcp_call.failed")
		} else {
			dst = e.eventHead(dst, "response.mcp_call.completed")
		}
		dst = e.appendItemRef(dst, i)
		dst = append(dst, eventTail...)
	}
	return e.itemDone(dst, i)
}

// mcpAbandon ends mcp_call i at the end of a response that owes it an
// outcome: a running call fails, one that never ran is done incomplete.
func (e *Encoder) mcpAbandon(dst []byte, i int) []byte {
	dst = e.mcpArgsDone(dst, i)
	if e.items[i].mcp.running {
		return e.mcpEnd(dst, i, true, "the tool call did not finish")
	}
	e.items[i].mcp.cut = true
	return e.itemDone(dst, i)
}

// failRuns fails every call still running when the stream fails, with
// message as its error.
func (e *Encoder) failRuns(dst []byte, message string) []byte {
	for i := range e.items {
		if it := &e.items[i]; it.kind == itemMCP && !it.done && it.mcp.running {
			dst = e.mcpEnd(dst, i, true, message)
		}
	}
	return dst
}

// appendMCPItem appends the members of mcp_call i after its id: as it
// opens (whole false) or with everything it said, status completed or
// failed once done, incomplete otherwise (a response that ended before
// its outcome).
func (e *Encoder) appendMCPItem(dst []byte, i int, whole bool) []byte {
	it := &e.items[i]
	status := "in_progress"
	switch {
	case !whole:
	case it.done && it.mcp.cut:
		status = "incomplete"
	case it.done && it.mcp.failed:
		status = "failed"
	case it.done:
		status = "completed"
	default:
		status = "incomplete"
	}
	dst = append(dst, `,"type":"mcp_call","status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","server_label":`...)
	dst = jsonout.AppendStringS(dst, it.mcp.server)
	dst = append(dst, `,"name":`...)
	dst = jsonout.AppendStringS(dst, it.name)
	dst = append(dst, `,"arguments":`...)
	if whole {
		dst = jsonout.AppendString(dst, it.text)
	} else {
		dst = append(dst, `""`...)
	}
	dst = append(dst, `,"approval_request_id":null,"output":`...)
	switch {
	case whole && it.done && it.mcp.cut:
		dst = append(dst, `null,"error":null`...)
	case whole && it.done && !it.mcp.failed:
		dst = jsonout.AppendStringS(dst, it.mcp.outcome)
		dst = append(dst, `,"error":null`...)
	case whole && it.done:
		dst = append(dst, `null,"error":{"type":"mcp_tool_execution_error","content":[{"type":"text","text":`...)
		dst = jsonout.AppendStringS(dst, it.mcp.outcome)
		dst = append(dst, `}]}`...)
	default:
		dst = append(dst, `null,"error":null`...)
	}
	return dst
}
