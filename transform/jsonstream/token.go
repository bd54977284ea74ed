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
	// unterminated_json). Nothing more is tokenized. In DocStrict and
	// DocLenient mode the reply from Offset on follows as TokenProse (for
	// DocLenient's expected_object, it has been streaming since Offset); in
	// DocBare mode Feed stops at the byte that broke the object.
	TokenInvalid
	// TokenLimit: a limit was exceeded (Code is transform.CodeJSONTooDeep
	// or transform.CodeKeyTooLong, Text a message). It ends the
	// tokenizing as TokenInvalid does, not the reply (CONTRACT.md §7): the
	// reply from Offset on follows as TokenProse (a key too long from its
	// opening quote; in DocBare mode only the key's text, up to where Feed
	// stops).
	TokenLimit
	// TokenProse: text of the reply that is not its JSON value, delivered
	// so that nothing the model wrote is lost (CONTRACT.md §7): in
	// DocStrict and DocLenient mode a reply that is not JSON, prose before
	// the object (DocLenient), text after the object, the rest of a reply
	// whose object broke or outgrew a limit. It streams as it arrives, cut
	// on rune boundaries; only blanks before the value, a byte order mark
	// and the fence around the value are left out.
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
