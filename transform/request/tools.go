package request

import "github.com/llmstream/llmstream/transform/jsonout"

// appendTools appends the client's tools array cur merged with the
// configured tools (CONTRACT.md §3): a client tool whose function name a
// configured tool has is replaced in place by it, the other client tools
// keep their bytes and order, and configured tools the client did not name
// are appended in configured order. A second client tool with the name of
// a configured one is dropped rather than replaced too, because function
// names must be unique upstream. cur may be absent or null (a new array);
// the caller has checked that it is otherwise an array.
func appendTools(dst []byte, d jsonDoc, cur span, tools [][]byte) []byte {
	var nameBuf [8]string
	names := nameBuf[:0]
	for _, t := range tools {
		names = append(names, functionName(jsonDoc(t), jsonDoc(t).root()))
	}
	var usedBuf [8]bool
	used := usedBuf[:0]
	for range tools {
		used = append(used, false)
	}
	dst = append(dst, '[')
	first := true
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	var tail []byte
	if d.kind(cur) == '[' {
		pos := cur.start + 1
		d.elements(cur, func(e span) bool {
			seg := d[d.segmentStart(e.start):e.end]
			pos = e.end
			i := indexOf(names, functionName(d, e))
			switch {
			case i < 0:
				sep()
				dst = append(dst, seg...)
			case !used[i]:
				used[i] = true
				sep()
				// Keep the client's leading whitespace, swap the tool.
				dst = append(dst, seg[:len(seg)-(e.end-e.start)]...)
				dst = append(dst, tools[i]...)
			}
			return true
		})
		tail = d[pos : cur.end-1]
	}
	for i, t := range tools {
		if !used[i] {
			sep()
			dst = append(dst, t...)
		}
	}
	return append(append(dst, tail...), ']')
}

// functionName returns the function name of OpenAI tool object tool, read
// as the upstream reads duplicated keys (the last one counts), or "".
func functionName(d jsonDoc, tool span) string {
	return d.memberStr(d.member(tool, "function"), "name")
}

// indexOf returns the index of name in names, or -1. An empty name matches
// nothing: a client tool without a name is never taken for a configured one.
func indexOf(names []string, name string) int {
	if name == "" {
		return -1
	}
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// appendToolChoice appends the tool_choice value for choice: the three
// keywords as strings, anything else as the function it names
// (CONTRACT.md §3 tool_choice).
func appendToolChoice(dst []byte, choice string) []byte {
	switch choice {
	case ToolChoiceAuto, ToolChoiceNone, ToolChoiceRequired:
		return jsonout.AppendStringS(dst, choice)
	}
	dst = append(dst, `{"type":"function","function":{"name":`...)
	dst = jsonout.AppendStringS(dst, choice)
	return append(dst, "}}"...)
}

// toolsLen returns the bytes the configured tools take, to size the output.
func toolsLen(tools [][]byte) int {
	n := 0
	for _, t := range tools {
		n += len(t) + 1
	}
	return n
}
