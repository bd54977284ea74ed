package encodertest

import (
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/serp"
)

// FuzzEvents turns fuzz input into an event sequence: each pair of op and
// argument bytes makes one event, the op picking its kind, and texts are
// cut from pool. Ops 0–21 are the kinds Raw … Violation, 22 and 23 Finish
// and Error, 24 a heartbeat, 25 a clarification (the numbering the seeds
// were written in, before the agent loop's kinds), 26–29 the loop's
// ToolRun, ToolProgress, ToolResult and RoundStart, 30 and 31 a server
// call's start, arguments or end. The sequences need not keep the
// pipeline's promises: an encoder must not panic, and must write valid
// output, whatever it is fed (a loop event may even lack its Tool).
func FuzzEvents(ops []byte, pool string) []transform.Event {
	var evs []transform.Event
	pos := 0
	cut := func(n byte) []byte {
		if len(pool) == 0 {
			return nil
		}
		k := int(n) % 16
		start := pos % len(pool)
		end := min(start+k, len(pool))
		pos += k + 1
		return []byte(pool[start:end])
	}
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i], ops[i+1]
		idx := int(arg % 4)
		id := "call_" + string(rune('a'+idx))
		name := [...]string{"f", "ask_user", "g", "h"}[arg%4] // never empty: the pipeline promises names
		var e transform.Event
		switch op := op % 32; op {
		case 24:
			e = Heartbeat()
		case 25:
			e = transform.Event{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: string(cut(arg)), Options: []string{string(cut(arg >> 1))}, Hint: string(cut(arg >> 2))}}
		case 26, 27, 28, 29:
			kind := [...]transform.Kind{transform.KindToolRun, transform.KindToolProgress, transform.KindToolResult, transform.KindRoundStart}[op-26]
			e = transform.Event{Kind: kind, Index: idx, ID: id, Name: name, Text: cut(arg)}
			if kind == transform.KindRoundStart {
				e.Index = int(arg%5) + 1
			}
			if arg&0x80 == 0 {
				status := transform.ToolCompleted
				if arg&0x40 != 0 {
					status = transform.ToolFailed
				}
				e.Tool = &transform.Tool{Label: string(cut(arg >> 2)), Server: "srv", Round: int(arg % 3),
					Progress: float64(arg % 7), Total: float64(arg % 5), Message: string(cut(arg >> 4)),
					Status: status, Output: string(cut(arg >> 1))}
			}
		case 30, 31:
			kind := [...]transform.Kind{transform.KindToolCallStart, transform.KindToolArgsDelta, transform.KindToolCallEnd, transform.KindToolCallEnd}[(arg>>2)%4]
			e = transform.Event{Kind: kind, Server: true, Index: idx, ID: id, Name: name, Text: cut(arg)}
			if kind == transform.KindToolCallStart && op == 30 {
				e.Tool = &transform.Tool{Label: string(cut(arg >> 3)), Server: "srv", Round: 1}
			}
		default:
			kind := transform.Kind(op)
			switch op {
			case 22:
				kind = transform.KindFinish
			case 23:
				kind = transform.KindError
			}
			e = transform.Event{Kind: kind, Index: idx, ID: id, Name: name, Text: cut(arg), Code: string(cut(arg >> 3))}
			if e.Kind == transform.KindSerpQueries {
				e.List = []string{string(cut(arg)), string(cut(arg >> 1))}
			}
		}
		evs = append(evs, e)
	}
	return evs
}

// Promised returns evs with what the pipeline promises every encoder made
// true, whatever the order of the events, for fuzz targets that check a
// protocol's order rules on any sequence (CONTRACT.md §7: the order is the
// encoder's to keep): at most one KindRouted, serp query lists cleaned as
// every parser cleans them (serp.EmitQueries), violations with a code,
// each tool call ended once, and a KindFinish at the end if no terminal
// event came.
func Promised(evs []transform.Event) []transform.Event {
	out := make([]transform.Event, 0, len(evs)+1)
	routed := false
	ended := map[string]bool{}
	for _, ev := range evs {
		switch ev.Kind {
		case transform.KindRouted:
			if routed {
				continue
			}
			routed = true
		case transform.KindSerpQueries:
			ev.List, _ = serp.CleanQueries(ev.List)
		case transform.KindViolation:
			if ev.Code == "" {
				continue
			}
		case transform.KindToolCallEnd:
			if ended[ev.ID] {
				continue
			}
			ended[ev.ID] = true
		}
		out = append(out, ev)
		if ev.Kind == transform.KindFinish || ev.Kind == transform.KindError {
			return out
		}
	}
	return append(out, Finish("stop"))
}
