package aisdk

import (
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// maxToolIndex bounds the tool call indices tracked in calls, far above
// Limits.MaxToolCalls, so that a bad index cannot grow it without bound.
const maxToolIndex = 1 << 12

// The state of a tool call, by pipeline index, in calls: what the client's
// tool part has seen. A call to a tool the gateway runs (CONTRACT.md §12)
// also has callServer set.
const (
	callNone      uint8 = iota // nothing sent
	callStreaming              // tool-input-start sent: its input streams
	callInput                  // tool-input-available (or -error) sent
	callOutput                 // tool-output-available or -error sent: the part is done

	callServer uint8 = 1 << 7
)

// call returns the state of tool call i, nil for an index outside
// [0, maxToolIndex), which is not sent at all.
func (e *Encoder) call(i int) *uint8 {
	if i < 0 || i >= maxToolIndex {
		return nil
	}
	for len(e.calls) <= i {
		e.calls = append(e.calls, callNone)
	}
	return &e.calls[i]
}

// appendToolInputStart appends tool-input-start {toolCallId, toolName}.
// A server call's part is marked providerExecuted, so that useChat runs
// no onToolCall for it and sends no result of its own, and dynamic, since
// the page declares no type for the gateway's tools; its title is the
// tool's label.
func (e *Encoder) appendToolInputStart(dst []byte, ev transform.Event) []byte {
	st := e.call(ev.Index)
	if st == nil || *st != callNone {
		return dst // a second start would replace the first call's part
	}
	dst = e.closePart(dst)
	*st = callStreaming
	if ev.Server {
		*st |= callServer
	} else {
		e.toolCalls = true
	}
	dst = appendToolHead(dst, "tool-input-start", ev)
	if ev.Server {
		dst = appendServerMarks(dst, ev.Tool, ev.Name)
	}
	return append(dst, "}\n\n"...)
}

// appendToolInputDelta appends tool-input-delta {toolCallId,
// inputTextDelta} with the raw fragment. It does not close the open text
// or reasoning part: the SDK keys tool input by toolCallId, not by order.
// A fragment of a call that is not streaming its input is dropped: the
// SDK would throw on it (ai@6 processUIMessageStream), ending the client's
// stream.
func (e *Encoder) appendToolInputDelta(dst []byte, ev transform.Event) []byte {
	if len(ev.Text) == 0 || ev.Index < 0 || ev.Index >= len(e.calls) || e.calls[ev.Index]&^callServer != callStreaming {
		return dst
	}
	dst = append(dst, `data: {"type":"tool-input-delta","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	dst = append(dst, `,"inputTextDelta":`...)
	dst = jsonout.AppendString(dst, ev.Text)
	return append(dst, "}\n\n"...)
}

// appendToolInputEnd appends tool-input-available {toolCallId, toolName,
// input} with the complete arguments of a client's call. Arguments that
// are not valid JSON become tool-input-error {toolCallId, toolName, input:
// the text as a string, errorText}, as the SDK's own streamText reports an
// invalid tool input: the part shows the error and the raw text instead
// of input that never parsed. A server call's input is complete when the
// gateway runs it (appendToolRun).
func (e *Encoder) appendToolInputEnd(dst []byte, ev transform.Event) []byte {
	if ev.Server {
		return dst
	}
	st := e.call(ev.Index)
	if st == nil || *st&^callServer >= callInput {
		return dst
	}
	*st = callInput
	e.toolCalls = true
	head := append(appendToolHead(dst, "tool-input-available", ev), `,"input":`...)
	if input, ok := jsonout.AppendCompact(head, ev.Text); ok {
		return append(input, "}\n\n"...)
	}
	dst = append(appendToolHead(dst, "tool-input-error", ev), `,"input":`...)
	dst = jsonout.AppendString(dst, ev.Text)
	dst = append(dst, `,"errorText":"invalid tool input: the arguments are not valid JSON"`...)
	return append(dst, "}\n\n"...)
}

// appendToolRun appends tool-input-available for a server call the
// gateway starts, providerExecuted and dynamic, with its title: the part
// shows the complete input while the tool runs. Arguments that are not
// JSON are the input as a string: the gateway runs the call anyway (and
// the tool answers with its error), so the part is not an input error.
func (e *Encoder) appendToolRun(dst []byte, ev transform.Event) []byte {
	st := e.call(ev.Index)
	if st == nil || *st&^callServer >= callInput {
		return dst
	}
	dst = e.closePart(dst)
	*st = callInput | callServer
	for len(e.ids) <= ev.Index {
		e.ids = append(e.ids, "")
	}
	e.ids[ev.Index] = ev.ID
	dst = append(appendToolHead(dst, "tool-input-available", ev), `,"input":`...)
	if len(ev.Text) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = jsonout.AppendOrString(dst, ev.Text)
	}
	dst = appendServerMarks(dst, ev.Tool, ev.Name)
	return append(dst, "}\n\n"...)
}

// appendToolProgress appends data-tool-progress {toolCallId, toolName,
// progress, total, message} for a running server call, with the call id as
// the part's id, so that useChat replaces the call's progress in place
// (ai@6 processUIMessageStream: a data part with the type and id of an
// earlier one replaces its data). total and message are null when the tool
// gave none. Progress of a call that is not running is dropped.
func (e *Encoder) appendToolProgress(dst []byte, ev transform.Event) []byte {
	if ev.Tool == nil || ev.Index < 0 || ev.Index >= len(e.calls) || e.calls[ev.Index] != callInput|callServer {
		return dst
	}
	dst = e.closePart(dst)
	dst = append(dst, `data: {"type":"data-tool-progress","id":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	dst = append(dst, `,"data":{"toolCallId":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	dst = append(dst, `,"toolName":`...)
	dst = jsonout.AppendStringS(dst, ev.Name)
	dst = append(dst, `,"progress":`...)
	dst = appendNumber(dst, ev.Tool.Progress)
	dst = append(dst, `,"total":`...)
	if ev.Tool.Total > 0 {
		dst = appendNumber(dst, ev.Tool.Total)
	} else {
		dst = append(dst, "null"...)
	}
	dst = append(dst, `,"message":`...)
	if ev.Tool.Message != "" {
		dst = jsonout.AppendStringS(dst, ev.Tool.Message)
	} else {
		dst = append(dst, "null"...)
	}
	return append(dst, "}}\n\n"...)
}

// appendToolResult appends tool-output-available {toolCallId, output} for
// a server call that completed, with the result the model got as the
// output string, or tool-output-error {toolCallId, errorText} for one
// that failed; both providerExecuted and dynamic, as the part they
// complete. A result for a call whose input was never made available is
// dropped: the SDK throws on an output for a call it has no part for.
func (e *Encoder) appendToolResult(dst []byte, ev transform.Event) []byte {
	if ev.Index < 0 || ev.Index >= len(e.calls) || e.calls[ev.Index] != callInput|callServer {
		return dst
	}
	failed, output := true, ""
	if ev.Tool != nil {
		switch ev.Tool.Status {
		case transform.ToolAwaiting:
			if ev.Tool.Await != nil && ev.Tool.Await.Kind == transform.AwaitApproval {
				return e.appendApprovalRequest(dst, ev)
			}
		case transform.ToolDenied:
			return e.appendDenied(dst, ev)
		}
		failed, output = ev.Tool.Status != transform.ToolCompleted, ev.Tool.Output
	}
	dst = e.appendOutput(dst, ev.Index, ev.ID, failed, output)
	if ev.Tool != nil {
		dst = appendArtifacts(dst, ev.Tool.Artifacts)
		dst = appendImages(dst, ev.Tool.Images)
	}
	return dst
}

// appendImages appends a file part {url, mediaType} per image a result
// carries (CONTRACT.md §13): useChat shows an image file part as the
// image.
func appendImages(dst []byte, images []transform.Image) []byte {
	for _, im := range images {
		typ := im.Type
		if typ == "" {
			typ = "image/png"
		}
		dst = append(dst, `data: {"type":"file","url":`...)
		dst = jsonout.AppendStringS(dst, im.URL)
		dst = append(dst, `,"mediaType":`...)
		dst = jsonout.AppendStringS(dst, typ)
		dst = append(dst, "}\n\n"...)
	}
	return dst
}

// appendArtifacts appends a data part per artifact of a result (specs/004
// §7.3: the events the seed's tools emit): data-file-ready {url, name,
// type} for a file, data-<event> with the result's data for the route's
// event of the tool (data-quiz-complete, data-interactive-content,
// data-pptx-outline).
func appendArtifacts(dst []byte, arts []transform.Artifact) []byte {
	for _, a := range arts {
		dst = append(dst, `data: {"type":"data-`...)
		dst = jsonout.AppendStringBodyS(dst, a.Kind)
		dst = append(dst, `","data":`...)
		switch a.Kind {
		case transform.ArtifactResource:
			// data-resource {resourceType, data}: structured data.
			dst = append(dst, `{"resourceType":`...)
			dst = jsonout.AppendStringS(dst, a.Name)
			dst = append(dst, `,"data":`...)
			dst = jsonout.AppendOrString(dst, a.Data)
			dst = append(dst, '}')
		case transform.ArtifactFile:
			dst = append(dst, `{"url":`...)
			dst = jsonout.AppendStringS(dst, a.URL)
			dst = append(dst, `,"name":`...)
			dst = jsonout.AppendStringS(dst, a.Name)
			dst = append(dst, `,"type":`...)
			dst = jsonout.AppendStringS(dst, a.Type)
			dst = append(dst, '}')
		default:
			dst = jsonout.AppendOrString(dst, a.Data)
		}
		dst = append(dst, "}\n\n"...)
	}
	return dst
}

// appendApprovalRequest appends tool-approval-request {approvalId,
// toolCallId} for a server call that waits for the user's approval
// (CONTRACT.md §13): useChat shows the part in state approval-requested,
// and addToolApprovalResponse sends the answer back in the next request,
// which resumes the call. The approval id is the gateway's (Await.ID), the
// call id when it has none. The part is done for this stream: it is not
// abandoned at the end.
func (e *Encoder) appendApprovalRequest(dst []byte, ev transform.Event) []byte {
	dst = e.closePart(dst)
	e.calls[ev.Index] = callOutput | callServer
	id := ev.Tool.Await.ID
	if id == "" {
		id = ev.ID
	}
	dst = append(dst, `data: {"type":"tool-approval-request","approvalId":`...)
	dst = jsonout.AppendStringS(dst, id)
	dst = append(dst, `,"toolCallId":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	return append(dst, "}\n\n"...)
}

// appendDenied appends tool-output-denied {toolCallId}: the user declined
// the call, which did not run (the part's state output-denied).
func (e *Encoder) appendDenied(dst []byte, ev transform.Event) []byte {
	dst = e.closePart(dst)
	e.calls[ev.Index] = callOutput | callServer
	dst = append(dst, `data: {"type":"tool-output-denied","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	return append(dst, "}\n\n"...)
}

// appendOutput appends the output chunk that completes server call i.
func (e *Encoder) appendOutput(dst []byte, i int, id string, failed bool, text string) []byte {
	dst = e.closePart(dst)
	e.calls[i] = callOutput | callServer
	if failed {
		dst = append(dst, `data: {"type":"tool-output-error","toolCallId":`...)
		dst = jsonout.AppendStringS(dst, id)
		dst = append(dst, `,"errorText":`...)
	} else {
		dst = append(dst, `data: {"type":"tool-output-available","toolCallId":`...)
		dst = jsonout.AppendStringS(dst, id)
		dst = append(dst, `,"output":`...)
	}
	dst = jsonout.AppendStringS(dst, text)
	return append(dst, `,"providerExecuted":true,"dynamic":true}`+"\n\n"...)
}

// abandonRuns completes every server call still running when the stream
// ends with tool-output-error and message, so that no tool part is left
// spinning.
func (e *Encoder) abandonRuns(dst []byte, message string) []byte {
	for i, st := range e.calls {
		if st == callInput|callServer && i < len(e.ids) {
			dst = e.appendOutput(dst, i, e.ids[i], true, message)
		}
	}
	return dst
}

// appendToolHead appends a tool chunk of type typ up to its toolCallId and
// toolName, the fields every tool input chunk but the delta starts with.
func appendToolHead(dst []byte, typ string, ev transform.Event) []byte {
	dst = append(dst, `data: {"type":"`...)
	dst = append(dst, typ...)
	dst = append(dst, `","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, ev.ID)
	dst = append(dst, `,"toolName":`...)
	return jsonout.AppendStringS(dst, ev.Name)
}

// appendServerMarks appends what marks a server call's input chunks:
// providerExecuted, dynamic, and the title (the tool's label, else its
// name).
func appendServerMarks(dst []byte, t *transform.Tool, name string) []byte {
	dst = append(dst, `,"providerExecuted":true,"dynamic":true,"title":`...)
	if t != nil && t.Label != "" {
		return jsonout.AppendStringS(dst, t.Label)
	}
	return jsonout.AppendStringS(dst, name)
}

// appendNumber appends a JSON number (a progress count; NaN and the
// infinities, which JSON lacks, as 0).
func appendNumber(dst []byte, f float64) []byte {
	if f != f || f > 1e300 || f < -1e300 {
		f = 0
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}
