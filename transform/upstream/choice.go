package upstream

import "strconv"

// The members of choice 0: its delta (or message), finish_reason and
// usage, and in the message its content (content.go), reasoning and tool
// calls.

// choices reads the choice whose index is 0 and skips the rest (n=1, see
// the package doc). A choice's index is its "index" member when that is a
// non-negative integer, else its position in the array. Members come in
// any order (Doubao sends "index" last), so each choice is read as it
// comes and rolled back when it turns out to be another one: that costs
// nothing for choice 0, which comes first in every reply llmstream asked
// for.
func (d *ChunkDecoder) choices(choices *array, member string) {
	c := &d.chunk
	answered := false
	for pos := 0; choices.next(); pos++ {
		ch, ok := choices.object()
		if !ok {
			continue
		}
		m := d.mark()
		raw := d.choice(&ch, member)
		index, ok := parseIndex(raw)
		if !ok {
			index = pos
		}
		if index == 0 && !answered {
			answered = true
			continue
		}
		d.rollback(m)
		if c.StrayChoice == nil {
			if _, ok := parseIndex(raw); ok {
				c.StrayChoice = raw
			} else {
				start := len(d.scratch)
				d.scratch = strconv.AppendInt(d.scratch, int64(pos), 10)
				c.StrayChoice = d.scratch[start:len(d.scratch):len(d.scratch)]
			}
		}
	}
}

// choice reads one choice into d.chunk and returns the raw value of its
// index, nil when it has none.
func (d *ChunkDecoder) choice(ch *object, member string) (index []byte) {
	for key, ok := ch.next(); ok; key, ok = ch.next() {
		if string(key) == member {
			// Compared apart: a variable among the constant cases makes
			// the switch convert every key to a string.
			if msg, ok := ch.object(); ok {
				d.message(&msg, member == "message")
			}
			continue
		}
		switch string(key) {
		case "index":
			index = ch.raw()
		case "finish_reason":
			// Some providers send "" instead of null until the end.
			if r := d.text(ch.raw()); len(r) > 0 {
				d.chunk.FinishReason = r
			}
		case "usage":
			if raw := ch.raw(); isObject(raw) {
				d.choiceUsage = raw
			}
		}
	}
	return index
}

// choiceMark is what d.chunk held before a choice was read.
type choiceMark struct {
	content, reasoning, finish, usage []byte
	calls, viols, scratch             int
}

func (d *ChunkDecoder) mark() choiceMark {
	c := &d.chunk
	return choiceMark{content: c.Content, reasoning: c.Reasoning, finish: c.FinishReason, usage: d.choiceUsage,
		calls: len(c.ToolCalls), viols: len(c.Violations), scratch: len(d.scratch)}
}

// rollback forgets what the choice read since m.
func (d *ChunkDecoder) rollback(m choiceMark) {
	c := &d.chunk
	c.Content, c.Reasoning, c.FinishReason, d.choiceUsage = m.content, m.reasoning, m.finish, m.usage
	c.ToolCalls, c.Violations, d.scratch = c.ToolCalls[:m.calls], c.Violations[:m.viols], d.scratch[:m.scratch]
}

// message reads a delta (or a completion's message).
func (d *ChunkDecoder) message(msg *object, complete bool) {
	c := &d.chunk
	var reasoningContent, reasoning, refusal []byte
	d.segs = d.segs[:0]
	for key, ok := msg.next(); ok; key, ok = msg.next() {
		switch string(key) {
		case "content":
			d.content(msg)
		case "reasoning_content":
			reasoningContent = msg.raw()
		case "reasoning":
			reasoning = msg.raw()
		case "refusal":
			// A refusal (structured outputs) is what the model wrote for
			// the user instead of an answer: it is content.
			refusal = msg.raw()
		case "tool_calls":
			if calls, ok := msg.array(); ok {
				d.toolCalls(&calls, complete)
			}
		case "function_call":
			// The legacy functions API (a client that sent "functions"):
			// one call, whose fragments carry neither index nor id, so
			// that the lone-fragment rules assemble it.
			if fn, ok := msg.object(); ok {
				tc := ToolCallDelta{Index: 0, HasIndex: complete}
				d.function(&fn, &tc)
				c.ToolCalls = append(c.ToolCalls, tc)
			}
		}
	}
	if isString(refusal) {
		d.segs = append(d.segs, segment{raw: refusal})
	}
	c.Content = d.join(false)
	// The aliases (Chunk.Reasoning): only the one kept is unescaped.
	if c.Reasoning = d.text(reasoningContent); len(c.Reasoning) == 0 {
		if c.Reasoning = d.text(reasoning); len(c.Reasoning) == 0 {
			c.Reasoning = d.join(true)
		}
	}
}

// toolCalls reads a tool_calls array. In a completion (complete) each call
// is whole and has no index: its position in the array is its index. In a
// stream, a fragment without an index in an array of several is
// Positional.
func (d *ChunkDecoder) toolCalls(calls *array, complete bool) {
	c := &d.chunk
	first := len(c.ToolCalls)
	for pos := 0; calls.next(); pos++ {
		call, ok := calls.object()
		if !ok {
			continue
		}
		tc := ToolCallDelta{Position: pos}
		for key, ok := call.next(); ok; key, ok = call.next() {
			switch string(key) {
			case "index":
				tc.Index, tc.HasIndex = parseIndex(call.raw())
			case "id":
				tc.ID = d.text(call.raw())
			case "type":
				tc.Type = d.text(call.raw())
			case "function":
				if fn, ok := call.object(); ok {
					d.function(&fn, &tc)
				}
			}
		}
		if complete {
			tc.Index, tc.HasIndex = pos, true
		}
		c.ToolCalls = append(c.ToolCalls, tc)
	}
	if several := c.ToolCalls[first:]; len(several) > 1 {
		for i := range several {
			several[i].Positional = !several[i].HasIndex
		}
	}
}

func (d *ChunkDecoder) function(fn *object, tc *ToolCallDelta) {
	for key, ok := fn.next(); ok; key, ok = fn.next() {
		switch string(key) {
		case "name":
			tc.Name = d.text(fn.raw())
		case "arguments":
			raw := fn.raw()
			if len(raw) > 0 && (raw[0] == '{' || raw[0] == '[') {
				tc.Arguments = raw
			} else {
				tc.Arguments = d.text(raw)
			}
		}
	}
}
