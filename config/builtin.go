package config

import (
	_ "embed" // the built-in tool definitions
	"fmt"
	"sort"
	"strings"
)

// askUserJSON is the ask_user tool definition of specs/002 §6, byte for
// byte as the spec gives it.
//
//go:embed builtin/ask_user.json
var askUserJSON []byte

// builtinTools maps each built-in tool name (CONTRACT.md §3 tool) to its
// definition.
var builtinTools = map[string][]byte{
	"ask_user": askUserJSON,
}

// builtinTool returns the built-in tool named name, checked and compacted
// like a tools file's.
func builtinTool(name string) (tool, error) {
	def, ok := builtinTools[name]
	if !ok {
		return tool{}, fmt.Errorf("unknown built-in tool %q (known: %s)", name, strings.Join(builtinNames(), ", "))
	}
	t, err := parseTool(def)
	if err != nil {
		// The definitions are embedded; a test keeps them valid.
		return tool{}, fmt.Errorf("built-in tool %q: %w", name, err)
	}
	t.from = "built-in " + name
	return t, nil
}

// builtinNames returns the built-in tool names, sorted.
func builtinNames() []string {
	names := make([]string, 0, len(builtinTools))
	for n := range builtinTools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}
