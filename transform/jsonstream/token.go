package jsonstream

// TokenKind says what a Token reports.
type TokenKind uint8

// The token kinds.
const (
	// TokenStart: a watched value begins. Type is known; Offset is its first
	// byte.
	TokenStart TokenKind = iota
	// TokenText: decoded content of a watched string (Mode Text), cut on
	// rune boundaries. Deltas of one string concatenate to its value.
	TokenText
	// TokenRaw: raw bytes of a watched value (Mode Raw), byte for byte as
	// written, cut on rune boundaries.
	TokenRaw
	// TokenEnd: a watched value ended. For a number, true, false or null,
	// Text is its complete text (nil for a number longer than
	// Limits.MaxKeyBytes). Offset is its last byte.
	TokenEnd
	// TokenViolation: a recoverable anomaly (Code, Offset, Text a detail);
	// tokenizing goes on.
	TokenViolation
	// TokenInvalid: the reply is not, or stopped being, the JSON object it
	// should be (Code: expected_object, bad_json, bad_literal, bad_number,
	// unterminated_json). Nothing more is tokenized; in DocStrict mode a
	// reply that is not an object follows as TokenProse.
	TokenInvalid
	// TokenLimit: a limit was exceeded (Code is transform.CodeJSONTooDeep
	// or transform.CodeKeyTooLong, Text a message). It is fatal: nothing
	// more is tokenized.
	TokenLimit
	// TokenProse: in DocStrict mode, the text of a reply that is not a JSON
	// object, from its first byte that is not blank or a fence header, cut
	// on rune boundaries.
	TokenProse
)

var tokenKindNames = [...]string{"start", "text", "raw", "end", "violation", "invalid", "limit", "prose"}

// String returns the kind's name, for tests and logs.
func (k TokenKind) String() string {
	if int(k) < len(tokenKindNames) {
		return tokenKindNames[k]
	}
	return "token?"
}

// Type is the JSON type of a value.
type Type uint8

// The value types.
const (
	TypeObject Type = iota // {…}
	TypeArray              // […]
	TypeString             // "…"
	TypeNumber             // -1.5e3
	TypeBool               // true or false
	TypeNull               // null
)

// Token is one report of a Tokenizer. The Tokenizer reuses one Token for all
// its reports: a Handler must copy what it keeps.
type Token struct {
	Kind TokenKind
	// Path is the index of the watched path (see Paths) for TokenStart,
	// TokenText, TokenRaw and TokenEnd; -1 otherwise.
	Path int
	// Index is the element index of the innermost array on the value's path
	// ("tool_calls[*].args" reports the element of tool_calls), -1 for none.
	Index int
	// Type is the value's type for TokenStart and TokenEnd.
	Type Type
	// Text is the token's bytes (see the kinds); borrowed: valid only until
	// the Handler returns.
	Text []byte
	// Code names a violation, an invalid reply or an exceeded limit.
	Code string
	// Offset is the byte offset in the reply that the token refers to.
	Offset int64
}

// Handler receives a Tokenizer's reports. The Token and its Text are valid
// only until HandleToken returns.
//
// Parsers implement Handler on an unexported type and pass a pointer to it,
// so that reporting allocates nothing.
type Handler interface {
	HandleToken(tk *Token)
}
