package jsonstream

// The violation and invalid-reply codes a Tokenizer reports. Formats pass
// them on as KindViolation codes (PARSING.md §4.2).
const (
	// CodeExpectedObject (TokenInvalid): the reply's value is not an object
	// (JO21), or not an array when Config.Root says so, or the reply holds
	// no JSON at all.
	CodeExpectedObject = "expected_object"
	// CodeLeadingText (TokenViolation): DocLenient found the object after
	// prose (JO04), which was delivered as TokenProse; Offset is the
	// prose's first byte.
	CodeLeadingText = "leading_text"
	// CodeTrailingText (TokenViolation): text other than blanks and a
	// closing fence after the object (JO20); it follows as TokenProse.
	CodeTrailingText = "trailing_text"
	// CodeBadJSON (TokenInvalid): a byte that JSON does not allow where it
	// stands; Text says what was expected.
	CodeBadJSON = "bad_json"
	// CodeBadLiteral (TokenInvalid): a misspelt true, false or null (JO13).
	CodeBadLiteral = "bad_literal"
	// CodeBadNumber (TokenInvalid, or TokenViolation for a watched number
	// longer than Limits.MaxKeyBytes): a malformed number.
	CodeBadNumber = "bad_number"
	// CodeUnterminated (TokenInvalid): the reply ended inside the object
	// (JO26). What was reported stays reported; the value is never reported
	// as complete.
	CodeUnterminated = "unterminated_json"
	// CodeLoneSurrogate (TokenViolation): a \u escape of half a surrogate
	// pair; it became U+FFFD (JO08).
	CodeLoneSurrogate = "lone_surrogate"
	// CodeInvalidEscape (TokenViolation): a backslash escape JSON does not
	// define; it was kept literally (JO09).
	CodeInvalidEscape = "invalid_escape"
	// CodeControlChar (TokenViolation): a raw control byte inside a string;
	// it was kept (JO10).
	CodeControlChar = "control_char"
	// CodeDuplicateKey (TokenViolation): a watched member appeared twice in
	// one object (JO19); its values are reported in order, nothing is
	// retracted.
	CodeDuplicateKey = "duplicate_key"
)
