package responses

import (
	"bytes"
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// compactionEvent handles ev for a compaction response: the answer is
// collected as the summary, everything else the model writes (reasoning,
// tool calls) is dropped, and the end writes the one compaction item.
func (e *Encoder) compactionEvent(dst []byte, ev transform.Event) []byte {
	switch ev.Kind {
	case transform.KindRouted:
		if ev.Name != "" {
			e.model = ev.Name
		}
		if e.req.Compaction == CompactionTrigger {
			dst = e.begin(dst)
		}
	case transform.KindAnswerDelta:
		e.summary = append(e.summary, ev.Text...)
	case transform.KindUsage:
		e.usage = append(e.usage[:0], ev.Text...)
	case transform.KindFinish:
		e.done = true
		summary := bytes.TrimSpace(e.summary)
		if len(summary) == 0 || e.req.Sealer == nil {
			return e.compactionFailed(dst, transform.Event{Kind: transform.KindError, Code: transform.CodeUpstreamError,
				Text: []byte("the upstream model wrote no summary to compact the conversation into")})
		}
		sealed := e.req.Sealer.Seal(summary)
		if e.req.Compaction == CompactionEndpoint {
			e.items = append(e.items, item{kind: itemCompaction, text: []byte(sealed), done: true})
			e.final = final{status: "completed"}
			return append(e.appendCompactResource(dst), '\n')
		}
		dst, i := e.addItem(dst, item{kind: itemCompaction})
		e.items[i].text = []byte(sealed)
		dst = e.itemDone(dst, i)
		// A summary cut by the token limit is still a summary of what it
		// covers; the response says it was cut.
		return e.finish(dst, ev.Code)
	case transform.KindError:
		e.done = true
		return e.compactionFailed(dst, ev)
	}
	return dst
}

// compactionFailed ends a compaction that has no summary: as a failed
// response (compaction_trigger), or with an error body and 502/504
// (/v1/responses/compact, which has no stream).
func (e *Encoder) compactionFailed(dst []byte, ev transform.Event) []byte {
	if e.req.Compaction == CompactionEndpoint {
		e.meta.Stream = false
	}
	return e.fail(dst, ev)
}

// appendCompactResource appends the Open Responses CompactResource of a
// compaction: {id, object "response.compaction", created_at, output: the
// one compaction item, usage}. Usage is required there: zeros when the
// upstream reported none.
func (e *Encoder) appendCompactResource(dst []byte) []byte {
	dst = append(dst, `{"id":"resp_`...)
	dst = jsonout.AppendStringBodyS(dst, e.base)
	dst = append(dst, `","object":"response.compaction","created_at":`...)
	dst = strconv.AppendInt(dst, e.meta.Created.Unix(), 10)
	dst = append(dst, `,"output":[`...)
	for i := range e.items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = e.appendItem(dst, i, true)
	}
	dst = append(dst, `],"usage":`...)
	if u := appendUsage(nil, e.usage); string(u) != "null" {
		dst = append(dst, u...)
	} else {
		dst = append(dst, `{"input_tokens":0,"input_tokens_details":{"cached_tokens":0},"output_tokens":0,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":0}`...)
	}
	return append(dst, '}')
}
