package config

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
)

// tool is one tool definition, ready to send upstream.
type tool struct {
	// name is the function name.
	name string
	// def is the definition in OpenAI form {"type":"function","function":
	// {…}}, compacted: insignificant whitespace removed, every other byte
	// (key order, escapes, unknown members) as written.
	def []byte
	// from says where it was defined, for duplicate-name errors.
	from string
}

// parseToolsFile reads the tool definitions in a tools file's data
// (CONTRACT.md §3 tools). A .json file holds one tool object or an array of
// them; any other file is Markdown whose ```json blocks each hold one tool
// or an array. A file that defines no tool is an error: it is surely not
// the file the route meant.
func parseToolsFile(name string, data []byte) ([]tool, error) {
	if strings.EqualFold(filepath.Ext(name), ".json") {
		tools, err := parseTools(data)
		if err != nil {
			return nil, err
		}
		if len(tools) == 0 {
			return nil, errors.New("holds no tool definition")
		}
		return tools, nil
	}
	blocks, err := jsonBlocks(data)
	if err != nil {
		return nil, err
	}
	var tools []tool
	for _, b := range blocks {
		ts, err := parseTools(b.content)
		if err != nil {
			return nil, fmt.Errorf("```json block at line %d: %w", b.line, err)
		}
		tools = append(tools, ts...)
	}
	if len(tools) == 0 {
		return nil, errors.New("holds no ```json block with a tool definition")
	}
	return tools, nil
}

// parseTools reads one tool object or an array of them.
func parseTools(data []byte) ([]tool, error) {
	data = bytes.TrimSpace(data)
	if !json.Valid(data) {
		// Unmarshal says where the syntax breaks; Valid does not.
		var v any
		err := json.Unmarshal(data, &v)
		if err == nil {
			err = errors.New("not JSON")
		}
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	if len(data) == 0 || data[0] != '[' {
		t, err := parseTool(data)
		if err != nil {
			return nil, err
		}
		return []tool{t}, nil
	}
	var raws []json.RawMessage
	if err := json.Unmarshal(data, &raws); err != nil {
		return nil, fmt.Errorf("invalid JSON: %w", err)
	}
	tools := make([]tool, 0, len(raws))
	for i, raw := range raws {
		t, err := parseTool(raw)
		if err != nil {
			return nil, fmt.Errorf("tool %d: %w", i+1, err)
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// parseTool checks one tool definition and returns it in OpenAI form. It
// accepts the OpenAI form {"type":"function","function":{"name",…}} and the
// bare function {"name","description","parameters"}, which it wraps.
func parseTool(raw []byte) (tool, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(raw, &top); err != nil {
		return tool{}, notATool("want a JSON object, got %s", jsonType(raw))
	}
	fn, wrapped := top["function"], false
	if fn == nil {
		if _, ok := top["type"]; ok {
			return tool{}, notATool(`"type" without "function"; want {"type":"function","function":{…}} or a bare {"name","description","parameters"}`)
		}
		fn, wrapped = raw, true
	} else if typ, t := top["type"], ""; json.Unmarshal(typ, &t) != nil || t != "function" {
		return tool{}, notATool(`"type" must be "function", got %s`, orMissing(typ))
	}
	name, err := checkFunction(fn)
	if err != nil {
		return tool{}, err
	}
	var def bytes.Buffer
	if wrapped {
		def.WriteString(`{"type":"function","function":`)
	}
	if err := json.Compact(&def, raw); err != nil {
		return tool{}, fmt.Errorf("compacting tool %q: %w", name, err)
	}
	if wrapped {
		def.WriteByte('}')
	}
	return tool{name: name, def: def.Bytes()}, nil
}

// checkFunction checks an OpenAI function object and returns its name.
func checkFunction(fn []byte) (string, error) {
	var f map[string]json.RawMessage
	if err := json.Unmarshal(fn, &f); err != nil {
		return "", notATool(`"function" must be an object, got %s`, jsonType(fn))
	}
	var name string
	if err := json.Unmarshal(f["name"], &name); err != nil || name == "" {
		return "", notATool("the function has no name")
	}
	if !validFunctionName(name) {
		return "", notATool("function name %q must be 1 to 64 letters, digits, '_' or '-' (OpenAI's rule)", name)
	}
	if d, ok := f["description"]; ok && jsonType(d) != "a string" {
		return "", notATool("%s: description must be a string, got %s", name, jsonType(d))
	}
	if p, ok := f["parameters"]; ok && jsonType(p) != "an object" {
		return "", notATool("%s: parameters must be a JSON Schema object, got %s", name, jsonType(p))
	}
	return name, nil
}

// validFunctionName reports whether name satisfies OpenAI's rule for
// function names, ^[a-zA-Z0-9_-]{1,64}$: an upstream refuses the whole
// request otherwise, so the config is refused instead.
func validFunctionName(name string) bool {
	if len(name) == 0 || len(name) > 64 {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// notATool returns the error for JSON that is not a tool definition.
func notATool(format string, args ...any) error {
	return fmt.Errorf("not a tool definition: "+format, args...)
}

// jsonType names the JSON type of valid JSON raw.
func jsonType(raw []byte) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "nothing"
	}
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case '"':
		return "a string"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// orMissing returns raw as text, or "nothing" when it is absent.
func orMissing(raw json.RawMessage) string {
	if raw == nil {
		return "nothing"
	}
	return string(raw)
}
