package anthropic

import (
	"encoding/json"
	"strconv"

	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// wireTool is an element of tools: a custom tool {name, description,
// input_schema} (type absent or "custom"), or a tool Anthropic defines,
// named by its versioned type.
type wireTool struct {
	Type        string          `json:"type"`
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

// wireToolChoice is tool_choice: {type: auto | any | tool | none, name,
// disable_parallel_tool_use}.
type wireToolChoice struct {
	Type                   string `json:"type"`
	Name                   string `json:"name"`
	DisableParallelToolUse bool   `json:"disable_parallel_tool_use"`
}

// readTools reads tools: custom tools with a name and an input_schema.
// Anthropic-defined tools (web_search, web_fetch, code_execution, bash,
// text_editor, computer, memory, tool search, …) are refused: the server
// tools run on Anthropic's servers, and the client tools' schemas are
// Anthropic's, which the upstream model was not trained on.
func readTools(raw json.RawMessage) ([]wireTool, *request.Error) {
	if raw = present(raw); raw == nil {
		return nil, nil
	}
	var list []wireTool
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, invalid("tools: must be an array of tools (" + err.Error() + ")")
	}
	for i, t := range list {
		path := "tools." + strconv.Itoa(i)
		if t.Type != "" && t.Type != "custom" {
			return nil, unsupported(path + ": " + strconv.Quote(t.Type) + " is a tool Anthropic defines and serves; " +
				"an OpenAI-compatible upstream cannot run it (define a custom tool with an input_schema instead)")
		}
		if t.Name == "" {
			return nil, invalid(path + ".name: field required")
		}
		if schema := present(t.InputSchema); schema == nil || schema[0] != '{' {
			return nil, invalid(path + ".input_schema: must be a JSON Schema object")
		}
	}
	return list, nil
}

// tools writes the tools as OpenAI function tools, tool_choice as its
// counterpart (auto → "auto", any → "required", tool → the named
// function, none → "none"), and disable_parallel_tool_use as
// parallel_tool_calls false. cache_control and strict are not forwarded,
// and defer_loading neither: a deferred tool is offered like the others,
// since chat completions cannot load it later (Claude Code sends the
// deferred tools it has loaded, and refers to them with tool_reference
// blocks; see toolReferences).
func (c *converter) tools(list []wireTool, choiceRaw json.RawMessage) *request.Error {
	for i, t := range list {
		if i == 0 {
			c.out = append(c.out, `,"tools":[`...)
		} else {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, `{"type":"function","function":{"name":`...)
		c.out = jsonout.AppendStringS(c.out, t.Name)
		if t.Description != "" {
			c.out = append(c.out, `,"description":`...)
			c.out = jsonout.AppendStringS(c.out, t.Description)
		}
		c.out = append(c.out, `,"parameters":`...)
		c.out = append(c.out, t.InputSchema...)
		c.out = append(c.out, "}}"...)
	}
	if len(list) > 0 {
		c.out = append(c.out, ']')
	}
	n := len(list)
	choiceRaw = present(choiceRaw)
	if choiceRaw == nil {
		return nil
	}
	var tc wireToolChoice
	if json.Unmarshal(choiceRaw, &tc) != nil {
		return invalid("tool_choice: must be an object")
	}
	c.out = append(c.out, `,"tool_choice":`...)
	switch tc.Type {
	case "auto":
		c.out = append(c.out, `"auto"`...)
	case "any":
		c.out = append(c.out, `"required"`...)
	case "none":
		c.out = append(c.out, `"none"`...)
	case "tool":
		if tc.Name == "" {
			return invalid("tool_choice.name: field required for type tool")
		}
		c.out = append(c.out, `{"type":"function","function":{"name":`...)
		c.out = jsonout.AppendStringS(c.out, tc.Name)
		c.out = append(c.out, "}}"...)
	default:
		return invalid("tool_choice.type: must be auto, any, tool or none, got " + strconv.Quote(tc.Type))
	}
	// OpenAI refuses parallel_tool_calls in a request without tools.
	if tc.DisableParallelToolUse && n > 0 && tc.Type != "none" {
		c.out = append(c.out, `,"parallel_tool_calls":false`...)
	}
	return nil
}
