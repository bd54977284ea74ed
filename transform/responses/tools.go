package responses

import (
	"encoding/json"
	"strconv"

	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// tools converts the tools array and returns it with the number of
// function tools it holds. Responses function tools are flat,
// {type: "function", name, description, parameters, strict}; chat tools
// nest them under "function". Every other tool is hosted by OpenAI (or, for
// namespace and custom tools, has no chat counterpart): it is left out and
// named in leftOut, since Codex sends web_search on every request and a
// refusal would make it unusable. allowed, when not nil, keeps only the
// function tools it names (tool_choice allowed_tools).
func (c *converter) tools(raw json.RawMessage, allowed map[string]bool) ([]byte, int, *request.Error) {
	switch kindOf(raw) {
	case 0, 'n':
		return nil, 0, nil
	case '[':
	default:
		return nil, 0, badRequest(CodeInvalidParam, "tools", `"tools" must be an array`)
	}
	var tools []map[string]json.RawMessage
	if err := json.Unmarshal(raw, &tools); err != nil {
		return nil, 0, badRequest(CodeInvalidParam, "tools", `"tools" must be an array of tool objects`)
	}
	out := []byte{'['}
	n := 0
	for i, t := range tools {
		param := "tools[" + strconv.Itoa(i) + "]"
		typ := stringOf(t["type"])
		if typ != "function" {
			c.leave("tool:" + safeName(typ))
			continue
		}
		name := stringOf(t["name"])
		if name == "" {
			return nil, 0, badRequest(CodeInvalidParam, param+".name", param+".name must be a non-empty string")
		}
		if allowed != nil && !allowed[name] {
			continue
		}
		if n > 0 {
			out = append(out, ',')
		}
		n++
		out = append(out, `{"type":"function","function":{"name":`...)
		out = append(out, t["name"]...)
		for _, m := range []struct {
			name string
			want byte
		}{{"description", '"'}, {"parameters", '{'}, {"strict", 'b'}} {
			v := t[m.name]
			k := kindOf(v)
			if k == 't' || k == 'f' {
				k = 'b'
			}
			switch {
			case k == 0 || k == 'n':
				continue
			case k != m.want:
				return nil, 0, badRequest(CodeInvalidParam, param+"."+m.name, param+"."+m.name+" has the wrong type")
			}
			out = append(out, ',')
			out = jsonout.AppendStringS(out, m.name)
			out = append(out, ':')
			if cv, ok := jsonout.AppendCompact(out, v); ok {
				out = cv
			} else {
				out = append(out, v...) // invalid UTF-8 in a description: as sent
			}
		}
		out = append(out, "}}"...)
	}
	return append(out, ']'), n, nil
}

// toolChoice converts tool_choice: "auto", "none" and "required" stay;
// {type: "function", name} nests the name under "function"; allowed_tools
// becomes its mode, with the set of function names it allows (tools then
// forwards only those, which allows the same calls). Forcing a hosted tool
// cannot be honoured by a chat-completions upstream and is refused.
func toolChoice(raw json.RawMessage) ([]byte, map[string]bool, *request.Error) {
	switch kindOf(raw) {
	case 0, 'n':
		return nil, nil, nil
	case '"':
		switch s := stringOf(raw); s {
		case "auto", "none", "required":
			return []byte(`"` + s + `"`), nil, nil
		}
		return nil, nil, badRequest(CodeInvalidParam, "tool_choice", `"tool_choice" must be auto, none, required or an object`)
	case '{':
	default:
		return nil, nil, badRequest(CodeInvalidParam, "tool_choice", `"tool_choice" must be a string or an object`)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, nil, badRequest(CodeInvalidParam, "tool_choice", `"tool_choice" must be a string or an object`)
	}
	switch typ := stringOf(obj["type"]); typ {
	case "function":
		if stringOf(obj["name"]) == "" {
			return nil, nil, badRequest(CodeInvalidParam, "tool_choice.name", "tool_choice.name must be a non-empty string")
		}
		out := append([]byte(`{"type":"function","function":{"name":`), obj["name"]...)
		return append(out, "}}"...), nil, nil
	case "allowed_tools":
		mode := stringOf(obj["mode"])
		if mode != "auto" && mode != "required" {
			return nil, nil, badRequest(CodeInvalidParam, "tool_choice.mode", "tool_choice.mode must be auto or required")
		}
		var list []map[string]json.RawMessage
		if err := json.Unmarshal(obj["tools"], &list); err != nil {
			return nil, nil, badRequest(CodeInvalidParam, "tool_choice.tools", "tool_choice.tools must be an array of tool objects")
		}
		allowed := map[string]bool{}
		for _, t := range list {
			if stringOf(t["type"]) == "function" {
				allowed[stringOf(t["name"])] = true
			}
		}
		return []byte(`"` + mode + `"`), allowed, nil
	default:
		return nil, nil, unsupported("tool_choice", "tool_choice forces the hosted tool "+safeName(typ)+
			", which a chat-completions upstream cannot run")
	}
}
