package openai

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// maxToolIndex bounds the tool call indices a stream sends, far above
// Limits.MaxToolCalls, so that a bad index cannot grow toolStates without
// bound.
const maxToolIndex = 1 << 12

// The states of a streamed tool call, in toolStates.
const (
	toolNone   uint8 = iota // not opened
	toolOpen                // opened, no arguments streamed yet
	toolArgued              // opened, arguments streamed
	toolEnded               // ended: an index is one call per stream
)

// toolState returns the state of tool call i, nil for an index outside
// [0, maxToolIndex), which is not sent at all.
func (e *Encoder) toolState(i int) *uint8 {
	if i < 0 || i >= maxToolIndex {
		return nil
	}
	for len(e.toolStates) <= i {
		e.toolStates = append(e.toolStates, toolNone)
	}
	return &e.toolStates[i]
}

// appendToolCallStart sends a tool call's index, id, type and name with
// empty arguments, as OpenAI opens a call.
func (e *Encoder) appendToolCallStart(dst []byte, ev transform.Event) []byte {
	e.toolCalls = true
	if !e.meta.Stream {
		return dst
	}
	st := e.toolState(ev.Index)
	if st == nil || *st != toolNone {
		return dst // a second start would open a second call on the index
	}
	*st = toolOpen
	dst = e.appendChunkHead(dst)
	dst = append(dst, `{"tool_calls":[{"index":`...)
	dst = strconv.AppendInt(dst, int64(ev.Index), 10)
	dst = append(dst, `,"id":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	dst = append(dst, `,"type":"function","function":{"name":`...)
	dst = jsonout.AppendStringS(dst, ev.Name)
	dst = append(dst, `,"arguments":""}}]}`...)
	return append(dst, chunkTail...)
}

// appendToolArgsDelta sends a fragment of an open tool call's arguments,
// byte for byte as the model wrote it. Empty fragments send nothing, and so
// do fragments of a call that is not open: the SDKs' stream helpers reject
// a call whose first delta has no id.
func (e *Encoder) appendToolArgsDelta(dst []byte, ev transform.Event) []byte {
	if !e.meta.Stream || len(ev.Text) == 0 {
		return dst
	}
	st := e.toolState(ev.Index)
	if st == nil || (*st != toolOpen && *st != toolArgued) {
		return dst
	}
	*st = toolArgued
	return e.appendToolArgs(dst, ev.Index, ev.Text)
}

func (e *Encoder) appendToolArgs(dst []byte, index int, args []byte) []byte {
	dst = e.appendChunkHead(dst)
	dst = append(dst, `{"tool_calls":[{"index":`...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	dst = append(dst, `,"function":{"arguments":`...)
	dst = jsonout.AppendString(dst, args)
	dst = append(dst, `}}]}`...)
	return append(dst, chunkTail...)
}

// appendToolCallEnd completes a tool call. Streamed, the arguments went out
// as fragments; a call none were streamed for (a parameterless call,
// PARSING.md OA12, whose end says "{}") sends its complete arguments now,
// so that the client's concatenation is the same, and a call never opened
// is opened first. A whole completion keeps the call.
func (e *Encoder) appendToolCallEnd(dst []byte, ev transform.Event) []byte {
	e.toolCalls = true
	if !e.meta.Stream {
		e.whole.addTool(ev)
		return dst
	}
	st := e.toolState(ev.Index)
	if st == nil || *st == toolEnded {
		return dst
	}
	if *st == toolNone {
		dst = e.appendToolCallStart(dst, ev)
	}
	if *st == toolOpen && len(ev.Text) > 0 {
		dst = e.appendToolArgs(dst, ev.Index, ev.Text)
	}
	*st = toolEnded
	return dst
}
