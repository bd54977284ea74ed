package pipeline

import (
	"errors"
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/upstream"
)

// The router: each decoded chunk's parts go where they belong (native
// reasoning into a section of its own, native tool calls to the
// assembler, content to the format parser), and the events of all three
// sources meet in one index space before deliver encodes them. What the
// router keeps of the upstream's chunks is in decodestate.go; the checks
// of the reply, in validation.go.

// detector is a format parser that finds the format it reads (auto): the
// summary names the format found.
type detector interface{ Detected() format.Name }

// route sends each part of a decoded chunk where it belongs, in the order
// the chunk implies: reasoning, content, tool calls, then finish_reason
// (PARSING.md OA17: a chunk's last delta is processed before its finish).
// Usage is kept and delivered once, at the end (CONTRACT.md §7).
func (p *Pipeline) route(c *upstream.Chunk) {
	if c.Done { // a padded "[DONE]" the SSE layer did not match exactly
		p.sawDone = true
		p.complete()
		return
	}
	if c.Err != nil && len(c.Reasoning) == 0 && len(c.Content) == 0 {
		p.fail(transform.CodeUpstreamError, "upstream: "+c.Err.Error())
		return
	}
	if !p.routed {
		if !carries(c) {
			// Azure opens with a chunk of prompt_filter_results, no
			// choices and an empty model: routing on it would report no
			// model, and it says nothing else.
			return
		}
		p.routed = true
		p.sum.Model = string(c.Model)
		p.emit(transform.Event{Kind: transform.KindRouted, Name: p.sum.Model, ID: p.upstreamID})
		if p.think != nil {
			// The model names whether its template opened <think>; an
			// upstream that reports none is taken at the request's word.
			model := p.sum.Model
			if model == "" {
				model = p.meta.Model
			}
			p.think.Routed(model)
		}
	}
	p.decodingViolations(c)
	if len(c.Reasoning) > 0 {
		p.reasoning(c.Reasoning)
	}
	if len(c.Content) > 0 {
		p.closeNative()
		p.sum.ContentBytes += int64(len(c.Content))
		p.keepContent(c.Content)
		p.keepLoopContent(c.Content)
		p.captureContent(c.Content)
		p.toParser(c.Content)
	}
	if c.Err != nil { // an error chunk that still carried text: the text first
		p.fail(transform.CodeUpstreamError, "upstream: "+c.Err.Error())
		return
	}
	for i := range c.ToolCalls {
		if p.ended {
			return
		}
		p.closeNative()
		if err := p.tools.Add(c.ToolCalls[i], p.emitNative); err != nil {
			code := transform.CodeUpstreamError
			if errors.Is(err, upstream.ErrTooManyToolCalls) {
				code = transform.CodeTooManyToolCalls
			}
			p.fail(code, "upstream: "+err.Error())
			return
		}
	}
	p.keepUsage(c.Usage)
	if string(c.FinishReason) == "error" && !p.ended {
		// OpenRouter ends a reply that failed mid-generation so, with or
		// without an error object.
		p.fail(transform.CodeUpstreamError, "upstream: the reply ended with finish_reason error")
		return
	}
	if len(c.FinishReason) > 0 && p.finish == "" && !p.ended {
		p.finish = string(c.FinishReason)
		if p.finish == "function_call" { // the legacy call is a tool call now
			p.finish = "tool_calls"
		}
		if p.finish == "length" && p.tools.Open() {
			p.emit(transform.Event{Kind: transform.KindViolation, Code: CodeTruncatedToolArgs,
				Offset: p.sum.ContentBytes, Text: []byte("finish_reason length cut a tool call's arguments")})
		}
		p.tools.Finish(p.emitNative)
	}
}

// carries reports whether a chunk says anything: a model, text, tool
// calls, a finish reason, usage, or something to report.
func carries(c *upstream.Chunk) bool {
	return len(c.Model) > 0 || len(c.Reasoning) > 0 || len(c.Content) > 0 || len(c.ToolCalls) > 0 ||
		len(c.FinishReason) > 0 || len(c.Usage) > 0 || len(c.Violations) > 0 || c.StrayChoice != nil
}

// reasoning routes native reasoning text: into the parser's open reasoning
// section if there is one (a hybrid stream), else into a section of its own.
func (p *Pipeline) reasoning(text []byte) {
	if p.think != nil {
		p.think.NativeReasoning()
	}
	p.sum.ReasoningBytes += int64(len(text))
	if !p.parserReasoning && !p.nativeOpen {
		p.nativeOpen = true
		p.emit(transform.Event{Kind: transform.KindReasoningStart})
	}
	p.emitReasoning(text)
}

// closeNative closes the section native reasoning opened, after the bytes
// its UTF-8 carry holds.
func (p *Pipeline) closeNative() {
	p.flushReasoning()
	if p.nativeOpen {
		p.nativeOpen = false
		p.emit(transform.Event{Kind: transform.KindReasoningEnd})
	}
}

func (p *Pipeline) toParser(b []byte) {
	if !p.ended {
		p.parser.Feed(b, p.emitParser)
	}
}

// fromParser takes the format parser's events.
func (p *Pipeline) fromParser(ev transform.Event) {
	switch ev.Kind {
	case transform.KindReasoningStart:
		p.parserReasoning = true
	case transform.KindReasoningEnd:
		p.parserReasoning = false
	case transform.KindToolCallStart, transform.KindToolArgsDelta, transform.KindToolCallEnd:
		p.parserCalls = p.mapCall(p.parserCalls, &ev, false)
	case transform.KindError:
		if p.ended {
			return // the stream is already ending with another error
		}
		p.closeNative()
		p.ended = true
		p.sum.ErrorCode = ev.Code
	}
	p.deliver(ev)
}

// fromNative takes the tool-call assembler's events.
func (p *Pipeline) fromNative(ev transform.Event) {
	p.nativeCalls = p.mapCall(p.nativeCalls, &ev, true)
	p.deliver(ev)
}

// mapCall gives a tool event its stream-wide index, and an id when the
// source had none ("call_" + message id + index, unique per stream). It
// marks the events of a call the gateway runs (Server, and Tool on its
// start), and records each call as it completes (loop.go). native says the
// event came from the upstream's tool_calls, not from the reply's text.
func (p *Pipeline) mapCall(calls []call, ev *transform.Event, native bool) []call {
	for len(calls) <= ev.Index {
		calls = append(calls, call{index: -1})
	}
	c := &calls[ev.Index]
	if c.index < 0 {
		c.index = p.calls
		p.calls++
		c.id = ev.ID
		if c.id == "" {
			c.id = "call_" + p.meta.MessageID + "_" + strconv.Itoa(c.index)
		}
	}
	if ev.Kind == transform.KindToolCallStart {
		// The assembler's violations about a call may come before its
		// start (their Index is the call's too): its name decides here.
		c.tool, c.server = p.serverCall(ev.Name)
		ev.Tool = c.tool
	}
	ev.Index, ev.ID, ev.Server = c.index, c.id, c.server
	if ev.Kind == transform.KindToolCallEnd {
		p.recordCall(*ev, c, native)
	}
	return calls
}
