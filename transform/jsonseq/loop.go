package jsonseq

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/gymbro"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// The agent loop (CONTRACT.md §12) in JSONSeq, whose spec has no tools:
// like a client's call, a call to a tool the gateway runs is the extra
// event tool_call {id, name, args} once complete, with two more fields,
// server (the tool server's name) and label, which tell it apart; then
// the extra events
//
//	tool_progress {id, name, progress, total, message}  while it runs
//	tool_result   {id, name, status, output}            its outcome
//	round_start   {round}                               the next round
//
// (total and message null when the tool gave none; status "completed" or
// "error"; output the result the model got), which spec-following clients
// ignore (specs/001 §3 lets them skip unknown events). The rounds share
// one answer: final_delta continues across them, a paragraph break
// between two rounds' answer text, and final_end comes once, at the end.
// A later round's phases come after the answer began, so the order
// repairs leave them out and report it (reasoning_left_out in
// completed.metadata.violations), as for any reasoning after the answer.
// A stream that ends while a call runs gives it a tool_result with status
// "error" and the failure as its output first.

// appendServerCall appends tool_call {id, name, args, server, label} for a
// complete server call.
func (e *Encoder) appendServerCall(dst []byte, ev transform.Event) []byte {
	call := e.calls.Show(ev)
	dst = e.appendToolCallHead(e.extraComes(dst), ev)
	if call != nil {
		dst = append(dst, `,"server":`...)
		dst = jsonout.AppendStringS(dst, call.Server)
		dst = append(dst, `,"label":`...)
		dst = jsonout.AppendStringS(dst, call.Label)
	}
	return gymbro.AppendEventTail(dst)
}

// appendToolProgress appends tool_progress for a running call.
func (e *Encoder) appendToolProgress(dst []byte, ev transform.Event) []byte {
	call := e.calls.Running(ev.Index)
	if call == nil || ev.Tool == nil {
		return dst
	}
	dst = e.toolHead(e.extraComes(dst), "tool_progress", call.ID, call.Name)
	dst = gymbro.AppendProgress(dst, ev.Tool)
	return gymbro.AppendEventTail(dst)
}

// appendToolResult appends tool_result for a running call.
func (e *Encoder) appendToolResult(dst []byte, ev transform.Event) []byte {
	call := e.calls.Finish(ev.Index)
	if call == nil {
		return dst
	}
	status, output := gymbro.ResultOf(ev)
	return e.appendResult(e.extraComes(dst), call, status, output)
}

func (e *Encoder) appendResult(dst []byte, call *gymbro.ServerCall, status, output string) []byte {
	dst = e.toolHead(dst, "tool_result", call.ID, call.Name)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","output":`...)
	dst = jsonout.AppendStringS(dst, output)
	return gymbro.AppendEventTail(dst)
}

// abandonRuns appends an error tool_result for every call still running
// when the stream ends, with message as its output.
func (e *Encoder) abandonRuns(dst []byte, message string) []byte {
	e.calls.Abandon(func(call *gymbro.ServerCall) {
		dst = e.appendResult(e.extraComes(dst), call, transform.ToolFailed, message)
	})
	return dst
}

// appendRoundStart appends round_start {round} and notes that the next
// answer text opens a new round's answer. The encoder numbers the rounds,
// 2 for the first round_start, so that the wire counts up by one.
func (e *Encoder) appendRoundStart(dst []byte) []byte {
	e.order.newRound = true
	e.rounds++
	dst = e.extraComes(dst)
	dst = e.head(dst, "round_start")
	dst = append(dst, `,"round":`...)
	dst = strconv.AppendInt(dst, int64(e.rounds+1), 10)
	return gymbro.AppendEventTail(dst)
}

// toolHead appends an event up to its id and name.
func (e *Encoder) toolHead(dst []byte, name, id, tool string) []byte {
	dst = e.head(dst, name)
	dst = append(dst, `,"id":`...)
	dst = jsonout.AppendStringS(dst, id)
	dst = append(dst, `,"name":`...)
	return jsonout.AppendStringS(dst, tool)
}
