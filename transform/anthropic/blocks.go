package anthropic

import (
	"strconv"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// The kinds of content block.
type blockKind uint8

const (
	blockNone blockKind = iota
	blockThinking
	blockText
	blockTool
	// blockMCPTool and blockMCPResult are a call to a tool the gateway
	// runs and its result (mcp.go).
	blockMCPTool
	blockMCPResult
)

// The states of a tool call, by its pipeline index.
const (
	toolUnseen uint8 = iota
	toolOpen         // its tool_use block is the open one
	toolClosed       // its block was stopped: nothing more is sent for it
)

// maxToolIndex bounds the tool call indices a reply tracks, far above
// Limits.MaxToolCalls, so that a bad index cannot grow the state without
// bound.
const maxToolIndex = 1 << 12

// blockList lays the reply out as content blocks the way the Messages API
// streams them: one block open at a time, started, streamed and stopped
// with contiguous indices from 0. The SDKs' accumulators and Claude Code
// depend on it (a content_block_start must address the next index; Claude
// Code refuses a delta to a stopped block, and may run a tool as soon as
// its block stops).
//
// Opening a block stops the open one, which is final: nothing more may be
// sent to it. A tool_use block therefore stays open, holding back
// everything else, until its arguments are a complete JSON value or the
// call ends. Upstreams stream one call's arguments after another, so this
// holds nothing in practice; when one interleaves two calls, or writes text
// in the middle of a call, the later events wait in a queue, in order, and
// follow once the call is complete. A stopped call's late bytes (after its
// arguments already formed a complete JSON value, which they could only
// make invalid) are dropped.
type blockList struct {
	enc *Encoder
	// next is the index the next block gets.
	next int
	// open is the kind of the open block, index its index, and for a
	// tool_use block tool its call's pipeline index.
	open  blockKind
	index int
	tool  int
	// args follows the open tool call's arguments; argued is set once it
	// got some.
	args   argsScanner
	argued bool
	// tools is the state of each tool call, by pipeline index; mcp that
	// of each server call's blocks (mcp.go).
	tools, mcp []uint8
	// queue holds the events that wait for the open tool call, from head
	// on; their texts are copied into held, so that waiting allocates
	// nothing once the buffers have grown.
	queue []heldEvent
	head  int
	held  []byte
	// force is set at the terminal event: nothing waits any more.
	force bool
	// thought is set once the open thinking block has text, newPart when
	// a reasoning section or phase opened since: they put "\n\n" between
	// sections, so that they read as paragraphs.
	thought, newPart bool
}

// event places one content event: now, or after the open tool call when
// it must wait.
func (b *blockList) event(dst []byte, ev transform.Event) []byte {
	if !b.forOpenTool(ev) && (b.head < len(b.queue) || b.blocked()) {
		start := len(b.held)
		b.held = append(b.held, ev.Text...)
		ev.Text = nil
		if ev.Tool != nil {
			t := *ev.Tool // the producer's, like Text; a held result keeps its own
			ev.Tool = &t
		}
		b.queue = append(b.queue, heldEvent{ev: ev, start: start, end: len(b.held)})
		return dst
	}
	dst = b.apply(dst, ev)
	return b.drain(dst)
}

// finish ends the blocks at the terminal event: the waiting events are
// placed, and the open block is stopped unless the reply failed (a
// stopped tool_use block would be run; the SDKs end at the error event
// anyway).
func (b *blockList) finish(dst []byte, failed bool) []byte {
	b.force = true
	dst = b.drain(dst)
	if !failed {
		dst = b.stop(dst)
	}
	return dst
}

// blocked reports whether the open block is a tool call whose arguments
// may still grow.
func (b *blockList) blocked() bool {
	return !b.force && isTool(b.open) && !b.args.complete()
}

// forOpenTool reports whether ev continues the open tool_use block.
func (b *blockList) forOpenTool(ev transform.Event) bool {
	return isTool(b.open) && ev.Index == b.tool &&
		(ev.Kind == transform.KindToolArgsDelta || ev.Kind == transform.KindToolCallEnd)
}

// drain places the waiting events until one must wait again.
func (b *blockList) drain(dst []byte) []byte {
	for b.head < len(b.queue) {
		h := b.queue[b.head]
		ev := h.ev
		ev.Text = b.held[h.start:h.end:h.end]
		if !b.forOpenTool(ev) && b.blocked() {
			break
		}
		b.head++
		dst = b.apply(dst, ev)
	}
	if b.head == len(b.queue) {
		b.queue, b.head, b.held = b.queue[:0], 0, b.held[:0]
	}
	return dst
}

// heldEvent is an event waiting in blockList.queue, its text at
// held[start:end].
type heldEvent struct {
	ev         transform.Event
	start, end int
}

// apply encodes one content event that need not wait.
func (b *blockList) apply(dst []byte, ev transform.Event) []byte {
	switch ev.Kind {
	case transform.KindReasoningStart:
		b.newPart = true
	case transform.KindPhaseStart:
		b.newPart = true
		dst = b.thinking(dst, "**", ev.Text, "**\n\n")
	case transform.KindReasoningDelta, transform.KindPhaseDelta:
		dst = b.thinking(dst, "", ev.Text, "")
	case transform.KindAnswerDelta:
		if len(ev.Text) == 0 {
			break
		}
		if b.open != blockText {
			dst = b.start(dst, blockText, ev)
		}
		dst = b.enc.appendDelta(dst, b.index, blockText, "", ev.Text, "")
	case transform.KindToolCallStart:
		if st := b.toolState(ev.Index); st != nil && *st == toolUnseen {
			dst = b.startTool(dst, ev)
		}
	case transform.KindToolArgsDelta:
		if b.forOpenTool(ev) && len(ev.Text) > 0 {
			b.argued = true
			b.args.feed(ev.Text)
			dst = b.enc.appendDelta(dst, b.index, b.open, "", ev.Text, "")
		}
	case transform.KindToolCallEnd:
		st := b.toolState(ev.Index)
		if st == nil || *st == toolClosed {
			break
		}
		if *st == toolUnseen { // a call whose start never came: open it now
			dst = b.startTool(dst, ev)
		}
		// A call none of whose arguments streamed (a parameterless call
		// ends with "{}") sends its complete arguments now, so that every
		// call's input is whole.
		if !b.argued && len(ev.Text) > 0 {
			dst = b.enc.appendDelta(dst, b.index, b.open, "", ev.Text, "")
		}
		dst = b.stop(dst)
	case transform.KindToolResult:
		dst = b.mcpResult(dst, ev)
	case transform.KindRoundStart:
		// A round's text and thinking are blocks of their own.
		dst = b.stop(dst)
	}
	return dst
}

// thinking sends reasoning text in the open thinking block, opening one
// if needed, after "\n\n" when it starts a new section of a block that
// has text. Empty text sends nothing.
func (b *blockList) thinking(dst []byte, pre string, text []byte, post string) []byte {
	if len(text) == 0 {
		return dst
	}
	if b.open != blockThinking {
		dst = b.start(dst, blockThinking, transform.Event{})
		b.thought = false
	}
	if b.newPart && b.thought {
		pre = paragraph[pre]
	}
	b.newPart, b.thought = false, true
	return b.enc.appendDelta(dst, b.index, blockThinking, pre, text, post)
}

// paragraph is each prefix thinking sends after a paragraph break: the
// strings are constants, so that no delta concatenates.
var paragraph = map[string]string{"": "\n\n", "**": "\n\n**"}

// startTool opens tool call ev's tool_use block, or for a call to a tool
// the gateway runs its mcp_tool_use block (mcp.go), which does not make
// the reply stop for tool use.
func (b *blockList) startTool(dst []byte, ev transform.Event) []byte {
	kind := blockTool
	if ev.Server {
		kind = blockMCPTool
		b.noteMCP(ev.Index)
	} else {
		b.enc.toolUse = true
	}
	dst = b.start(dst, kind, ev)
	b.tool, b.argued = ev.Index, false
	b.args = argsScanner{}
	*b.toolState(ev.Index) = toolOpen
	return dst
}

// isTool reports whether a block of kind takes input_json_delta.
func isTool(kind blockKind) bool { return kind == blockTool || kind == blockMCPTool }

// start stops the open block and starts one of kind (ev names a tool
// call).
func (b *blockList) start(dst []byte, kind blockKind, ev transform.Event) []byte {
	dst = b.stop(dst)
	b.open, b.index = kind, b.next
	b.next++
	return b.enc.appendBlockStart(dst, b.index, kind, ev)
}

// stop stops the open block, if any.
func (b *blockList) stop(dst []byte) []byte {
	if b.open == blockNone {
		return dst
	}
	if isTool(b.open) {
		*b.toolState(b.tool) = toolClosed
	}
	b.open = blockNone
	return b.enc.appendBlockStop(dst, b.index)
}

// toolState returns the state of tool call i, nil for an index outside
// [0, maxToolIndex), which is not sent at all.
func (b *blockList) toolState(i int) *uint8 {
	if i < 0 || i >= maxToolIndex {
		return nil
	}
	for len(b.tools) <= i {
		b.tools = append(b.tools, toolUnseen)
	}
	return &b.tools[i]
}

// argsScanner follows a tool call's arguments as they stream, to tell when
// they form a complete JSON object or array: then no byte can follow that
// keeps them valid, and the call's block may stop. It reads each byte once.
type argsScanner struct {
	depth            int
	inString, escape bool
	opened, broken   bool
}

// feed reads the next bytes of the arguments.
func (s *argsScanner) feed(p []byte) {
	for _, c := range p {
		switch {
		case s.inString:
			switch {
			case s.escape:
				s.escape = false
			case c == '\\':
				s.escape = true
			case c == '"':
				s.inString = false
			}
		case c == '"':
			s.inString = true
		case c == '{' || c == '[':
			s.depth++
			s.opened = true
		case c == '}' || c == ']':
			if s.depth--; s.depth < 0 {
				s.broken = true
			}
		}
	}
}

// complete reports whether the arguments so far are a whole JSON object
// or array (as far as nesting and strings tell).
func (s *argsScanner) complete() bool {
	return s.opened && !s.broken && s.depth == 0 && !s.inString
}

// appendBlockStart starts content block index: an event when streaming,
// a new block of the Message when not. message_start goes first.
func (e *Encoder) appendBlockStart(dst []byte, index int, kind blockKind, ev transform.Event) []byte {
	if !e.meta.Stream {
		e.whole = append(e.whole, newWholeBlock(kind, ev))
		return dst
	}
	dst = e.appendMessageStart(dst)
	dst = append(dst, "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":"...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	switch kind {
	case blockThinking:
		dst = append(dst, `,"content_block":{"type":"thinking","thinking":"","signature":""}}`...)
	case blockText:
		dst = append(dst, `,"content_block":{"type":"text","text":""}}`...)
	case blockTool:
		dst = append(dst, `,"content_block":{"type":"tool_use","id":`...)
		dst = jsonout.AppendStringS(dst, ev.ID)
		dst = append(dst, `,"name":`...)
		dst = jsonout.AppendStringS(dst, ev.Name)
		dst = append(dst, `,"input":{}}}`...)
	case blockMCPTool, blockMCPResult:
		dst = appendMCPBlock(append(dst, `,"content_block":`...), kind, ev)
		dst = append(dst, '}')
	}
	return append(dst, "\n\n"...)
}

// appendDelta sends pre, text and post to content block index as one
// delta of its kind (text_delta, thinking_delta, input_json_delta), or
// adds them to the Message's last block.
func (e *Encoder) appendDelta(dst []byte, index int, kind blockKind, pre string, text []byte, post string) []byte {
	if !e.meta.Stream {
		if n := len(e.whole); n > 0 {
			w := &e.whole[n-1]
			w.text = append(w.text, pre...)
			w.text = appendValidUTF8(w.text, text)
			w.text = append(w.text, post...)
		}
		return dst
	}
	dst = append(dst, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":"...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	switch kind {
	case blockThinking:
		dst = append(dst, `,"delta":{"type":"thinking_delta","thinking":"`...)
	case blockText:
		dst = append(dst, `,"delta":{"type":"text_delta","text":"`...)
	case blockTool, blockMCPTool:
		dst = append(dst, `,"delta":{"type":"input_json_delta","partial_json":"`...)
	}
	dst = jsonout.AppendStringBodyS(dst, pre)
	dst = jsonout.AppendStringBody(dst, text)
	dst = jsonout.AppendStringBodyS(dst, post)
	return append(dst, "\"}}\n\n"...)
}

// appendBlockStop stops content block index.
func (e *Encoder) appendBlockStop(dst []byte, index int) []byte {
	if !e.meta.Stream {
		return dst
	}
	dst = append(dst, "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":"...)
	dst = strconv.AppendInt(dst, int64(index), 10)
	return append(dst, "}\n\n"...)
}

// appendValidUTF8 appends p with each byte that is not part of a valid
// UTF-8 sequence replaced by U+FFFD, delta by delta as a stream's JSON
// strings replace them, so that a whole Message says what the stream
// said.
func appendValidUTF8(dst, p []byte) []byte {
	if utf8.Valid(p) {
		return append(dst, p...)
	}
	for len(p) > 0 {
		r, n := utf8.DecodeRune(p)
		if r == utf8.RuneError && n == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, p[:n]...)
		}
		p = p[n:]
	}
	return dst
}
