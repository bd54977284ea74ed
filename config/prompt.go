package config

import (
	"bytes"
	"os"
	"strings"
	"unicode/utf8"
)

// promptJoiner separates the parts of a system prompt: a blank line, so
// that Markdown files concatenate into one document without a heading or
// list running into the previous file's last line.
const promptJoiner = "\n\n"

// loadPrompt returns the system prompt (CONTRACT.md §3 system_prompt,
// system_prompt_text): the files in order, then the inline text. Each part
// loses a UTF-8 byte order mark and its trailing whitespace, so that a
// file's final newline does not add to the joiner; empty parts are skipped.
// Placeholders stay as written: the Caddy layer expands them per request.
func loadPrompt(files []string, text, root string) (string, error) {
	var parts []string
	for _, f := range files {
		data, err := os.ReadFile(resolve(root, f))
		if err != nil {
			return "", errorf("system_prompt", "system_prompt: reading %s: %w", f, err)
		}
		// A prompt that is not UTF-8 would reach the model as U+FFFD
		// replacements: most likely a file saved in a legacy encoding.
		if !utf8.Valid(data) {
			return "", errorf("system_prompt", "system_prompt: %s is not valid UTF-8", f)
		}
		data = bytes.TrimPrefix(data, []byte("\ufeff"))
		if p := strings.TrimRight(string(data), " \t\r\n"); p != "" {
			parts = append(parts, p)
		}
	}
	if !utf8.ValidString(text) {
		return "", errorf("system_prompt_text", "system_prompt_text is not valid UTF-8")
	}
	if p := strings.TrimRight(text, " \t\r\n"); p != "" {
		parts = append(parts, p)
	}
	return strings.Join(parts, promptJoiner), nil
}
