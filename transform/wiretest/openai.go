package wiretest

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// openaiClient reads chat completions as the OpenAI SDKs do: streamed
// chunks, or one chat.completion when the request said "stream": false.
// reasoning_content shows the reasoning, with paragraph breaks between
// sections.
var openaiClient = &Client{
	Protocol: "openai", Request: chatRequest, Missing: missingMessages,
	Codes: true, Heartbeat: commentBeat, CheckReasoning: reasoningInOrder,
	stream: checkOpenAI, body: checkCompletion,
}

// checkOpenAI checks a chat completion as the OpenAI API sends it and the
// official SDKs read it: with meta.Stream, SSE data lines of
// chat.completion.chunk objects then data: [DONE], or an error object
// {"error": {message, type, code}} instead of the rest; without it, one
// chat.completion object, or one error object.
//
// Chunks share one id, created and model; each has choices (empty only
// for the usage chunk) holding choice index 0 with a delta; the first
// choice chunk carries role "assistant"; exactly one chunk has a
// finish_reason, and after it only the usage chunk comes. A tool call's
// first fragment at an index carries its id, type "function" and the
// function's name, later ones only arguments (an id repeated must be the
// same); indices start at 0 and each new one is the next; no two calls
// share an id.
func checkOpenAI(out []byte, meta transform.Meta) (Seen, error) {
	if !meta.Stream {
		return checkCompletion(out)
	}
	var seen Seen
	evs, err := encodertest.ReadSSE(out)
	if err != nil {
		return seen, err
	}
	var answer, reasoning strings.Builder
	var id, model any
	var created any
	role, finished, done := false, false, false
	tools := map[float64]string{} // index: id
	ids := map[string]bool{}
	for i, e := range evs {
		if e.Comment {
			continue
		}
		fail := func(format string, args ...any) (Seen, error) {
			return seen, fmt.Errorf("chunk %d: %s: %s", i, fmt.Sprintf(format, args...), e.Data)
		}
		if e.Name != "" {
			return fail("an event: line")
		}
		if done || seen.Failed {
			return fail("after the end")
		}
		if e.Data == "[DONE]" {
			if !finished {
				return fail("[DONE] before a finish_reason")
			}
			done = true
			continue
		}
		m, err := e.DecodeData()
		if err != nil {
			return seen, err
		}
		if ev, ok := m["error"]; ok {
			failed, err := errorObject(ev)
			if err != nil {
				return fail("%v", err)
			}
			seen.Failed, seen.Code, seen.Message = true, failed.Code, failed.Message
			continue
		}
		if m["object"] != "chat.completion.chunk" {
			return fail("object %v", m["object"])
		}
		if id == nil {
			id, model, created = m["id"], m["model"], m["created"]
			if s, _ := id.(string); s == "" {
				return fail("no id")
			}
		}
		if m["id"] != id || m["model"] != model || m["created"] != created {
			return fail("id, model or created differ from the first chunk's")
		}
		choices, ok := m["choices"].([]any)
		if !ok {
			return fail("no choices")
		}
		if finished {
			if len(choices) != 0 || m["usage"] == nil {
				return fail("only the usage chunk follows the finish_reason")
			}
			continue
		}
		if len(choices) != 1 {
			return fail("%d choices", len(choices))
		}
		c, _ := choices[0].(map[string]any)
		delta, ok := c["delta"].(map[string]any)
		if !ok || c["index"] != 0.0 {
			return fail("choice without index 0 and a delta")
		}
		if !role {
			if delta["role"] != "assistant" {
				return fail("the first chunk has no role assistant")
			}
			role = true
		}
		if s, ok := delta["content"].(string); ok {
			answer.WriteString(s)
		}
		if s, ok := delta["reasoning_content"].(string); ok {
			reasoning.WriteString(s)
		}
		if err := checkToolFragments(delta["tool_calls"], tools, ids, &seen.ToolCalls); err != nil {
			return fail("%v", err)
		}
		if r, ok := c["finish_reason"].(string); ok && r != "" {
			finished, seen.ToolUse = true, r == "tool_calls"
		}
	}
	if !done && !seen.Failed {
		return seen, fmt.Errorf("no [DONE] and no error")
	}
	seen.Answer, seen.Reasoning = answer.String(), reasoning.String()
	return seen, nil
}

// checkToolFragments checks the tool_calls of one delta (see checkOpenAI)
// and appends the name of each new call to names.
func checkToolFragments(v any, tools map[float64]string, ids map[string]bool, names *[]string) error {
	if v == nil {
		return nil
	}
	list, ok := v.([]any)
	if !ok {
		return fmt.Errorf("tool_calls is not an array")
	}
	for _, f := range list {
		tc, _ := f.(map[string]any)
		idx, ok := tc["index"].(float64)
		if !ok {
			return fmt.Errorf("tool call fragment without index")
		}
		fn, _ := tc["function"].(map[string]any)
		if args, ok := fn["arguments"]; ok {
			if _, ok := args.(string); !ok {
				return fmt.Errorf("arguments is not a string")
			}
		}
		id, hasID := tc["id"].(string)
		known, seen := tools[idx]
		switch {
		case !seen:
			if idx != float64(len(tools)) {
				return fmt.Errorf("tool call index %v, want %d", idx, len(tools))
			}
			name, _ := fn["name"].(string)
			if !hasID || id == "" || tc["type"] != "function" || name == "" {
				return fmt.Errorf("a call's first fragment needs id, type function and a name")
			}
			if ids[id] {
				return fmt.Errorf("tool call id %q used twice", id)
			}
			tools[idx], ids[id] = id, true
			*names = append(*names, name)
		case hasID && id != known:
			return fmt.Errorf("tool call %v changes its id", idx)
		}
	}
	return nil
}

// checkCompletion checks one chat.completion object (or an error object)
// and returns what it holds.
func checkCompletion(out []byte) (Seen, error) {
	var seen Seen
	var c struct {
		Object  string `json:"object"`
		ID      string `json:"id"`
		Error   any    `json:"error"`
		Choices []struct {
			Index   int `json:"index"`
			Message struct {
				Role      string  `json:"role"`
				Content   *string `json:"content"`
				Reasoning string  `json:"reasoning_content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Type     string `json:"type"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(out, &c); err != nil {
		return seen, fmt.Errorf("not one JSON object: %v", err)
	}
	if c.Error != nil {
		return errorObject(c.Error)
	}
	if c.Object != "chat.completion" || c.ID == "" || len(c.Choices) != 1 || c.Choices[0].Index != 0 {
		return seen, fmt.Errorf("not a chat.completion with one choice: %s", out)
	}
	ch := c.Choices[0]
	if ch.Message.Role != "assistant" || ch.FinishReason == "" {
		return seen, fmt.Errorf("no role assistant or no finish_reason: %s", out)
	}
	if ch.Message.Content == nil && len(ch.Message.ToolCalls) == 0 {
		return seen, fmt.Errorf("content null without tool calls")
	}
	ids := map[string]bool{}
	for _, t := range ch.Message.ToolCalls {
		if t.ID == "" || ids[t.ID] || t.Type != "function" || t.Function.Name == "" {
			return seen, fmt.Errorf("tool call without id, type function or name, or with an id used twice")
		}
		ids[t.ID] = true
		seen.ToolCalls = append(seen.ToolCalls, t.Function.Name)
	}
	seen.ToolUse = ch.FinishReason == "tool_calls"
	if ch.Message.Content != nil {
		seen.Answer = *ch.Message.Content
	}
	seen.Reasoning = ch.Message.Reasoning
	return seen, nil
}
