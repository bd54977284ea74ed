package anthropic

import (
	"bytes"
	"net/http"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// Calls to tools the gateway runs (CONTRACT.md §12) are shown as
// Anthropic's MCP connector shows the calls it runs (the mcp-client beta):
// an mcp_tool_use block {id, name, server_name, input} whose input streams
// as input_json_delta, complete when the model finishes writing it, then,
// once the tool answered, an mcp_tool_result block {tool_use_id, is_error,
// content: [{type: text, text}]} with the result the model got, started
// and stopped at once. Both take the next indices, like every block, and
// neither makes the reply stop for tool_use: the client has nothing to
// run. The rounds' blocks continue in the one message: a round's text and
// thinking open blocks of their own, and message_delta reports the usage
// summed over the rounds.
//
// These are beta blocks: the SDKs type them only in their beta namespace
// (client.beta.messages; anthropic-sdk-go's BetaMessage), and a client
// that did not send anthropic-beta: mcp-client-… did not ask for them.
// Such a client gets neither block (Request.MCPBlocks false), so that a
// client switching on the block types it knows, as Claude Code does,
// never meets one: it sees the rounds' text and thinking only, as an
// OpenAI client does. The SDKs' plain accumulators would keep the blocks
// (@anthropic-ai/sdk's MessageStream pushes any block, anthropic-sdk-go's
// Message.Accumulate decodes any type), but without input for an
// mcp_tool_use, whose input_json_delta they skip.

// MCPBeta is the prefix of the anthropic-beta values that turn the MCP
// connector's blocks on (mcp-client-2025-04-04, mcp-client-2025-11-20,
// mcp-client-2026-09-15).
const MCPBeta = "mcp-client-"

// HeaderFacts reads what the client's headers tell the encoder into the
// Request that Convert returned (request.Format.HeaderFacts): whether an
// anthropic-beta header names an mcp-client beta, the client's opt-in to
// mcp_tool_use and mcp_tool_result blocks. The header may be repeated and
// hold a comma-separated list, as the SDKs send several betas.
func HeaderFacts(h http.Header, facts any) any {
	req, ok := facts.(Request)
	if !ok {
		return facts
	}
	for _, v := range h.Values("Anthropic-Beta") {
		for b := range strings.SplitSeq(v, ",") {
			if strings.HasPrefix(strings.TrimSpace(b), MCPBeta) {
				req.MCPBlocks = true
			}
		}
	}
	return req
}

// The states of a server call's blocks, by pipeline index, in
// blockList.mcp.
const (
	mcpNone     uint8 = iota
	mcpUse            // its mcp_tool_use block started
	mcpResulted       // its mcp_tool_result block went out
)

// noteMCP notes that server call i's mcp_tool_use block starts.
func (b *blockList) noteMCP(i int) {
	if i < 0 || i >= maxToolIndex {
		return
	}
	for len(b.mcp) <= i {
		b.mcp = append(b.mcp, mcpNone)
	}
	b.mcp[i] = mcpUse
}

// mcpResult sends the mcp_tool_result block of a server call whose
// mcp_tool_use block went out, once.
func (b *blockList) mcpResult(dst []byte, ev transform.Event) []byte {
	if ev.Index < 0 || ev.Index >= len(b.mcp) || b.mcp[ev.Index] != mcpUse {
		return dst
	}
	b.mcp[ev.Index] = mcpResulted
	dst = b.start(dst, blockMCPResult, ev)
	return b.stop(dst)
}

// appendMCPBlock appends an mcp_tool_use block as it starts (input {},
// which input_json_delta fills) or an mcp_tool_result block whole.
func appendMCPBlock(dst []byte, kind blockKind, ev transform.Event) []byte {
	if kind == blockMCPTool {
		dst = append(dst, `{"type":"mcp_tool_use","id":`...)
		dst = jsonout.AppendStringS(dst, ev.ID)
		dst = append(dst, `,"name":`...)
		dst = jsonout.AppendStringS(dst, ev.Name)
		dst = append(dst, `,"server_name":`...)
		dst = jsonout.AppendStringS(dst, serverOf(ev))
		return append(dst, `,"input":{}}`...)
	}
	failed, output := resultOf(ev)
	return appendMCPResult(dst, ev.ID, failed, output)
}

// appendMCPResult appends an mcp_tool_result block.
func appendMCPResult(dst []byte, id string, failed bool, output string) []byte {
	dst = append(dst, `{"type":"mcp_tool_result","tool_use_id":`...)
	dst = jsonout.AppendStringS(dst, id)
	if failed {
		dst = append(dst, `,"is_error":true`...)
	} else {
		dst = append(dst, `,"is_error":false`...)
	}
	dst = append(dst, `,"content":[{"type":"text","text":`...)
	dst = jsonout.AppendStringS(dst, output)
	return append(dst, `}]}`...)
}

// serverOf returns the tool server of a server call's start.
func serverOf(ev transform.Event) string {
	if ev.Tool == nil {
		return ""
	}
	return ev.Tool.Server
}

// resultOf returns whether a KindToolResult failed, and its output.
func resultOf(ev transform.Event) (failed bool, output string) {
	if ev.Tool == nil {
		return true, ""
	}
	return ev.Tool.Status != transform.ToolCompleted, ev.Tool.Output
}

// newWholeBlock returns the block of a whole Message that starts with ev.
func newWholeBlock(kind blockKind, ev transform.Event) wholeBlock {
	w := wholeBlock{kind: kind, id: ev.ID, name: ev.Name}
	switch kind {
	case blockMCPTool:
		w.server = serverOf(ev)
	case blockMCPResult:
		failed, output := resultOf(ev)
		w.failed = failed
		w.text = append(w.text, output...)
	}
	return w
}

// appendWholeMCP appends a whole Message's mcp block: a call's input is
// the arguments' JSON value, or the model's text as a JSON string when it
// wrote no valid JSON, as for tool_use.
func appendWholeMCP(dst []byte, w *wholeBlock) []byte {
	if w.kind == blockMCPResult {
		return appendMCPResult(dst, w.id, w.failed, string(w.text))
	}
	dst = append(dst, `{"type":"mcp_tool_use","id":`...)
	dst = jsonout.AppendStringS(dst, w.id)
	dst = append(dst, `,"name":`...)
	dst = jsonout.AppendStringS(dst, w.name)
	dst = append(dst, `,"server_name":`...)
	dst = jsonout.AppendStringS(dst, w.server)
	dst = append(dst, `,"input":`...)
	if len(bytes.TrimSpace(w.text)) == 0 {
		dst = append(dst, "{}"...)
	} else {
		dst = jsonout.AppendOrString(dst, w.text)
	}
	return append(dst, '}')
}
