package wiretest

import (
	"fmt"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// aisdkFinishReasons are the AI SDK's finish reasons (ai@6 FinishReason).
var aisdkFinishReasons = map[string]bool{
	"stop": true, "length": true, "content-filter": true, "tool-calls": true, "error": true, "other": true,
}

// aisdkClient reads the AI SDK UI message stream. Its reasoning parts
// carry every piece of reasoning as it came, with nothing added.
var aisdkClient = &Client{
	Protocol: "aisdk", Request: chatRequest, Missing: missingMessages,
	Heartbeat: commentBeat, stream: checkAISDK,
	CheckReasoning: func(seen Seen, found Found) error {
		if all := strings.Join(found.Reasoning, ""); seen.Reasoning != all {
			return fmt.Errorf("reasoning on the wire\n %q\nin the reply\n %q", seen.Reasoning, all)
		}
		return nil
	},
}

// checkAISDK checks an AI SDK UI message stream, protocol v1, as the SDK's
// processUIMessageStream reads it: data lines only (keep-alive comments
// aside), each a JSON object of a chunk type the SDK knows; start first
// and once; a text or reasoning part's deltas and end only while it is
// open (started and not ended: the SDK throws on a delta for an unknown
// id), its id never reused, every part ended by the terminal chunk;
// tool-input-delta only between its call's tool-input-start and
// tool-input-available (or -error), one start and one end per
// toolCallId (a second would replace the first call's part); data parts
// with data; then exactly one finish (with one of the SDK's finish
// reasons) or error, and data: [DONE] right after it, last. A call to a
// tool the gateway runs (CONTRACT.md §12) is a providerExecuted part: its
// tool-output-available or tool-output-error completes a call whose input
// is available, once (the SDK throws on an output for a call it has no
// part for); data-tool-progress names a running call by its id;
// finish-step comes with no part open and is followed by start-step or
// the end (a step is a round).
func checkAISDK(out []byte, _ transform.Meta) (Seen, error) {
	var seen Seen
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return seen, err
	}
	var answer, reasoning strings.Builder
	open := map[string]bool{} // "text:"+id, "reasoning:"+id
	used := map[string]bool{} // the same keys, ever started
	tools := map[string]int{} // toolCallId: 1 started, 2 ended, 3 output
	terminal, done := -1, false
	stepEnded := false
	chunks := 0
	for i, e := range evs {
		if e.Comment {
			continue
		}
		fail := func(format string, args ...any) (Seen, error) {
			return seen, fmt.Errorf("chunk %d: %s", i, fmt.Sprintf(format, args...))
		}
		if e.Name != "" {
			return fail("an event: line; the SDK reads data lines only")
		}
		if done {
			return fail("after [DONE]")
		}
		if e.Data == "[DONE]" {
			if terminal < 0 {
				return fail("[DONE] before finish or error")
			}
			done = true
			continue
		}
		if terminal >= 0 {
			return fail("after the terminal chunk: %s", e.Data)
		}
		m, err := e.DecodeData()
		if err != nil {
			return seen, err
		}
		typ, _ := m["type"].(string)
		if (chunks == 0) != (typ == "start") {
			return fail("%s; start comes first, once", typ)
		}
		chunks++
		id, _ := m["id"].(string)
		callID, _ := m["toolCallId"].(string)
		if stepEnded && typ != "start-step" && typ != "finish" && typ != "error" {
			return fail("%s after finish-step: start-step or the end comes next", typ)
		}
		stepEnded = false
		switch typ {
		case "start":
		case "text-start", "reasoning-start":
			key := strings.TrimSuffix(typ, "-start") + ":" + id
			if id == "" || used[key] {
				return fail("%s id %q empty or reused", typ, id)
			}
			used[key], open[key] = true, true
		case "text-delta", "reasoning-delta", "text-end", "reasoning-end":
			kind, op, _ := strings.Cut(typ, "-")
			key := kind + ":" + id
			if !open[key] {
				return fail("%s for %s part %q, which is not open", typ, kind, id)
			}
			if op == "end" {
				delete(open, key)
				break
			}
			delta, ok := m["delta"].(string)
			if !ok {
				return fail("%s without a delta string", typ)
			}
			if kind == "text" {
				answer.WriteString(delta)
			} else {
				reasoning.WriteString(delta)
			}
		case "tool-input-start":
			if _, ok := m["toolName"].(string); !ok || callID == "" || tools[callID] != 0 {
				return fail("tool-input-start without toolName, or toolCallId %q empty or reused", callID)
			}
			tools[callID] = 1
		case "tool-input-delta":
			if tools[callID] != 1 {
				return fail("tool-input-delta for call %q, which is not streaming its input", callID)
			}
			if _, ok := m["inputTextDelta"].(string); !ok {
				return fail("tool-input-delta without inputTextDelta")
			}
		case "tool-input-available", "tool-input-error":
			_, name := m["toolName"].(string)
			_, input := m["input"]
			if !name || !input || callID == "" || tools[callID] >= 2 {
				return fail("%s without toolName or input, or for call %q again", typ, callID)
			}
			if _, ok := m["errorText"].(string); typ == "tool-input-error" && !ok {
				return fail("tool-input-error without errorText")
			}
			tools[callID] = 2
			if m["providerExecuted"] != true { // the gateway runs the others
				toolName, _ := m["toolName"].(string)
				seen.ToolCalls = append(seen.ToolCalls, toolName)
			}
		case "tool-output-available", "tool-output-error":
			if callID == "" || tools[callID] != 2 || m["providerExecuted"] != true {
				return fail("%s for call %q, whose input is not available or which has its output, or not providerExecuted", typ, callID)
			}
			_, output := m["output"]
			if _, text := m["errorText"].(string); typ == "tool-output-available" && !output || typ == "tool-output-error" && !text {
				return fail("%s without its output or errorText", typ)
			}
			tools[callID] = 3
		case "start-step":
		case "finish-step":
			if len(open) > 0 {
				return fail("finish-step with parts still open: %v", open)
			}
			stepEnded = true
		case "finish", "error":
			terminal = i
			if len(open) > 0 {
				return fail("%s with parts still open: %v", typ, open)
			}
			if typ == "finish" {
				r, ok := m["finishReason"].(string)
				if ok && !aisdkFinishReasons[r] {
					return fail("finish reason %q is not the SDK's", r)
				}
				seen.ToolUse = r == "tool-calls"
			} else {
				seen.Failed = true
				if seen.Message, _ = m["errorText"].(string); seen.Message == "" {
					return fail("error without errorText")
				}
			}
		default:
			if !strings.HasPrefix(typ, "data-") {
				return fail("chunk type %q is not the SDK's", typ)
			}
			data, ok := m["data"]
			if !ok {
				return fail("%s without data", typ)
			}
			if typ == "data-tool-progress" {
				d, _ := data.(map[string]any)
				if id == "" || tools[id] != 2 || d["toolCallId"] != id {
					return fail("data-tool-progress for %q, which is no running call", id)
				}
			}
			if typ == "data-violations" {
				vs, _ := data.(map[string]any)
				list, ok := vs["violations"].([]any)
				if !ok {
					return fail("data-violations without a violations list")
				}
				for _, v := range list {
					o, _ := v.(map[string]any)
					code, _ := o["code"].(string)
					seen.Violations = append(seen.Violations, code)
				}
			}
		}
	}
	if !done {
		return seen, fmt.Errorf("no finish or error followed by [DONE]")
	}
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	return seen, nil
}
