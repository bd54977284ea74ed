// Package transform is the pure-Go core of llmstream: it decodes an
// OpenAI-compatible upstream reply, parses the model's text incrementally and
// re-encodes it in a client protocol. It knows nothing of Caddy or HTTP
// handlers: bytes in, events out, bytes out.
//
// This package holds the one event model every format parser produces and
// every protocol encoder consumes, the streaming interfaces, the limits and
// the error codes. The parsers, the upstream decoder and the encoders live in
// sub-packages named for what they hold.
package transform

import "strconv"

// Kind says what an Event means. The set is deliberately small: adding a
// format or a protocol never adds a kind (STYLE.md, "one event model").
type Kind uint8

// The event kinds. Start and end kinds always come in pairs: a parser that
// emits XStart emits exactly one XEnd for it, also when the reply is cut off.
const (
	// KindRaw carries the model's reply text as written (Text), for protocols
	// that forward the raw reply (gymbro content_delta). Every parser emits
	// it for every input byte, in order; the ThinkingML parser escapes a
	// literal <final> or </final> inside <thinking> (CONTRACT.md §4).
	KindRaw Kind = iota
	// KindReasoningStart opens free reasoning: a <think> block, the
	// upstream's native reasoning_content, or an inline <think> prefix.
	KindReasoningStart
	// KindReasoningDelta carries reasoning text (Text).
	KindReasoningDelta
	// KindReasoningEnd closes the reasoning opened by KindReasoningStart.
	KindReasoningEnd
	// KindSerpSummary carries the whole <serp> summary (Text), once.
	KindSerpSummary
	// KindThinkingStart opens the phased reasoning section (<thinking>).
	KindThinkingStart
	// KindThinkingEnd closes it.
	KindThinkingEnd
	// KindPhaseStart opens phase Index with its complete title (Text).
	KindPhaseStart
	// KindPhaseDelta carries text of phase Index (Text).
	KindPhaseDelta
	// KindPhaseEnd closes phase Index.
	KindPhaseEnd
	// KindAnswerStart opens the answer (<final>, direct_response, message,
	// or the whole of a text reply).
	KindAnswerStart
	// KindAnswerDelta carries answer text (Text), Markdown.
	KindAnswerDelta
	// KindAnswerEnd closes the answer.
	KindAnswerEnd
	// KindSerpQueries carries the cleaned search queries (List), once.
	KindSerpQueries
	// KindToolCallStart opens tool call Index with its ID and Name.
	KindToolCallStart
	// KindToolArgsDelta carries a raw fragment of the arguments JSON of tool
	// call Index (Text), byte for byte as the model wrote it.
	KindToolArgsDelta
	// KindToolCallEnd closes tool call Index. It repeats ID and Name and
	// carries the complete arguments JSON (Text; "{}" when the model sent
	// none), so that encoders which need whole arguments keep no state.
	KindToolCallEnd
	// KindClarify carries a clarification request (Clarify), once.
	KindClarify
	// KindArtifacts carries the artifacts the model reported as a raw JSON
	// array (Text), once.
	KindArtifacts
	// KindRouted says the upstream answered: Name is the model it reports,
	// ID its request id (x-request-id), empty when unknown.
	KindRouted
	// KindUsage carries the upstream's usage object as raw JSON (Text).
	KindUsage
	// KindViolation reports a structural anomaly that did not stop the
	// stream: Code names it, Offset is the byte offset in the reply text,
	// Text a short detail (borrowed). The model's text still flows.
	KindViolation
	// KindToolRun says the gateway starts running server tool call Index
	// (CONTRACT.md §12: a call to a tool of the route's tool servers):
	// ID, Name, Text the complete arguments JSON (borrowed), Tool.Label.
	// It comes after the reply that made the call ended, before the next
	// round; the call's own start, argument and end events came earlier,
	// with Server set.
	KindToolRun
	// KindToolProgress reports the progress of running call Index: ID,
	// Name, and Tool's Progress, Total and Message. Several may come, each
	// replacing the one before.
	KindToolProgress
	// KindToolResult carries the outcome of server call Index: ID, Name,
	// and Tool's Status and Output. Exactly one follows each KindToolRun.
	KindToolResult
	// KindRoundStart opens round Index (2, 3, …) of the same client turn:
	// the results went back to the model and the upstream is answering
	// again. The new round's events follow, in the same stream.
	KindRoundStart
	// KindResourceUpdated says a resource the route subscribes to changed
	// (CONTRACT.md §13, MCP resources/updated): Name is its key, Text its
	// new snapshot as JSON (borrowed). It may come at any time while the
	// stream is open.
	KindResourceUpdated
	// KindAgent carries one event of a sub-agent's own stream (CONTRACT.md
	// §13, specs/002 §3.5), nested in server call ID (the call that
	// consulted it): Code says which (AgentThinking, AgentToken,
	// AgentToolStart, AgentToolResult, AgentRound), Text the thinking or
	// answer text (borrowed), Name a tool's name, and Tool the agent
	// (AgentID, AgentName) with a tool's Label, Status and Output.
	KindAgent
	// KindFinish ends a successful stream: Code is the finish reason in
	// OpenAI spelling ("stop", "length", "tool_calls", "content_filter").
	// It is the last event; exactly one of KindFinish and KindError ends
	// every stream.
	KindFinish
	// KindError ends a failed stream: Code names the failure (see codes.go),
	// Text is a human-readable message (borrowed).
	KindError

	numKinds
)

var kindNames = [numKinds]string{
	KindRaw:             "raw",
	KindReasoningStart:  "reasoning_start",
	KindReasoningDelta:  "reasoning_delta",
	KindReasoningEnd:    "reasoning_end",
	KindSerpSummary:     "serp_summary",
	KindThinkingStart:   "thinking_start",
	KindThinkingEnd:     "thinking_end",
	KindPhaseStart:      "phase_start",
	KindPhaseDelta:      "phase_delta",
	KindPhaseEnd:        "phase_end",
	KindAnswerStart:     "answer_start",
	KindAnswerDelta:     "answer_delta",
	KindAnswerEnd:       "answer_end",
	KindSerpQueries:     "serp_queries",
	KindToolCallStart:   "tool_call_start",
	KindToolArgsDelta:   "tool_args_delta",
	KindToolCallEnd:     "tool_call_end",
	KindClarify:         "clarify",
	KindArtifacts:       "artifacts",
	KindRouted:          "routed",
	KindUsage:           "usage",
	KindViolation:       "violation",
	KindToolRun:         "tool_run",
	KindToolProgress:    "tool_progress",
	KindToolResult:      "tool_result",
	KindRoundStart:      "round_start",
	KindResourceUpdated: "resource_updated",
	KindAgent:           "agent",
	KindFinish:          "finish",
	KindError:           "error",
}

// String returns the kind's snake_case name, as logs and tests print it.
func (k Kind) String() string {
	if k < numKinds {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// IsDelta reports whether k carries streamed text that may be cut anywhere:
// adjacent deltas of the same kind and Index concatenate to the same meaning.
func (k Kind) IsDelta() bool {
	switch k {
	case KindRaw, KindReasoningDelta, KindPhaseDelta, KindAnswerDelta, KindToolArgsDelta:
		return true
	}
	return false
}

// Event is one unit of meaning in a streamed reply. Which fields are set
// depends on Kind (see the Kind constants).
//
// Text is borrowed: it aliases the producer's input or scratch buffer and is
// valid only until the emit call that delivered the event returns. A consumer
// that keeps an event longer must Clone it. Strings and List are owned.
type Event struct {
	Kind Kind
	// Server marks the tool kinds (start, arguments, end) of a call to a
	// tool the gateway runs itself (CONTRACT.md §12), which protocols show
	// apart from the client's own calls.
	Server bool
	// Index is the phase id for phase kinds and the tool call index (0, 1, …
	// in order of appearance within the stream) for tool kinds.
	Index int
	// Text is the kind's bytes (see Kind); borrowed.
	Text []byte
	// Code is the violation or error code, or the finish reason.
	Code string
	// Name is the tool name, or the upstream model for KindRouted.
	Name string
	// ID is the tool call id, or the upstream request id for KindRouted.
	ID string
	// Offset is the byte offset in the reply text where a violation was found.
	Offset int64
	// List holds the serp queries of KindSerpQueries.
	List []string
	// Clarify is set on KindClarify.
	Clarify *Clarify
	// Tool is set on KindToolCallStart of a server call (Label) and on
	// KindToolRun, KindToolProgress and KindToolResult.
	Tool *Tool
}

// The statuses of a server tool call's result (Tool.Status).
const (
	// ToolCompleted: the tool answered.
	ToolCompleted = "completed"
	// ToolFailed: the tool reported an error, timed out, or could not be
	// reached; the model got the error as the call's result.
	ToolFailed = "error"
	// ToolAwaiting: the call waits for the user (CONTRACT.md §13): the
	// route's approval, or a choice or form the tool server asked for
	// (MCP elicitation). Tool.Await says what is asked. The turn ends
	// after the round, and the user's answer resumes the call.
	ToolAwaiting = "awaiting_user"
	// ToolDenied: the user declined a call that needed approval; it was
	// not run, and the model was told.
	ToolDenied = "denied"
)

// Tool describes a call to a tool the gateway runs (CONTRACT.md §12).
type Tool struct {
	// Label is the tool's display label (skillpet tool_start.label, an AI
	// SDK part's title): the route's label for it, else its name.
	Label string
	// Server names the tool server that runs the tool (the route's mcp
	// block name: responses server_label, anthropic server_name).
	Server string
	// Round is the round whose reply made the call (1 for the first).
	Round int
	// Progress, Total and Message are a KindToolProgress's report (MCP
	// notifications/progress): Total is 0 when unknown.
	Progress, Total float64
	Message         string
	// Status is a KindToolResult's outcome: ToolCompleted or ToolFailed.
	Status string
	// Output is a KindToolResult's result as text, as the model got it
	// (cut at the route's max_result_bytes). For a call awaiting the user
	// it is what the conversation stores while it waits.
	Output string
	// Await is set on a KindToolResult whose Status is ToolAwaiting: what
	// the user is asked.
	Await *Await
	// Choice is set on the events of a resumed call (CONTRACT.md §13):
	// the option the user picked.
	Choice *Option
	// Event is the data event the route makes of the tool's successful
	// results ("quiz-complete", …; "" for none), on every event of the
	// call; Image is its image mode ("display", "single_select",
	// "multi_select"; "" when its results are not shown as images).
	Event, Image string
	// AgentID, AgentName and AgentAvatar name a sub-agent: on the events
	// of a call that consults one (skillpet tool_start agentId,
	// agentAvatarUrl) and on KindAgent.
	AgentID, AgentName, AgentAvatar string
	// Images are the images a KindToolResult of an image tool carries
	// (specs/002 §3.7), each with the URL the client fetches it at.
	Images []Image
	// Artifacts are what a KindToolResult produced for the user (specs/004
	// §7.3: the artifact events): files it carries, the route's event of
	// it. They are the evidence of validate's terminal-state rules.
	Artifacts []Artifact
}

// The events of a sub-agent's stream (KindAgent's Code).
const (
	AgentThinking   = "thinking"
	AgentToken      = "token"
	AgentToolStart  = "tool_start"
	AgentToolResult = "tool_result"
	AgentRound      = "round"
)

// The kinds of artifact a tool result produces (specs/004 §7.3.1
// ARTIFACT_EVENT_TYPES, without their "data-" prefix).
const (
	ArtifactFile = "file-ready"
	// ArtifactResource is structured data a result carries (an embedded
	// JSON resource): Name is its type, Data its JSON. It is shown, not
	// counted as an artifact.
	ArtifactResource = "resource"
)

// Image is one image a tool produced (specs/002 §3.7 image_generation
// images[]).
type Image struct {
	ID, URL, Label string
	// Type is its media type ("image/png").
	Type          string
	Width, Height int
}

// Artifact is one thing a tool result produced for the user.
type Artifact struct {
	// Kind is ArtifactFile or the route's event ("quiz-complete",
	// "interactive-content", "pptx-outline").
	Kind string
	// URL, Name and Type are a file's: where the client fetches it, its
	// name and its media type.
	URL, Name, Type string
	// Data is the JSON the route's event carries (the result's structured
	// content, else its text as JSON, else its text as a string).
	Data []byte
}

// AwaitKind says what a call waiting for the user asks (CONTRACT.md §13).
type AwaitKind uint8

// The kinds of questions a call may wait on.
const (
	// AwaitApproval asks whether the call may run: a tool the route marks
	// approve. Options are approve and deny.
	AwaitApproval AwaitKind = iota
	// AwaitChoice asks for one of Options: an MCP elicitation whose
	// answer is one choice.
	AwaitChoice
	// AwaitForm asks Questions: an MCP elicitation with several fields,
	// shown as a form (skillpet ask_user).
	AwaitForm
)

// Await is what a call that waits for the user asks (CONTRACT.md §13,
// specs/002 §3.3 tool_result awaiting_user).
type Await struct {
	Kind AwaitKind
	// ID is what the client's answer names: the AI SDK approvalId, the
	// Responses mcp_approval_request id. Empty where the call id serves
	// (skillpet's /tool-response names the toolCallId).
	ID string
	// Message is the question, for the user.
	Message string
	// Options are the answers of an approval or a choice.
	Options []Option
	// Questions are a form's fields.
	Questions []Question
}

// The option ids of an approval.
const (
	OptionApprove = "approve"
	OptionDeny    = "deny"
)

// Option is one answer the user may pick (specs/002 §3.3 options).
type Option struct {
	ID, Label, Description string
}

// Question is one field of a form (specs/002 §3.4 AskUserQuestion).
type Question struct {
	ID, Prompt string
	Options    []Option
	// AllowFreeText lets the user write an answer of their own;
	// AllowMultiple lets them pick several options.
	AllowFreeText, AllowMultiple bool
	Placeholder                  string
}

// Clarify is a clarification the model asks of the user (specs/004 §7.2
// ClarifyPayload).
type Clarify struct {
	Question string
	Options  []string
	Hint     string
}

// Clone returns a copy of ev whose Text no longer aliases the producer's
// buffers.
func (ev Event) Clone() Event {
	if ev.Text != nil {
		ev.Text = append([]byte(nil), ev.Text...)
	}
	return ev
}

// FailureMessage is a KindError event's message for protocols whose error
// carries a message only (skillpet's error, the AI SDK's error chunk,
// AG-UI's RUN_ERROR): its text, else its code, never empty, since an
// empty message tells the user nothing and some clients reject it.
func (ev Event) FailureMessage() string {
	switch {
	case len(ev.Text) > 0:
		return string(ev.Text)
	case ev.Code != "":
		return ev.Code
	}
	return CodeUpstreamError
}

// Emit receives events from a producer. Event.Text is valid only until the
// call returns.
type Emit func(Event)
