package responses

import (
	"encoding/json"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform/chatmsg"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// A client sends back the mcp_call items of a response whose rounds ran
// the gateway's tools (CONTRACT.md §12 "What comes back", mcp.go), or of
// OpenAI's own hosted MCP tool: each becomes an assistant tool call (its
// id the item's) and a tool message with its output, or its error, so that
// the model sees what it did last turn. Consecutive calls, as a round's
// parallel calls come back, share one assistant message, with the text the
// model wrote before them when the item before is that text; their tool
// messages follow it. A call that never finished (no output and no error)
// is answered with a note that says so: a call without its tool message is
// refused by OpenAI-compatible servers. Nothing in an mcp_call is a 400:
// a missing id or arguments get a stand-in, a call without a name is left
// out. mcp_list_tools and mcp_approval_request items have no chat
// counterpart and are left out (item:…, in LeftOut). An
// mcp_approval_response answers a call that waits for the user's
// approval (CONTRACT.md §13, mcp.go's mcpAwait): it is Info.Approvals,
// which resumes that call, and no message.

// mcpUnfinished is the tool message of a call that came back without an
// outcome.
const mcpUnfinished = "The tool call did not finish."

// mcpCall converts mcp_call item i.
func (c *converter) mcpCall(i int, obj map[string]json.RawMessage) {
	name := stringOf(obj["name"])
	if name == "" {
		c.leave("item:mcp_call")
		return
	}
	id := stringOf(obj["id"])
	if id == "" {
		id = "mcp_" + strconv.Itoa(i)
	}
	args := "{}"
	switch kindOf(obj["arguments"]) {
	case '"':
		if s := stringOf(obj["arguments"]); s != "" {
			args = s
		}
	case '{', '[':
		if b, ok := jsonout.AppendCompact(nil, obj["arguments"]); ok {
			args = string(b)
		}
	}
	result := mcpOutcome(obj)
	call := chatmsg.AppendToolCalls(nil, []chatmsg.ToolCall{{ID: id, Name: name, Arguments: args}})
	call = call[1 : len(call)-1] // one element of tool_calls
	tool := chatMessage{role: "tool", callID: jsonout.AppendStringS(nil, id), content: jsonout.AppendStringS(nil, result)}
	g := c.mcpGroup - 1
	if g < 0 && len(c.msgs) > 0 && c.msgs[len(c.msgs)-1].role == "assistant" {
		g = len(c.msgs) - 1 // the text, or the calls, the model wrote before
	}
	if g < 0 {
		c.msgs = append(c.msgs, chatMessage{role: "assistant"})
		g = len(c.msgs) - 1
	}
	m := &c.msgs[g]
	if len(m.calls) > 0 {
		m.calls = append(m.calls, ',')
	}
	m.calls = append(m.calls, call...)
	c.msgs = append(c.msgs, tool)
	c.mcpGroup = g + 1
}

// mcpOutcome returns what the model reads of an mcp_call's outcome: its
// output, else its error's text (a string, or an error object's message or
// text content, as the SDKs type it), else mcpUnfinished.
func mcpOutcome(obj map[string]json.RawMessage) string {
	if kindOf(obj["output"]) == '"' {
		return stringOf(obj["output"])
	}
	raw := obj["error"]
	switch kindOf(raw) {
	case '"':
		return stringOf(raw)
	case '{':
		var e struct {
			Message string `json:"message"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(raw, &e)
		var texts []string
		for _, p := range e.Content {
			if p.Text != "" {
				texts = append(texts, p.Text)
			}
		}
		switch {
		case e.Message != "":
			return e.Message
		case len(texts) > 0:
			return strings.Join(texts, "\n")
		}
		if b, ok := jsonout.AppendCompact(nil, raw); ok {
			return string(b)
		}
	}
	return mcpUnfinished
}

// maxApprovals bounds the mcp_approval_response items read from one
// request.
const maxApprovals = 64

// approval reads mcp_approval_response item i {approval_request_id,
// approve, reason?}: the id a non-empty string, approve a boolean, reason
// a string when present; else 400 naming the item.
func (c *converter) approval(i int, obj map[string]json.RawMessage) *request.Error {
	id := stringOf(obj["approval_request_id"])
	if kindOf(obj["approval_request_id"]) != '"' || id == "" || len(id) > 512 {
		return badRequest(CodeInvalidInput, itemParam(i), itemParam(i)+` is an mcp_approval_response without its "approval_request_id" (a non-empty string)`)
	}
	approve := kindOf(obj["approve"])
	if approve != 't' && approve != 'f' {
		return badRequest(CodeInvalidInput, itemParam(i), itemParam(i)+` is an mcp_approval_response without "approve" (a boolean)`)
	}
	reason := ""
	switch kindOf(obj["reason"]) {
	case 0, 'n':
	case '"':
		reason = stringOf(obj["reason"])
	default:
		return badRequest(CodeInvalidInput, itemParam(i), itemParam(i)+`'s "reason" must be a string`)
	}
	if len(c.approvals) >= maxApprovals {
		return badRequest(CodeInvalidInput, itemParam(i), "too many mcp_approval_response items (at most 64)")
	}
	c.approvals = append(c.approvals, request.Approval{ID: id, Approved: approve == 't', Reason: reason})
	return nil
}
