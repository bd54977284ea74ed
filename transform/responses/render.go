package responses

import (
	"strconv"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// eventTail ends an event's data object and the event.
const eventTail = "}\n\n"

// emptyOutputText is an output_text part before its text, with the
// annotations and logprobs the SDKs' types require.
const emptyOutputText = `{"type":"output_text","text":"","annotations":[],"logprobs":[]}`

// eventHead opens an event of type typ: its event: line, named like the
// type (the SDKs read data only; other SSE clients dispatch on the name),
// and its data object up to its sequence_number.
func (e *Encoder) eventHead(dst []byte, typ string) []byte {
	dst = append(dst, "event: "...)
	dst = append(dst, typ...)
	dst = append(dst, "\ndata: {\"type\":\""...)
	dst = append(dst, typ...)
	dst = append(dst, `","sequence_number":`...)
	dst = strconv.AppendInt(dst, e.seq, 10)
	e.seq++
	return dst
}

// appendOutputIndex appends item i's output_index member.
func (e *Encoder) appendOutputIndex(dst []byte, i int) []byte {
	dst = append(dst, `,"output_index":`...)
	return strconv.AppendInt(dst, int64(i), 10)
}

// appendItemRef appends item i's item_id and output_index members.
func (e *Encoder) appendItemRef(dst []byte, i int) []byte {
	dst = append(dst, `,"item_id":`...)
	dst = e.appendItemID(dst, i)
	return e.appendOutputIndex(dst, i)
}

// appendPartRef appends item i's reference and a part index member
// (content_index or summary_index).
func (e *Encoder) appendPartRef(dst []byte, i int, name string, j int) []byte {
	dst = e.appendItemRef(dst, i)
	dst = append(dst, ',', '"')
	dst = append(dst, name...)
	dst = append(dst, '"', ':')
	return strconv.AppendInt(dst, int64(j), 10)
}

// appendItemID appends item i's id, quoted: msg_, rs_ or fc_, the
// response's base id, and the output index, so that ids are unique and
// stable without state.
func (e *Encoder) appendItemID(dst []byte, i int) []byte {
	if it := &e.items[i]; it.kind == itemApproval {
		return jsonout.AppendStringS(dst, it.callID)
	}
	dst = append(dst, '"')
	dst = append(dst, idPrefix[e.items[i].kind]...)
	dst = jsonout.AppendStringBodyS(dst, e.base)
	dst = append(dst, '_')
	dst = strconv.AppendInt(dst, int64(i), 10)
	return append(dst, '"')
}

// appendItem appends item i as an output item object: as it opens (whole
// false: empty content, empty arguments, in_progress), or with everything
// it said (whole true), completed once done and incomplete otherwise (a
// failed response's unfinished items).
func (e *Encoder) appendItem(dst []byte, i int, whole bool) []byte {
	it := &e.items[i]
	status := "in_progress"
	if whole {
		status = "incomplete"
		if it.done && !it.cut {
			status = "completed"
		}
	}
	dst = append(dst, `{"id":`...)
	dst = e.appendItemID(dst, i)
	switch it.kind {
	case itemMessage:
		dst = append(dst, `,"type":"message","status":"`...)
		dst = append(dst, status...)
		dst = append(dst, `","role":"assistant","content":[`...)
		if whole {
			dst = appendOutputText(dst, it.text)
		}
		dst = append(dst, ']')
	case itemCompaction:
		// Open Responses CompactionBody: no status member; the sealed
		// summary once it is written.
		dst = append(dst, `,"type":"compaction","encrypted_content":`...)
		if whole {
			dst = jsonout.AppendString(dst, it.text)
		} else {
			dst = append(dst, `""`...)
		}
		dst = append(dst, `,"created_by":"llmstream"`...)
	case itemReasoning:
		dst = append(dst, `,"type":"reasoning","status":"`...)
		dst = append(dst, status...)
		dst = append(dst, `","summary":[`...)
		if whole {
			dst = appendParts(dst, it.summary, `{"type":"summary_text","text":`)
		}
		dst = append(dst, `],"content":[`...)
		if whole {
			dst = appendParts(dst, it.content, `{"type":"reasoning_text","text":`)
		}
		dst = append(dst, ']')
	case itemMCP:
		dst = e.appendMCPItem(dst, i, whole)
	case itemApproval:
		dst = append(dst, `,"type":"mcp_approval_request","server_label":`...)
		dst = jsonout.AppendStringS(dst, it.mcp.server)
		dst = append(dst, `,"name":`...)
		dst = jsonout.AppendStringS(dst, it.name)
		dst = append(dst, `,"arguments":`...)
		dst = jsonout.AppendString(dst, it.text)
	default:
		dst = append(dst, `,"type":"function_call","status":"`...)
		dst = append(dst, status...)
		dst = append(dst, `","call_id":`...)
		dst = jsonout.AppendStringS(dst, it.callID)
		dst = append(dst, `,"name":`...)
		dst = jsonout.AppendStringS(dst, it.name)
		dst = append(dst, `,"arguments":`...)
		if whole {
			dst = jsonout.AppendString(dst, it.text)
		} else {
			dst = append(dst, `""`...)
		}
	}
	return append(dst, '}')
}

// appendOutputText appends an output_text part holding text.
func appendOutputText(dst, text []byte) []byte {
	dst = append(dst, `{"type":"output_text","text":`...)
	dst = jsonout.AppendString(dst, text)
	return append(dst, `,"annotations":[],"logprobs":[]}`...)
}

// appendParts appends reasoning parts, each head, its text and "}".
func appendParts(dst []byte, parts []part, head string) []byte {
	for j, p := range parts {
		if j > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, head...)
		dst = jsonout.AppendString(dst, p.text)
		dst = append(dst, '}')
	}
	return dst
}
