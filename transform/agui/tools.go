package agui

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// Tool calls. A call the client runs is TOOL_CALL_START {toolCallId,
// toolCallName, parentMessageId}, TOOL_CALL_ARGS with each fragment of its
// arguments as the model wrote them, and TOOL_CALL_END: the client (a
// CopilotKit frontend tool) runs it once the run is over and sends the
// result in the next run's messages. A call to a tool the gateway runs
// (CONTRACT.md §12) is the same three events, its TOOL_CALL_START's
// metadata naming the tool server and the label, {llmstream: {server,
// label}} (the client folds it into the call), then TOOL_CALL_RESULT
// {messageId, toolCallId, content: the result as the model got it, role:
// "tool", metadata: {llmstream: {status: "completed" | "error"}}} once the
// gateway has it: a call with its result is no call for the client to
// run (1.0's pendingToolCallIds), and the result is a tool message in the
// client's history, sent back with the next run like any other. Progress
// while it runs is an activity message: ACTIVITY_SNAPSHOT {messageId:
// "<mid>-progress-<i>", activityType: "llmstream.tool_progress", content:
// {toolCallId, toolName, status: "running", progress, total, message}},
// replaced by each report, and ACTIVITY_DELTA setting /status to the
// outcome when the result comes.

// maxToolIndex bounds the tool call indices tracked, far above
// Limits.MaxToolCalls, so that a bad index cannot grow the state without
// bound.
const maxToolIndex = 1 << 12

// The state of a tool call, by pipeline index, in calls: what was sent.
const (
	callStarted  uint8 = 1 << iota // TOOL_CALL_START
	callArgs                       // a TOOL_CALL_ARGS
	callEnded                      // TOOL_CALL_END
	callRunning                    // the gateway runs it (KindToolRun)
	callResult                     // TOOL_CALL_RESULT
	callProgress                   // an ACTIVITY_SNAPSHOT
	callServer                     // a call to a tool the gateway runs
)

// activityType is the activity messages' discriminator.
const activityType = "llmstream.tool_progress"

// call returns the state of tool call i, nil for an index outside
// [0, maxToolIndex), which is not sent at all.
func (e *Encoder) call(i int) *uint8 {
	if i < 0 || i >= maxToolIndex {
		return nil
	}
	for len(e.calls) <= i {
		e.calls = append(e.calls, 0)
		e.ids = append(e.ids, "")
	}
	return &e.calls[i]
}

// appendToolStart appends TOOL_CALL_START for call ev.Index, once; any
// reasoning closes first (the model moved on).
func (e *Encoder) appendToolStart(dst []byte, ev transform.Event) []byte {
	st := e.call(ev.Index)
	if st == nil || *st&callStarted != 0 {
		return dst // a second start would open a second call
	}
	return e.startCall(dst, st, ev)
}

// startCall sends TOOL_CALL_START for a call not started yet. The call's
// id is the one the pipeline gave it; one that is empty, another call's
// of the stream, or a call's in the run's history (Request.History)
// becomes "<mid>-call-<i>": the verifier and the client key calls by id,
// the client across the thread. The next run's history then carries the
// new id, in the assistant message and in the tool message answering it.
func (e *Encoder) startCall(dst []byte, st *uint8, ev transform.Event) []byte {
	dst = e.closeReasoning(dst)
	*st = callStarted
	if ev.Server {
		*st |= callServer
	} else {
		e.toolUse = true
	}
	id := ev.ID
	for j, other := range e.ids {
		if id == "" || j != ev.Index && other == id || e.history.HasCall(id) {
			id = e.mid + "-call-" + strconv.Itoa(ev.Index)
			break
		}
	}
	e.ids[ev.Index] = id
	e.claimMessage()
	dst = append(dst, `data: {"type":"TOOL_CALL_START","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, id)
	dst = append(dst, `,"toolCallName":`...)
	dst = jsonout.AppendStringS(dst, ev.Name)
	dst = append(dst, `,"parentMessageId":`...)
	dst = e.appendTextID(dst)
	if ev.Server && ev.Tool != nil {
		dst = append(dst, `,"metadata":{"llmstream":{"server":`...)
		dst = jsonout.AppendStringS(dst, ev.Tool.Server)
		dst = append(dst, `,"label":`...)
		label := ev.Tool.Label
		if label == "" {
			label = ev.Name
		}
		dst = jsonout.AppendStringS(dst, label)
		dst = append(dst, "}}"...)
	}
	return append(dst, "}\n\n"...)
}

// appendToolArgs appends TOOL_CALL_ARGS with a fragment of the arguments
// of a call between its start and its end; empty fragments send nothing.
func (e *Encoder) appendToolArgs(dst []byte, ev transform.Event) []byte {
	if len(ev.Text) == 0 || ev.Index < 0 || ev.Index >= len(e.calls) || e.calls[ev.Index]&(callStarted|callEnded) != callStarted {
		return dst
	}
	e.calls[ev.Index] |= callArgs
	return e.appendArgs(dst, ev.Index, ev.Text)
}

// appendArgs appends TOOL_CALL_ARGS for call i.
func (e *Encoder) appendArgs(dst []byte, i int, args []byte) []byte {
	dst = append(dst, `data: {"type":"TOOL_CALL_ARGS","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, e.ids[i])
	dst = append(dst, `,"delta":`...)
	dst = jsonout.AppendString(dst, args)
	return append(dst, "}\n\n"...)
}

// appendToolEnd appends TOOL_CALL_END for a call, once. A call whose
// arguments never streamed gets them whole first (ev.Text, "{}" when the
// model sent none), so that the client's call, and the history it sends
// back, has them; a call whose start never came is started first.
func (e *Encoder) appendToolEnd(dst []byte, ev transform.Event) []byte {
	st := e.call(ev.Index)
	if st == nil || *st&callEnded != 0 {
		return dst
	}
	if *st&callStarted == 0 {
		dst = e.startCall(dst, st, ev)
	}
	if *st&callArgs == 0 && len(ev.Text) > 0 {
		*st |= callArgs
		dst = e.appendArgs(dst, ev.Index, ev.Text)
	}
	*st |= callEnded
	return e.appendEndEvent(dst, ev.Index)
}

// appendEndEvent appends TOOL_CALL_END for call i.
func (e *Encoder) appendEndEvent(dst []byte, i int) []byte {
	dst = append(dst, `data: {"type":"TOOL_CALL_END","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, e.ids[i])
	return append(dst, "}\n\n"...)
}

// appendToolRun marks a server call running. The reply that made the
// call is over (the gateway runs its calls once it ended), so the round's
// text and reasoning messages end now rather than stay open while the
// tools run. The call's start, arguments and end came as the model wrote
// it; what the pipeline has not sent of them (never, when it keeps its
// promises) is sent now, with the complete arguments, so that the result
// has a call to answer.
func (e *Encoder) appendToolRun(dst []byte, ev transform.Event) []byte {
	st := e.call(ev.Index)
	if st == nil || *st&callRunning != 0 {
		return dst
	}
	dst = e.closeRound(dst)
	ev.Server = true
	dst = e.appendToolEnd(dst, ev)
	*st |= callRunning | callServer
	return dst
}

// appendToolProgress appends the ACTIVITY_SNAPSHOT of a running server
// call's progress: each replaces the one before (replace defaults to
// true). total and message are null when the tool gave none.
func (e *Encoder) appendToolProgress(dst []byte, ev transform.Event) []byte {
	if ev.Tool == nil || !e.running(ev.Index) {
		return dst
	}
	e.calls[ev.Index] |= callProgress
	dst = append(dst, `data: {"type":"ACTIVITY_SNAPSHOT","messageId":`...)
	dst = e.appendID(dst, "progress", int64(ev.Index))
	dst = append(dst, `,"activityType":"`+activityType+`","content":{"toolCallId":`...)
	dst = jsonout.AppendStringS(dst, e.ids[ev.Index])
	dst = append(dst, `,"toolName":`...)
	dst = jsonout.AppendStringS(dst, ev.Name)
	dst = append(dst, `,"status":"running","progress":`...)
	dst = appendNumber(dst, ev.Tool.Progress)
	dst = append(dst, `,"total":`...)
	if ev.Tool.Total > 0 {
		dst = appendNumber(dst, ev.Tool.Total)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"message":`...)
	if ev.Tool.Message != "" {
		dst = jsonout.AppendStringS(dst, ev.Tool.Message)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, "}}\n\n"...)
}

// running reports whether call i runs and has no result yet.
func (e *Encoder) running(i int) bool {
	return i >= 0 && i < len(e.calls) && e.calls[i]&(callRunning|callResult) == callRunning
}

// appendToolResult appends the TOOL_CALL_RESULT of a running server call.
// A result without a Tool is a failure with no message.
func (e *Encoder) appendToolResult(dst []byte, ev transform.Event) []byte {
	if !e.running(ev.Index) {
		return dst
	}
	failed, output := true, ""
	if ev.Tool != nil {
		failed, output = ev.Tool.Status != transform.ToolCompleted, ev.Tool.Output
	}
	return e.appendResult(dst, ev.Index, failed, output)
}

// appendResult appends the TOOL_CALL_RESULT {messageId:
// "<mid>-result-<i>", …} of call i, and the ACTIVITY_DELTA that ends its
// progress, if it had any.
func (e *Encoder) appendResult(dst []byte, i int, failed bool, output string) []byte {
	e.calls[i] |= callResult
	status := transform.ToolCompleted
	if failed {
		status = transform.ToolFailed
	}
	dst = append(dst, `data: {"type":"TOOL_CALL_RESULT","messageId":`...)
	dst = e.appendID(dst, "result", int64(i))
	dst = append(dst, `,"toolCallId":`...)
	dst = jsonout.AppendStringS(dst, e.ids[i])
	dst = append(dst, `,"content":`...)
	dst = jsonout.AppendStringS(dst, output)
	dst = append(dst, `,"role":"tool","metadata":{"llmstream":{"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, "\"}}}\n\n"...)
	if e.calls[i]&callProgress == 0 {
		return dst
	}
	dst = append(dst, `data: {"type":"ACTIVITY_DELTA","messageId":`...)
	dst = e.appendID(dst, "progress", int64(i))
	dst = append(dst, `,"activityType":"`+activityType+`","patch":[{"op":"replace","path":"/status","value":"`...)
	dst = append(dst, status...)
	return append(dst, "\"}]}\n\n"...)
}

// abandonRuns gives every server call still running when the run ends a
// failed result with message, so that no call is left without one (the
// next run's history must answer every call).
func (e *Encoder) abandonRuns(dst []byte, message string) []byte {
	for i := range e.calls {
		if e.running(i) {
			dst = e.appendResult(dst, i, true, message)
		}
	}
	return dst
}

// endStreamingCalls appends TOOL_CALL_END for every call started and not
// ended: RUN_FINISHED needs them closed.
func (e *Encoder) endStreamingCalls(dst []byte) []byte {
	for i, st := range e.calls {
		if st&(callStarted|callEnded) == callStarted {
			e.calls[i] |= callEnded
			dst = e.appendEndEvent(dst, i)
		}
	}
	return dst
}

// appendNumber appends a JSON number (a progress count; NaN and the
// infinities, which JSON lacks, as 0).
func appendNumber(dst []byte, f float64) []byte {
	if f != f || f > 1e300 || f < -1e300 {
		f = 0
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// appendInt appends i in decimal.
func appendInt(dst []byte, i int) []byte { return strconv.AppendInt(dst, int64(i), 10) }
