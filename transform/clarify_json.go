package transform

// AppendClarifyFields appends the members of a ClarifyPayload object
// (specs/004 §7.2), without braces, for an encoder to place in an object of
// its own: "question", "options" (always an array) and "hint" (null when
// empty), so that every protocol sends a clarification in one shape.
func AppendClarifyFields(dst []byte, c *Clarify) []byte {
	dst = append(dst, `"question":`...)
	dst = AppendJSONStringS(dst, c.Question)
	dst = append(dst, `,"options":`...)
	dst = AppendJSONStrings(dst, c.Options)
	dst = append(dst, `,"hint":`...)
	if c.Hint == "" {
		return append(dst, "null"...)
	}
	return AppendJSONStringS(dst, c.Hint)
}
