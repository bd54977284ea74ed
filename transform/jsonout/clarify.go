package jsonout

import "github.com/llmstream/llmstream/transform"

// AppendClarifyFields appends the members of a ClarifyPayload object
// (specs/004 §7.2), without braces, for an encoder to place in an object of
// its own: "question", "options" (always an array) and "hint" (null when
// empty), so that every protocol sends a clarification in one shape.
func AppendClarifyFields(dst []byte, c *transform.Clarify) []byte {
	dst = append(dst, `"question":`...)
	dst = AppendStringS(dst, c.Question)
	dst = append(dst, `,"options":`...)
	dst = AppendStrings(dst, c.Options)
	dst = append(dst, `,"hint":`...)
	if c.Hint == "" {
		return append(dst, "null"...)
	}
	return AppendStringS(dst, c.Hint)
}
