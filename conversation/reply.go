package conversation

import (
	"encoding/json"
	"strings"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/chatmsg"

	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/parsekit"
)

// The markers of the storage format (specs/002 §4.1) and the prefix of an
// ask_user tool message's body (§4.4).
const (
	AssistantMarker = "_pub_asst"
	ToolMarker      = "_pub_tool"
	AskUserPrefix   = "[ask_user] "
	// AwaitingPrefix starts the body of a tool that waits for the user's
	// choice (§4.5): the question follows.
	AwaitingPrefix = "[等待用户选择] "
	// ImagePrefix starts the body of an image block (§3.7): the
	// image_generation object follows.
	ImagePrefix = "[image_generation] "
)

// AskUserTool is the tool whose calls the component shows as a form
// (specs/002 §6).
const AskUserTool = "ask_user"

// Status says how a reply ended.
type Status uint8

// The ways a reply ends. Only StatusComplete is stored without a mark: the
// others put "status" in the _pub_asst object, a field parseHistoryMessages
// ignores and the upstream rebuild reads.
const (
	// StatusOpen is a reply still streaming.
	StatusOpen Status = iota
	// StatusComplete is a reply that ended with done.
	StatusComplete
	// StatusFailed is a reply that ended with an error event.
	StatusFailed
	// StatusInterrupted is a reply whose client left before its end.
	StatusInterrupted
)

// String returns the stored spelling ("" for complete).
func (s Status) String() string {
	switch s {
	case StatusFailed:
		return "error"
	case StatusInterrupted:
		return "interrupted"
	case StatusOpen:
		return "open"
	}
	return ""
}

// ToolCall is a tool call of the model, as the upstream request must
// repeat it: Arguments is the arguments JSON as the model wrote it.
type ToolCall = chatmsg.ToolCall

// Form is an ask_user form shown to the user.
type Form struct {
	// ToolCallID is the id of the ask_user call that asked, or a made-up id
	// for a form that no tool call asked (a final_result clarify).
	ToolCallID string
	// Questions is the questions array exactly as the ask_user event sent
	// it, normalised (specs/002 §5).
	Questions json.RawMessage
}

// part is a piece of the visible reply: text, or a resource (specs/002
// §3.8) as the raw JSON object of its event.
type part struct {
	text     []byte
	resource json.RawMessage
}

// Reply is the assistant side of a turn as its user saw it: the text and
// resource parts in order, the model's tool calls, the forms shown, and how
// it ended. Capture builds it; Records stores it.
type Reply struct {
	parts   []*part
	calls   []ToolCall
	forms   []Form
	results []result
	// resumed are the results of calls made in an earlier turn, resumed
	// in this one.
	resumed []result
	// earlier are the turn's rounds before this reply, in order, when the
	// gateway ran tools (CONTRACT.md §12): each is stored as its own
	// assistant record followed by its results.
	earlier []Reply
	Status  Status
}

// result is a tool result the gateway got for one of the reply's calls:
// the text the model was given, and for a call the user answered
// (CONTRACT.md §13) the option picked.
type result struct {
	callID, body string
	choice       *transform.Option
}

// AddResult records the result of the reply's call id, as the model got
// it: stored as the call's tool record, it is what init replays and what
// the next turn's upstream request carries.
func (r *Reply) AddResult(callID, body string) { r.addResult(callID, body, nil) }

// addResult records a result; a call of no round of this reply is one
// made in an earlier turn and resumed in this one (the user answered it):
// its record is stored first, after the records of the turn that asked.
func (r *Reply) addResult(callID, body string, choice *transform.Option) {
	res := result{callID: callID, body: body, choice: choice}
	if !r.hasCall(callID) {
		r.resumed = append(r.resumed, res)
		return
	}
	r.results = append(r.results, res)
}

// hasCall reports whether a round of the reply made the call id.
func (r *Reply) hasCall(id string) bool {
	for _, c := range r.calls {
		if c.ID == id {
			return true
		}
	}
	for i := range r.earlier {
		if r.earlier[i].hasCall(id) {
			return true
		}
	}
	return false
}

// nextRound files the reply as the turn's latest earlier round and
// empties it for the next round's.
func (r *Reply) nextRound() {
	round := *r
	round.earlier, round.Status = nil, StatusComplete
	*r = Reply{earlier: append(r.earlier, round)}
}

// AddText appends visible answer text.
func (r *Reply) AddText(s string) {
	if s != "" {
		p := r.textPart()
		p.text = append(p.text, s...)
	}
}

// addJSONText appends the text of a JSON string literal's body (the bytes
// between its quotes), decoded: a token event's content, as the encoder
// wrote it.
func (r *Reply) addJSONText(raw []byte) {
	if len(raw) > 0 {
		p := r.textPart()
		p.text = parsekit.AppendUnescaped(p.text, raw)
	}
}

// textPart returns the text part at the end, opening one if needed.
func (r *Reply) textPart() *part {
	if n := len(r.parts); n > 0 && r.parts[n-1].resource == nil {
		return r.parts[n-1]
	}
	p := new(part)
	r.parts = append(r.parts, p)
	return p
}

// AddResource appends a resource part: the JSON object of a resource event.
func (r *Reply) AddResource(raw []byte) {
	r.parts = append(r.parts, &part{resource: append(json.RawMessage(nil), raw...)})
}

// AddCall records a tool call of the model.
func (r *Reply) AddCall(c ToolCall) { r.calls = append(r.calls, c) }

// AddForm records an ask_user form shown to the user.
func (r *Reply) AddForm(f Form) { r.forms = append(r.forms, f) }

// Text returns the visible text, every text part joined.
func (r *Reply) Text() string {
	var b strings.Builder
	for _, p := range r.parts {
		if p.resource == nil {
			b.Write(p.text)
		}
	}
	return b.String()
}

// Calls returns the tool calls, in order.
func (r *Reply) Calls() []ToolCall { return r.calls }

// Forms returns the forms shown, in order.
func (r *Reply) Forms() []Form { return r.forms }

// Visible reports whether the user saw anything of the turn: text, a
// resource, a form or a tool call, in this reply or an earlier round. A
// reply that failed before showing anything is not stored: the user saw
// an error, not a message.
func (r *Reply) Visible() bool {
	if len(r.resumed) > 0 {
		return true
	}
	for i := range r.earlier {
		if len(r.earlier[i].resumed) > 0 {
			return true
		}
		if r.earlier[i].visible() {
			return true
		}
	}
	return r.visible()
}

// visible reports whether the user saw anything of this round.
func (r *Reply) visible() bool {
	return len(r.parts) > 0 || len(r.calls) > 0 || len(r.forms) > 0
}

// Records returns what the reply stores (specs/002 §4): for each round of
// the turn (earlier ones first), one assistant record, then one tool
// record per result the gateway got and per form; the first record has
// id, the others ids from newID. A round with nothing visible stores
// nothing.
func (r *Reply) Records(id string, newID func() string, now int64) []Record {
	var recs []Record
	// The results of resumed calls first: they answer the calls of the
	// turn before (its last records).
	for _, rounds := range [][]Reply{r.earlier, {*r}} {
		for _, round := range rounds {
			for _, res := range round.resumed {
				recs = append(recs, Record{ID: takeID(&id, newID), Role: RoleTool, Content: string(appendResultContent(nil, res)), Time: now})
			}
		}
	}
	for i := range r.earlier {
		recs = r.earlier[i].appendRecords(recs, &id, newID, now)
	}
	return r.appendRecords(recs, &id, newID, now)
}

// appendRecords appends the records of one round. *id is the next
// record's id, "" once used.
func (r *Reply) appendRecords(recs []Record, id *string, newID func() string, now int64) []Record {
	if !r.visible() {
		return recs
	}
	next := func() string { return takeID(id, newID) }
	recs = append(recs, Record{ID: next(), Role: RoleAssistant, Content: string(r.appendAssistant(nil)), Time: now})
	for _, res := range r.results {
		recs = append(recs, Record{ID: next(), Role: RoleTool, Content: string(appendResultContent(nil, res)), Time: now})
	}
	for _, f := range r.forms {
		recs = append(recs, Record{ID: next(), Role: RoleTool, Content: string(AppendToolContent(nil, f.ToolCallID, AskUserPrefix+string(f.Questions))), Time: now})
	}
	return recs
}

// takeID returns *id the first time (then ""), a new id after.
func takeID(id *string, newID func() string) string {
	if *id != "" {
		s := *id
		*id = ""
		return s
	}
	return newID()
}

// appendResultContent appends the _pub_tool object of a result: with the
// user's pick as "choice" {id, label} when the user answered the call, a
// member parseHistoryMessages ignores and a history reader can show.
func appendResultContent(dst []byte, res result) []byte {
	dst = AppendToolContent(dst, res.callID, res.body)
	if res.choice == nil {
		return dst
	}
	dst = append(dst[:len(dst)-1], `,"choice":{"id":`...)
	dst = jsonout.AppendStringS(dst, res.choice.ID)
	if res.choice.Label != "" {
		dst = append(dst, `,"label":`...)
		dst = jsonout.AppendStringS(dst, res.choice.Label)
	}
	return append(dst, "}}"...)
}

// appendAssistant appends the _pub_asst object (specs/002 §4.2, §3.8):
// text is every visible text part joined (what a component older than
// v0.8, which knows no parts, shows), parts is there only when a resource
// needs its place among the text, tool_calls in the OpenAI shape the
// upstream request repeats, and status when the reply did not complete.
func (r *Reply) appendAssistant(dst []byte) []byte {
	dst = append(dst, `{"_t":"`+AssistantMarker+`","text":`...)
	dst = jsonout.AppendStringS(dst, r.Text())
	hasResource := false
	for _, p := range r.parts {
		hasResource = hasResource || p.resource != nil
	}
	if hasResource {
		dst = append(dst, `,"parts":[`...)
		for i, p := range r.parts {
			if i > 0 {
				dst = append(dst, ',')
			}
			if p.resource != nil {
				dst = append(dst, `{"type":"resource","resource":`...)
				dst = append(dst, p.resource...)
			} else {
				dst = append(dst, `{"type":"text","content":`...)
				dst = jsonout.AppendString(dst, p.text)
			}
			dst = append(dst, '}')
		}
		dst = append(dst, ']')
	}
	if len(r.calls) > 0 {
		dst = append(dst, `,"tool_calls":`...)
		dst = chatmsg.AppendToolCalls(dst, r.calls)
	}
	if s := r.Status.String(); s != "" {
		dst = append(dst, `,"status":`...)
		dst = jsonout.AppendStringS(dst, s)
	}
	return append(dst, '}')
}

// AppendToolContent appends a _pub_tool object (specs/002 §4.3).
func AppendToolContent(dst []byte, toolCallID, body string) []byte {
	dst = append(dst, `{"_t":"`+ToolMarker+`","toolCallId":`...)
	dst = jsonout.AppendStringS(dst, toolCallID)
	dst = append(dst, `,"body":`...)
	dst = jsonout.AppendStringS(dst, body)
	return append(dst, '}')
}
