package encodertest

import "github.com/llmstream/llmstream/transform"

// KindHeartbeat marks a step of an event sequence that calls
// AppendHeartbeat instead of AppendEvent (see Run). No parser emits it.
const KindHeartbeat = transform.Kind(255)

// The builders below return the events of the scenarios, with Text copied
// from a string, so that a test reads as the event sequence it feeds.

// Event returns an event that carries only its kind, such as
// KindAnswerStart.
func Event(k transform.Kind) transform.Event { return transform.Event{Kind: k} }

// Text returns an event of kind k with text s.
func Text(k transform.Kind, s string) transform.Event {
	return transform.Event{Kind: k, Text: []byte(s)}
}

// Raw returns a KindRaw event: the model's reply text as written.
func Raw(s string) transform.Event { return Text(transform.KindRaw, s) }

// Reasoning returns a KindReasoningDelta event.
func Reasoning(s string) transform.Event { return Text(transform.KindReasoningDelta, s) }

// Answer returns a KindAnswerDelta event.
func Answer(s string) transform.Event { return Text(transform.KindAnswerDelta, s) }

// Routed returns a KindRouted event for the upstream's model and request
// id.
func Routed(model, id string) transform.Event {
	return transform.Event{Kind: transform.KindRouted, Name: model, ID: id}
}

// Phase returns the KindPhaseStart of phase id with its title.
func Phase(id int, title string) transform.Event {
	return transform.Event{Kind: transform.KindPhaseStart, Index: id, Text: []byte(title)}
}

// PhaseDelta returns a KindPhaseDelta of phase id.
func PhaseDelta(id int, s string) transform.Event {
	return transform.Event{Kind: transform.KindPhaseDelta, Index: id, Text: []byte(s)}
}

// PhaseEnd returns the KindPhaseEnd of phase id.
func PhaseEnd(id int) transform.Event {
	return transform.Event{Kind: transform.KindPhaseEnd, Index: id}
}

// ToolStart returns the KindToolCallStart of tool call i.
func ToolStart(i int, id, name string) transform.Event {
	return transform.Event{Kind: transform.KindToolCallStart, Index: i, ID: id, Name: name}
}

// ToolArgs returns a KindToolArgsDelta of tool call i with a fragment s of
// its arguments.
func ToolArgs(i int, id, name, s string) transform.Event {
	return transform.Event{Kind: transform.KindToolArgsDelta, Index: i, ID: id, Name: name, Text: []byte(s)}
}

// ToolEnd returns the KindToolCallEnd of tool call i with its complete
// arguments.
func ToolEnd(i int, id, name, args string) transform.Event {
	return transform.Event{Kind: transform.KindToolCallEnd, Index: i, ID: id, Name: name, Text: []byte(args)}
}

// Violation returns a KindViolation.
func Violation(code string, offset int64, detail string) transform.Event {
	return transform.Event{Kind: transform.KindViolation, Code: code, Offset: offset, Text: []byte(detail)}
}

// Finish returns the KindFinish that ends a stream with reason.
func Finish(reason string) transform.Event {
	return transform.Event{Kind: transform.KindFinish, Code: reason}
}

// Failure returns the KindError that ends a stream with code and msg.
func Failure(code, msg string) transform.Event {
	return transform.Event{Kind: transform.KindError, Code: code, Text: []byte(msg)}
}

// Heartbeat returns a step that makes Run call AppendHeartbeat.
func Heartbeat() transform.Event { return transform.Event{Kind: KindHeartbeat} }

// The builders of the agent loop's events (CONTRACT.md §12): a call to a
// tool the gateway runs, its run, progress and result, and the next round.

// ServerToolStart returns the KindToolCallStart of server call i, to a
// tool labelled label on tool server server, made in round.
func ServerToolStart(i int, id, name, label, server string, round int) transform.Event {
	return transform.Event{Kind: transform.KindToolCallStart, Server: true, Index: i, ID: id, Name: name,
		Tool: &transform.Tool{Label: label, Server: server, Round: round}}
}

// ServerToolArgs returns a KindToolArgsDelta of server call i.
func ServerToolArgs(i int, id, name, s string) transform.Event {
	ev := ToolArgs(i, id, name, s)
	ev.Server = true
	return ev
}

// ServerToolEnd returns the KindToolCallEnd of server call i with its
// complete arguments.
func ServerToolEnd(i int, id, name, args string) transform.Event {
	ev := ToolEnd(i, id, name, args)
	ev.Server = true
	return ev
}

// ToolRun returns the KindToolRun of server call i: the gateway runs it
// with args.
func ToolRun(i int, id, name, args, label, server string, round int) transform.Event {
	return transform.Event{Kind: transform.KindToolRun, Index: i, ID: id, Name: name, Text: []byte(args),
		Tool: &transform.Tool{Label: label, Server: server, Round: round}}
}

// ToolProgress returns a KindToolProgress of running call i.
func ToolProgress(i int, id, name string, progress, total float64, message string) transform.Event {
	return transform.Event{Kind: transform.KindToolProgress, Index: i, ID: id, Name: name,
		Tool: &transform.Tool{Progress: progress, Total: total, Message: message}}
}

// ToolResult returns the KindToolResult of server call i: status is
// transform.ToolCompleted or transform.ToolFailed.
func ToolResult(i int, id, name, status, output string) transform.Event {
	return transform.Event{Kind: transform.KindToolResult, Index: i, ID: id, Name: name,
		Tool: &transform.Tool{Status: status, Output: output}}
}

// RoundStart returns the KindRoundStart of round n.
func RoundStart(n int) transform.Event {
	return transform.Event{Kind: transform.KindRoundStart, Index: n}
}

// ToolAwait returns the KindToolResult of server call i that waits for
// the user (CONTRACT.md §13): w is what is asked.
func ToolAwait(i int, id, name string, w transform.Await) transform.Event {
	return transform.Event{Kind: transform.KindToolResult, Index: i, ID: id, Name: name,
		Tool: &transform.Tool{Status: transform.ToolAwaiting, Output: w.Message, Await: &w}}
}
