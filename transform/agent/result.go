// Package agent holds the decisions of the agent loop (CONTRACT.md §12):
// what a finished round asks for next, what a tool's result tells the
// model, and the events each step shows the client. It is pure Go like the
// rest of transform/: the tool servers themselves (MCP, I/O) are reached
// through the toolserver package, which hands its outcomes over in the
// neutral types of this file.
package agent

// PartKind says what a piece of a tool result is (the MCP content types,
// MCP spec 2025-11-25 "Tool Result").
type PartKind uint8

// The kinds of a tool result's parts.
const (
	// PartText is text (Text).
	PartText PartKind = iota
	// PartImage is an image: Data holds its bytes, MIMEType its type.
	PartImage
	// PartAudio is audio: Data holds its bytes, MIMEType its type.
	PartAudio
	// PartResourceLink points at a resource the server offers: URI, Name,
	// MIMEType, and Text its description.
	PartResourceLink
	// PartResource is a resource embedded in the result: URI, MIMEType,
	// and Text (a text resource) or Data (a blob).
	PartResource
)

// Part is one piece of a tool result's content.
type Part struct {
	Kind     PartKind
	Text     string
	Data     []byte
	MIMEType string
	URI      string
	Name     string
	// URL is where the client can fetch the part (an image, a resource):
	// its URI when that is http(s), else what the gateway serves it at
	// (set by the gateway, "" when it does not).
	URL string
}

// Result is what a tool call gave: its content, and whether the tool
// reported an error (MCP isError, or a failure of the call itself: the
// server unreachable, the timeout, the call refused). Either way it goes to
// the model as the call's tool message, so that the model can act on it.
type Result struct {
	// IsError is set when the tool failed.
	IsError bool
	// Parts is the content, in order.
	Parts []Part
	// Structured is the tool's structured content (MCP
	// structuredContent), raw JSON, or nil.
	Structured []byte
	// Park is set when the call waits for the user instead of having a
	// result (CONTRACT.md §13): the round ends showing Park.Await, and the
	// user's answer resumes the call. Parts and IsError are then unused.
	Park *Park
	// Denied says the user declined the call (an approval answered no):
	// it did not run, and Parts say so to the model.
	Denied bool
}

// ErrorResult is the result of a call that failed before or instead of
// the tool answering: msg says why, for the model to read.
func ErrorResult(msg string) Result {
	return Result{IsError: true, Parts: []Part{{Kind: PartText, Text: msg}}}
}

// Progress is a running call's progress report (MCP
// notifications/progress): Progress so far out of Total (0 when the total
// is unknown), and a Message for the user.
type Progress struct {
	Progress, Total float64
	Message         string
}
