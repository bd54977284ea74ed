package anthropic

import (
	"encoding/json"
	"slices"
	"strings"

	"github.com/llmstream/llmstream/transform/chatmsg"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// A client sends back the rounds it was shown (CONTRACT.md §12 "What
// comes back"): an assistant message whose content holds, as mcp.go
// streamed it and as Anthropic's MCP connector returns it, the text of a
// round, its mcp_tool_use calls and their mcp_tool_result blocks, then the
// next round's text; and perhaps the client's own tool_use calls, whose
// tool_result blocks its next user message holds. They become the model's
// history:
//
//   - One assistant message per round: text after mcp_tool_result blocks
//     opens the next one, since the model wrote it after it saw the
//     results. Each holds its round's text and its mcp_tool_use calls, and
//     its tool messages (the results, is_error as "Error: …", as for
//     tool_result) follow it.
//   - The client's tool_use calls go in the last of them, whose tool
//     messages the next user message's tool_result blocks give: a tool
//     message must follow the assistant message that made its call.
//   - An mcp_tool_result may also come in the next user message (a client
//     that moved it there); one that answers no mcp_tool_use is dropped,
//     since a tool message answering nothing is refused.
//   - A call whose result never came (a turn cut off mid-call) is answered
//     with a note that says so, before the next message: a call left
//     unanswered is refused by OpenAI-compatible servers.

// mcpUnfinished answers an mcp_tool_use whose result never came.
const mcpUnfinished = "The tool call did not finish."

// assistantSteps writes an assistant message's blocks, checked by
// assistant, as the messages of its rounds (see above).
func (w *messageWriter) assistantSteps(blocks []block) {
	var texts []string
	var calls, results, client []block
	flush := func(last bool) {
		if last {
			calls = append(calls, client...)
		}
		if len(texts) == 0 && len(calls) == 0 {
			results = results[:0]
			return
		}
		w.next()
		w.c.out = chatmsg.AppendAssistant(w.c.out, strings.Join(texts, "\n\n"), toolCalls(calls))
		for _, b := range results {
			if w.pay(b.ToolUseID) {
				_, _ = w.toolResult("", b) // text blocks only, checked below
			}
		}
		texts, calls, results = texts[:0], calls[:0], results[:0]
		if !last {
			w.settle()
		}
	}
	for _, b := range blocks {
		switch b.Type {
		case "text":
			if len(results) > 0 {
				flush(false)
			}
			texts = append(texts, b.Text)
		case "tool_use":
			client = append(client, b)
		case "mcp_tool_use":
			calls = append(calls, b)
			w.owed = append(w.owed, b.ID)
		case "mcp_tool_result":
			results = append(results, mcpResultText(b))
		}
	}
	flush(true)
}

// mcpResultText returns an mcp_tool_result block with its content reduced
// to text: a string, or its text blocks (the only blocks the beta types
// it with); anything else is not the model's to read.
func mcpResultText(b block) block {
	var s string
	if err := json.Unmarshal(b.Content, &s); err == nil {
		return b
	}
	var parts []struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(b.Content, &parts)
	var texts []string
	for _, p := range parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	b.Content = jsonout.AppendStringS(nil, strings.Join(texts, "\n\n"))
	return b
}

// pay reports whether id is an mcp_tool_use call still owed its result,
// and notes it paid.
func (w *messageWriter) pay(id string) bool {
	i := slices.Index(w.owed, id)
	if i < 0 {
		return false
	}
	w.owed = slices.Delete(w.owed, i, i+1)
	return true
}

// settle answers every mcp_tool_use call still owed its result with
// mcpUnfinished: the next message is not its result.
func (w *messageWriter) settle() {
	for _, id := range w.owed {
		w.next()
		w.c.out = chatmsg.AppendTool(w.c.out, id, mcpUnfinished)
	}
	w.owed = w.owed[:0]
}
