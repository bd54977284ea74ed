package responses

import (
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// itemKind is the type of an output item.
type itemKind uint8

const (
	itemMessage itemKind = iota
	itemReasoning
	itemFunctionCall
	itemMCP // a call to a tool the gateway runs (mcp.go)
	// itemCompaction is the one output item of a compaction; its text is
	// the sealed summary (encrypted_content).
	itemCompaction
	// itemApproval asks the user to approve a call of a tool the gateway
	// runs (mcp.go); its callID is the approval id, which is its item id.
	itemApproval
)

// idPrefix is each kind's item id prefix, as OpenAI names them.
var idPrefix = [...]string{itemMessage: "msg_", itemReasoning: "rs_", itemFunctionCall: "fc_", itemMCP: "mcp_", itemCompaction: "cmp_", itemApproval: "mcpr_"}

// item is one output item and everything it said so far.
type item struct {
	kind itemKind
	// done is set once response.output_item.done went out.
	done bool
	// cut marks an item that ended incomplete: the upstream stopped at its
	// token limit or content filter, or broke off, while the model was
	// writing it (Open Responses: items are state machines).
	cut bool
	// text is a message's output_text or a function call's arguments.
	text []byte
	// partOpen: a message's output_text part was added and is not done.
	partOpen bool
	// argued: an arguments delta of a function call went out.
	argued bool
	// callID and name are a function call's.
	callID, name string
	// summary and content are a reasoning item's parts: phases as summary
	// text, raw reasoning as reasoning_text.
	summary, content []part
	// mcp is an mcp_call item's server and outcome.
	mcp *mcpCall
}

// part is a reasoning item's summary or content part.
type part struct {
	text []byte
	done bool
}

// openPart returns the last of parts if it is still open, else nil.
func openPart(parts []part) *part {
	if n := len(parts); n > 0 && !parts[n-1].done {
		return &parts[n-1]
	}
	return nil
}

// begin sends response.created and response.in_progress, once.
func (e *Encoder) begin(dst []byte) []byte {
	if e.created {
		return dst
	}
	e.created = true
	if !e.meta.Stream {
		return dst
	}
	dst = e.eventHead(dst, "response.created")
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, "in_progress", "", nil)
	dst = append(dst, eventTail...)
	dst = e.eventHead(dst, "response.in_progress")
	dst = append(dst, `,"response":`...)
	dst = e.appendResponse(dst, "in_progress", "", nil)
	return append(dst, eventTail...)
}

// addItem opens a new output item and returns its index.
func (e *Encoder) addItem(dst []byte, it item) ([]byte, int) {
	dst = e.begin(dst)
	e.items = append(e.items, it)
	i := len(e.items) - 1
	if e.meta.Stream {
		dst = e.eventHead(dst, "response.output_item.added")
		dst = e.appendOutputIndex(dst, i)
		dst = append(dst, `,"item":`...)
		dst = e.appendItem(dst, i, false)
		dst = append(dst, eventTail...)
	}
	return dst, i
}

// textItem returns the open item of kind k (message or reasoning),
// opening one (and closing the other) when there is none.
func (e *Encoder) textItem(dst []byte, k itemKind) ([]byte, int) {
	if e.open >= 0 && e.items[e.open].kind == k {
		return dst, e.open
	}
	dst = e.closeText(dst, e.kindOpen())
	dst, e.open = e.addItem(dst, item{kind: k})
	return dst, e.open
}

// kindOpen returns the kind of the open text item (any kind when none).
func (e *Encoder) kindOpen() itemKind {
	if e.open < 0 {
		return itemMessage
	}
	return e.items[e.open].kind
}

// closeText closes the open text item if it is of kind k: its open parts,
// then the item.
func (e *Encoder) closeText(dst []byte, k itemKind) []byte {
	if e.open < 0 || e.items[e.open].kind != k {
		return dst
	}
	i := e.open
	e.open = -1
	if k == itemMessage {
		dst = e.closeOutputText(dst, i)
	} else {
		dst = e.closeReasoningParts(dst, i)
	}
	return e.itemDone(dst, i)
}

// endText ends the open text item of kind k because the model ended it.
// Its closing events wait for the next event (pending): if that is the
// end of a reply cut short, the item was cut too and closes incomplete.
func (e *Encoder) endText(dst []byte, k itemKind) []byte {
	if e.open < 0 || e.items[e.open].kind != k {
		return dst
	}
	dst = e.flushPending(dst, false)
	e.pending, e.open = e.open, -1
	return dst
}

// flushPending sends the closing events of the item whose end waits, if
// any: incomplete when cut.
func (e *Encoder) flushPending(dst []byte, cut bool) []byte {
	i := e.pending
	if i < 0 {
		return dst
	}
	e.pending = -1
	e.items[i].cut = cut
	switch e.items[i].kind {
	case itemMessage:
		dst = e.closeOutputText(dst, i)
	case itemReasoning:
		dst = e.closeReasoningParts(dst, i)
	default:
		return e.closeCall(dst, i)
	}
	return e.itemDone(dst, i)
}

// itemDone sends response.output_item.done for item i.
func (e *Encoder) itemDone(dst []byte, i int) []byte {
	e.items[i].done = true
	if !e.meta.Stream {
		return dst
	}
	dst = e.eventHead(dst, "response.output_item.done")
	dst = e.appendOutputIndex(dst, i)
	dst = append(dst, `,"item":`...)
	dst = e.appendItem(dst, i, true)
	return append(dst, eventTail...)
}

// answerText streams answer text into the open message. Empty text sends
// nothing, so that a message opens with its first character.
func (e *Encoder) answerText(dst, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	dst, i := e.textItem(dst, itemMessage)
	it := &e.items[i]
	if !it.partOpen {
		it.partOpen = true
		if e.meta.Stream {
			dst = e.eventHead(dst, "response.content_part.added")
			dst = e.appendPartRef(dst, i, "content_index", 0)
			dst = append(dst, `,"part":`+emptyOutputText+eventTail...)
		}
	}
	it.text = appendValid(it.text, text)
	if !e.meta.Stream {
		return dst
	}
	dst = e.eventHead(dst, "response.output_text.delta")
	dst = e.appendPartRef(dst, i, "content_index", 0)
	dst = append(dst, `,"delta":`...)
	dst = jsonout.AppendString(dst, text)
	return append(dst, `,"logprobs":[]`+eventTail...)
}

// closeOutputText ends message i's output_text part.
func (e *Encoder) closeOutputText(dst []byte, i int) []byte {
	it := &e.items[i]
	if !it.partOpen {
		return dst
	}
	it.partOpen = false
	if !e.meta.Stream {
		return dst
	}
	dst = e.eventHead(dst, "response.output_text.done")
	dst = e.appendPartRef(dst, i, "content_index", 0)
	dst = append(dst, `,"text":`...)
	dst = jsonout.AppendString(dst, it.text)
	dst = append(dst, `,"logprobs":[]`+eventTail...)
	dst = e.eventHead(dst, "response.content_part.done")
	dst = e.appendPartRef(dst, i, "content_index", 0)
	dst = append(dst, `,"part":`...)
	dst = appendOutputText(dst, it.text)
	return append(dst, eventTail...)
}

// reasoningText streams raw reasoning (a <think> block, native
// reasoning_content) as a reasoning_text content part of the open
// reasoning item, opening the part with its first character.
func (e *Encoder) reasoningText(dst, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	dst, i := e.textItem(dst, itemReasoning)
	it := &e.items[i]
	p := openPart(it.content)
	if p == nil {
		it.content = append(it.content, part{})
		p = &it.content[len(it.content)-1]
		if e.meta.Stream {
			dst = e.eventHead(dst, "response.content_part.added")
			dst = e.appendPartRef(dst, i, "content_index", len(it.content)-1)
			dst = append(dst, `,"part":{"type":"reasoning_text","text":""}`+eventTail...)
		}
	}
	p.text = appendValid(p.text, text)
	if !e.meta.Stream {
		return dst
	}
	dst = e.eventHead(dst, "response.reasoning_text.delta")
	dst = e.appendPartRef(dst, i, "content_index", len(it.content)-1)
	dst = append(dst, `,"delta":`...)
	dst = jsonout.AppendString(dst, text)
	return append(dst, eventTail...)
}

// partList names one of a reasoning item's two part lists on the wire:
// its raw reasoning (content) or its summary.
type partList struct {
	parts                     func(*item) []part
	index, textDone, partDone string
	partType                  string
}

var (
	contentParts = partList{
		parts: func(it *item) []part { return it.content }, index: "content_index",
		textDone: "response.reasoning_text.done", partDone: "response.content_part.done", partType: "reasoning_text",
	}
	summaryParts = partList{
		parts: func(it *item) []part { return it.summary }, index: "summary_index",
		textDone: "response.reasoning_summary_text.done", partDone: "response.reasoning_summary_part.done", partType: "summary_text",
	}
)

// closePart ends the open reasoning item's open part of list l, so that
// the next block of that kind opens a new one.
func (e *Encoder) closePart(dst []byte, l *partList) []byte {
	if e.open < 0 || e.items[e.open].kind != itemReasoning {
		return dst
	}
	i := e.open
	parts := l.parts(&e.items[i])
	p := openPart(parts)
	if p == nil {
		return dst
	}
	p.done = true
	if !e.meta.Stream {
		return dst
	}
	pi := len(parts) - 1
	dst = e.eventHead(dst, l.textDone)
	dst = e.appendPartRef(dst, i, l.index, pi)
	dst = append(dst, `,"text":`...)
	dst = jsonout.AppendString(dst, p.text)
	dst = append(dst, eventTail...)
	dst = e.eventHead(dst, l.partDone)
	dst = e.appendPartRef(dst, i, l.index, pi)
	dst = append(dst, `,"part":{"type":"`...)
	dst = append(dst, l.partType...)
	dst = append(dst, `","text":`...)
	dst = jsonout.AppendString(dst, p.text)
	return append(dst, "}"+eventTail...)
}

// phaseStart opens a summary part for a phase and sends its title as
// "**<title>**\n\n", the way OpenAI's reasoning summaries head their
// sections (Codex shows the bold text as the section's header). A phase
// without a title has no heading.
func (e *Encoder) phaseStart(dst, title []byte) []byte {
	dst = e.closePart(dst, &summaryParts)
	dst, i := e.openSummaryPart(dst)
	if len(title) == 0 {
		return dst
	}
	dst = e.summaryDelta(dst, i, "**", title, "**\n\n")
	return dst
}

// openSummaryPart adds a summary part to the open reasoning item.
func (e *Encoder) openSummaryPart(dst []byte) ([]byte, int) {
	dst, i := e.textItem(dst, itemReasoning)
	it := &e.items[i]
	it.summary = append(it.summary, part{})
	if e.meta.Stream {
		dst = e.eventHead(dst, "response.reasoning_summary_part.added")
		dst = e.appendPartRef(dst, i, "summary_index", len(it.summary)-1)
		dst = append(dst, `,"part":{"type":"summary_text","text":""}`+eventTail...)
	}
	return dst, i
}

// summaryText streams a phase's text into the open summary part, opening
// one for text that came without its phase's start.
func (e *Encoder) summaryText(dst, text []byte) []byte {
	if len(text) == 0 {
		return dst
	}
	i := e.open
	if i < 0 || e.items[i].kind != itemReasoning || openPart(e.items[i].summary) == nil {
		dst, i = e.openSummaryPart(dst)
	}
	return e.summaryDelta(dst, i, "", text, "")
}

// summaryDelta appends pre, text and post to item i's open summary part
// and sends them as one delta.
func (e *Encoder) summaryDelta(dst []byte, i int, pre string, text []byte, post string) []byte {
	it := &e.items[i]
	p := &it.summary[len(it.summary)-1]
	p.text = append(p.text, pre...)
	p.text = appendValid(p.text, text)
	p.text = append(p.text, post...)
	if !e.meta.Stream {
		return dst
	}
	dst = e.eventHead(dst, "response.reasoning_summary_text.delta")
	dst = e.appendPartRef(dst, i, "summary_index", len(it.summary)-1)
	dst = append(dst, `,"delta":"`...)
	dst = jsonout.AppendStringBodyS(dst, pre)
	dst = jsonout.AppendStringBody(dst, text)
	dst = jsonout.AppendStringBodyS(dst, post)
	return append(dst, `"`+eventTail...)
}

// closeReasoningParts ends reasoning item i's open parts.
func (e *Encoder) closeReasoningParts(dst []byte, i int) []byte {
	open := e.open
	e.open = i
	dst = e.closePart(dst, &summaryParts)
	dst = e.closePart(dst, &contentParts)
	e.open = open
	return dst
}

// toolItem returns the output index of tool call ev.Index, opening its
// function_call item (and closing the open text item) when it has none;
// ok is false for an index out of range, which is not sent.
func (e *Encoder) toolItem(dst []byte, ev transform.Event) ([]byte, int, bool) {
	if ev.Index < 0 || ev.Index >= maxToolIndex {
		return dst, 0, false
	}
	for len(e.tools) <= ev.Index {
		e.tools = append(e.tools, 0)
	}
	if n := e.tools[ev.Index]; n > 0 {
		return dst, int(n) - 1, true
	}
	dst = e.closeText(dst, e.kindOpen())
	it := item{kind: itemFunctionCall, callID: ev.ID, name: ev.Name}
	if ev.Server {
		it = newMCPItem(ev)
	}
	dst, i := e.addItem(dst, it)
	e.tools[ev.Index] = int32(i) + 1
	return dst, i, true
}

// toolCallStart opens a function_call item with its call_id and name.
func (e *Encoder) toolCallStart(dst []byte, ev transform.Event) []byte {
	dst, _, _ = e.toolItem(dst, ev)
	return dst
}

// toolArgs streams a fragment of a call's arguments, byte for byte as the
// model wrote it.
func (e *Encoder) toolArgs(dst []byte, ev transform.Event) []byte {
	if len(ev.Text) == 0 {
		return dst
	}
	dst, i, ok := e.toolItem(dst, ev)
	if !ok || e.items[i].argsClosed() {
		return dst
	}
	return e.argsDelta(dst, i, ev.Text)
}

func (e *Encoder) argsDelta(dst []byte, i int, args []byte) []byte {
	it := &e.items[i]
	it.argued = true
	it.text = appendValid(it.text, args)
	if !e.meta.Stream {
		return dst
	}
	if it.kind == itemMCP {
		dst = e.eventHead(dst, "response.mcp_call_arguments.delta")
	} else {
		dst = e.eventHead(dst, "response.function_call_arguments.delta")
	}
	dst = e.appendItemRef(dst, i)
	dst = append(dst, `,"delta":`...)
	dst = jsonout.AppendString(dst, args)
	return append(dst, eventTail...)
}

// toolCallEnd completes a call. One none of whose arguments were streamed
// (a parameterless call, whose end says "{}") sends them now as one delta,
// so that the deltas always add up to the arguments the done event
// repeats.
func (e *Encoder) toolCallEnd(dst []byte, ev transform.Event) []byte {
	dst, i, ok := e.toolItem(dst, ev)
	if !ok || e.items[i].argsClosed() {
		return dst
	}
	if !e.items[i].argued && len(ev.Text) > 0 {
		dst = e.argsDelta(dst, i, ev.Text)
	}
	if e.items[i].kind == itemMCP {
		return e.mcpArgsDone(dst, i)
	}
	// The call's done events wait like a text item's (endText); a call
	// still pending is not ended twice.
	if e.pending == i {
		return dst
	}
	dst = e.flushPending(dst, false)
	e.pending = i
	return dst
}

// closeCall sends function call i's arguments.done and output_item.done.
func (e *Encoder) closeCall(dst []byte, i int) []byte {
	it := &e.items[i]
	if e.meta.Stream {
		dst = e.eventHead(dst, "response.function_call_arguments.done")
		dst = e.appendItemRef(dst, i)
		dst = append(dst, `,"name":`...)
		dst = jsonout.AppendStringS(dst, it.name)
		dst = append(dst, `,"arguments":`...)
		dst = jsonout.AppendString(dst, it.text)
		dst = append(dst, eventTail...)
	}
	return e.itemDone(dst, i)
}

// closeAll ends every item still open, in order, at the end of the
// stream: the one whose end waits, then the open text item and the calls
// never ended. cut (a reply cut short, or a failure) makes each of them
// incomplete; the items ended before it stay completed.
func (e *Encoder) closeAll(dst []byte, cut bool) []byte {
	dst = e.flushPending(dst, cut)
	if e.open >= 0 {
		e.items[e.open].cut = cut
	}
	dst = e.closeText(dst, e.kindOpen())
	for i := range e.items {
		it := &e.items[i]
		switch {
		case it.done:
		case it.kind == itemFunctionCall:
			it.cut = cut
			dst = e.closeCall(dst, i)
		case it.kind == itemMCP:
			// The loop promises every call an outcome before the end.
			dst = e.mcpAbandon(dst, i)
		}
	}
	return dst
}

// appendValid appends text to a kept text with each byte that is not
// valid UTF-8 replaced by U+FFFD, as the delta carrying it renders it, so
// that the .done events and the final Response always repeat exactly what
// the deltas added up to (the pipeline sends whole characters; this holds
// whatever it is given). It allocates only when dst must grow.
func appendValid(dst, text []byte) []byte {
	if utf8.Valid(text) {
		return append(dst, text...)
	}
	for len(text) > 0 {
		r, size := utf8.DecodeRune(text)
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, "\uFFFD"...)
		} else {
			dst = append(dst, text[:size]...)
		}
		text = text[size:]
	}
	return dst
}
