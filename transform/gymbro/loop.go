package gymbro

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// The agent loop (CONTRACT.md §12) in GymBro, whose client assembles the
// model's raw reply: the rounds' raw replies continue in content_delta,
// with a paragraph break between two rounds (counted in reply_len), and
// the loop's events are status events. specs/000 §6.3 names the states
// queued, working and routed; a client that knows only those must accept
// these, so they keep state "working" (the gateway is working again after
// routed) and say what happens in one more field:
//
//	{"state":"working","tool":{"event":"call","id","name","label","server","args"}}
//	    the model wrote a complete call to a tool the gateway runs
//	{"state":"working","tool":{"event":"progress","id","name","progress","total","message"}}
//	    it runs (total and message null when the tool gave none)
//	{"state":"working","tool":{"event":"result","id","name","status","output"}}
//	    its outcome: status "completed" or "error", output what the model got
//	{"state":"working","round":2}
//	    the results went back to the model, which answers again
//
// A stream that ends while a call runs gives it a result status with
// status "error" and the failure as its output first. completed comes
// once, at the end, with the usage summed over the rounds.

// appendServerCall appends the status of a complete server call.
func (e *Encoder) appendServerCall(dst []byte, ev transform.Event) []byte {
	call := e.calls.Show(ev)
	if call == nil {
		return dst
	}
	dst = e.toolHead(dst, "call", call.ID, call.Name)
	dst = append(dst, `,"label":`...)
	dst = jsonout.AppendStringS(dst, call.Label)
	dst = append(dst, `,"server":`...)
	dst = jsonout.AppendStringS(dst, call.Server)
	dst = append(dst, `,"args":`...)
	dst = jsonout.AppendOrString(dst, ev.Text)
	return append(dst, "}}\n\n"...)
}

// appendToolProgress appends the status of a running call's progress.
func (e *Encoder) appendToolProgress(dst []byte, ev transform.Event) []byte {
	call := e.calls.Running(ev.Index)
	if call == nil || ev.Tool == nil {
		return dst
	}
	dst = e.toolHead(dst, "progress", call.ID, call.Name)
	dst = AppendProgress(dst, ev.Tool)
	return append(dst, "}}\n\n"...)
}

// appendToolResult appends the status of a running call's outcome.
func (e *Encoder) appendToolResult(dst []byte, ev transform.Event) []byte {
	call := e.calls.Finish(ev.Index)
	if call == nil {
		return dst
	}
	status, output := ResultOf(ev)
	return e.appendResult(dst, call, status, output)
}

func (e *Encoder) appendResult(dst []byte, call *ServerCall, status, output string) []byte {
	dst = e.toolHead(dst, "result", call.ID, call.Name)
	dst = append(dst, `,"status":"`...)
	dst = append(dst, status...)
	dst = append(dst, `","output":`...)
	dst = jsonout.AppendStringS(dst, output)
	return append(dst, "}}\n\n"...)
}

// abandonRuns appends an error result for every call still running.
func (e *Encoder) abandonRuns(dst []byte, message string) []byte {
	e.calls.Abandon(func(call *ServerCall) {
		dst = e.appendResult(dst, call, transform.ToolFailed, message)
	})
	return dst
}

// appendRound appends the status of the next round and notes that its
// raw reply opens a new paragraph. The encoder numbers the rounds, 2 for
// the first, so that the wire counts up by one.
func (e *Encoder) appendRound(dst []byte) []byte {
	e.newRound = true
	e.rounds++
	dst = e.sys.AppendEventHead(dst, "status")
	dst = append(dst, `,"state":"working","round":`...)
	dst = strconv.AppendInt(dst, int64(e.rounds+1), 10)
	return AppendEventTail(dst)
}

// toolHead appends a status event up to its tool object's name.
func (e *Encoder) toolHead(dst []byte, event, id, name string) []byte {
	dst = e.sys.AppendEventHead(dst, "status")
	dst = append(dst, `,"state":"working","tool":{"event":"`...)
	dst = append(dst, event...)
	dst = append(dst, `","id":`...)
	dst = jsonout.AppendStringS(dst, id)
	dst = append(dst, `,"name":`...)
	return jsonout.AppendStringS(dst, name)
}

// AppendProgress appends a progress report's members, progress, total
// and message, total and message null when the tool gave none (the
// shape jsonseq's tool_progress shares).
func AppendProgress(dst []byte, t *transform.Tool) []byte {
	dst = append(dst, `,"progress":`...)
	dst = appendNumber(dst, t.Progress)
	dst = append(dst, `,"total":`...)
	if t.Total > 0 {
		dst = appendNumber(dst, t.Total)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"message":`...)
	if t.Message == "" {
		return append(dst, "null"...)
	}
	return jsonout.AppendStringS(dst, t.Message)
}

// ResultOf returns a KindToolResult's status, transform.ToolCompleted or
// transform.ToolFailed (also for a result without its Tool), and output.
func ResultOf(ev transform.Event) (status, output string) {
	if ev.Tool == nil {
		return transform.ToolFailed, ""
	}
	if ev.Tool.Status == transform.ToolCompleted {
		return transform.ToolCompleted, ev.Tool.Output
	}
	return transform.ToolFailed, ev.Tool.Output
}

// appendNumber appends a JSON number (NaN and the infinities, which JSON
// lacks, as 0).
func appendNumber(dst []byte, f float64) []byte {
	if f != f || f > 1e300 || f < -1e300 {
		f = 0
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}
