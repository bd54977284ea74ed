package conversation

import (
	"encoding/json"
	"strings"

	"github.com/llmstream/llmstream/transform/chatmsg"
)

// The texts the rebuilt upstream request holds where the stored history
// has nothing a strict OpenAI-compatible server would accept: they are
// written for the model, which reads them as part of the conversation.
const (
	// NoteNoReply stands in for the reply of a user turn that has none (the
	// stream failed before showing anything, or its server stopped).
	NoteNoReply = "[No reply: this request ended before the assistant answered.]"
	// NoteCutOff follows the text of a reply that did not complete.
	NoteCutOff = "[This reply was cut off before it finished.]"
	// NoteNoText stands in for a reply that showed only resources.
	NoteNoText = "[This reply had no text.]"
	// NoteToolNotRun answers a tool call whose result was never stored:
	// the route's tool servers do not have the tool, so nothing ran it.
	NoteToolNotRun = "This tool was not run, so there is no result."
	// NoteFormNotShown answers an ask_user call whose form never reached
	// the user.
	NoteFormNotShown = "The form was not shown to the user: the reply was cut off first."
	// NoteAnsweredBelow answers an ask_user call whose answer is a user
	// message that cannot be a tool result (it has attachments).
	NoteAnsweredBelow = "The user answered this form in their next message."
	// NoteAnsweredWithFirst answers the second and later ask_user calls of
	// one reply: the user answers all the forms at once.
	NoteAnsweredWithFirst = "The user answered this form together with the first form of this reply."
	// NoteNotAnswered answers a form the user never answered.
	NoteNotAnswered = "The user did not answer this form."
	// NoteContinue is what the model gets for the component's
	// "__continue__" (after the user chose images, specs/002 §3.8).
	NoteContinue = "[The user made the choice above. Continue from where you stopped.]"
)

// ContinueMessage is the message the component sends after an image
// choice to continue the turn (specs/002 §3.8 autoSendAfterImageSelect).
const ContinueMessage = "__continue__"

// Budget bounds the history sent upstream, never what is stored. A zero
// field is no bound.
type Budget struct {
	// Messages is the most messages sent, the new one included (the system
	// prompt aside).
	Messages int
	// Bytes is the most bytes of message JSON sent, the new one included.
	Bytes int
}

// Sent says what Messages put in the upstream request.
type Sent struct {
	// Messages counts the messages, the new one included; Dropped counts
	// the history messages the budget left out.
	Messages, Dropped int
}

// message is one upstream message being built.
type message struct {
	json []byte
	// opens marks a user message: the budget drops whole exchanges, from a
	// user message to the next, so that no tool message loses its call.
	opens bool
}

// Messages appends to dst the upstream messages for history followed by
// next, the new user turn, as the elements of a JSON array separated by
// commas. The result is valid for strict OpenAI-compatible servers:
//   - every assistant tool call is answered by a tool message right after
//     it: an ask_user call by the user's answer (the next user message,
//     which then is that tool message instead: the component sends the
//     formatted answers as the next message, specs/002 §3.4), a call the
//     gateway ran by its stored result (CONTRACT.md §12), any other by
//     NoteToolNotRun;
//   - a user turn without a reply gets NoteNoReply, so that roles
//     alternate;
//   - a reply that did not complete ends with NoteCutOff;
//   - a form that no tool call asked (a clarify) is folded into its
//     reply's text as "[ask_user] <questions>".
//
// Within b, the oldest exchanges (a user message and everything up to the
// next) are left out; the last exchange is always sent whole.
func Messages(dst []byte, history []Record, next Record, b Budget) ([]byte, Sent) {
	recs := append(history[:len(history):len(history)], next)
	var msgs []message
	lastUser := false // the last message built is a user message
	for i := 0; i < len(recs); {
		r := recs[i]
		switch r.Role {
		case RoleUser:
			if lastUser {
				msgs = append(msgs, message{json: chatmsg.AppendAssistant(nil, NoteNoReply, nil)})
			}
			msgs = append(msgs, message{json: appendUserMessage(nil, r), opens: true})
			lastUser = true
			i++
		case RoleAssistant:
			var consumed bool
			var built []message
			built, i, consumed = rebuildReply(recs, i)
			msgs = append(msgs, built...)
			lastUser = false
			if consumed {
				i++
			}
		default:
			// A tool record that follows no reply (never written by
			// llmstream) has no call to answer: a strict server would
			// refuse it.
			i++
		}
	}
	return appendBudgeted(dst, msgs, b)
}

// rebuildReply builds the messages of the assistant record recs[i] and the
// tool records after it. It returns the index after them, and whether the
// user record there answered the reply's form and was used up as its tool
// message.
func rebuildReply(recs []Record, i int) ([]message, int, bool) {
	a := parseAssistant(recs[i].Content)
	i++
	forms := map[string]string{} // tool call id → body of its tool record
	var orphans []string         // ask_user bodies no call of this reply asked
	calls := map[string]bool{}
	for _, c := range a.ToolCalls {
		calls[c.ID] = true
	}
	images := map[string]string{} // tool call id → what the user chose of its images
	for ; i < len(recs) && recs[i].Role == RoleTool; i++ {
		t := parseTool(recs[i].Content)
		switch {
		case calls[t.ToolCallID] && strings.HasPrefix(t.Body, ImagePrefix):
			// An image block is what the user saw of the result; the
			// model reads the result, and what the user chose of it.
			images[t.ToolCallID] = imageChoiceNote(t.Body)
		case calls[t.ToolCallID]:
			forms[t.ToolCallID] = t.Body
		case len(t.Body) >= len(AskUserPrefix) && t.Body[:len(AskUserPrefix)] == AskUserPrefix:
			orphans = append(orphans, t.Body)
		}
	}
	// A call resumed by a later request (CONTRACT.md §13: the user
	// answered it) has its result after the records of the turn that
	// asked, after the user's message when the answer was one (a form's):
	// that result is the call's.
	j := i
	if j < len(recs) && recs[j].Role == RoleUser {
		j++
	}
	for ; j < len(recs) && recs[j].Role == RoleTool; j++ {
		switch t := parseTool(recs[j].Content); {
		case calls[t.ToolCallID] && strings.HasPrefix(t.Body, ImagePrefix):
			images[t.ToolCallID] = imageChoiceNote(t.Body)
		case calls[t.ToolCallID]:
			forms[t.ToolCallID] = t.Body
		}
	}
	text := a.text()
	for _, o := range orphans {
		text = joinNote(text, o)
	}
	if a.Status != "" {
		text = joinNote(text, NoteCutOff)
	}
	if text == "" && len(a.ToolCalls) == 0 {
		text = NoteNoText
	}
	calls2 := make([]ToolCall, len(a.ToolCalls))
	for j, c := range a.ToolCalls {
		calls2[j] = ToolCall{ID: c.ID, Name: c.Function.Name, Arguments: c.Function.Arguments}
	}
	msgs := []message{{json: chatmsg.AppendAssistant(nil, text, calls2)}}

	// The user record after the reply answers its first form, when it can
	// be a tool message's content (text only).
	var answer *Record
	if i < len(recs) && recs[i].Role == RoleUser && len(recs[i].Upstream) == 0 {
		answer = &recs[i]
	}
	consumed, answered := false, false
	for _, c := range calls2 {
		var content string
		_, shown := forms[c.ID]
		switch {
		case c.Name != AskUserTool:
			content = NoteToolNotRun
			if body, ok := forms[c.ID]; ok {
				content = body // a result stored by someone who ran the tool
			}
			if note := images[c.ID]; note != "" {
				content = joinNote(content, note)
			}
		case !shown:
			content = NoteFormNotShown
		case answered:
			content = NoteAnsweredWithFirst
		case answer != nil:
			content, consumed, answered = answer.Content, true, true
		case i < len(recs) && recs[i].Role == RoleUser:
			content, answered = NoteAnsweredBelow, true
		default:
			content = NoteNotAnswered
		}
		msgs = append(msgs, message{json: chatmsg.AppendTool(nil, c.ID, content)})
	}
	return msgs, i, consumed
}

// joinNote appends note to text after a blank line.
func joinNote(text, note string) string {
	if text == "" {
		return note
	}
	return text + "\n\n" + note
}

// appendBudgeted appends the messages the budget allows, oldest
// exchanges left out first.
func appendBudgeted(dst []byte, msgs []message, b Budget) ([]byte, Sent) {
	first := 0
	total := 0
	for _, m := range msgs {
		total += len(m.json) + 1
	}
	count := len(msgs)
	over := func() bool {
		return b.Messages > 0 && count > b.Messages || b.Bytes > 0 && total > b.Bytes
	}
	for over() {
		// The next exchange starts at the next user message after first.
		end := first + 1
		for end < len(msgs) && !msgs[end].opens {
			end++
		}
		if end >= len(msgs) {
			break // the last exchange is sent whole
		}
		for _, m := range msgs[first:end] {
			total -= len(m.json) + 1
		}
		count -= end - first
		first = end
	}
	for i, m := range msgs[first:] {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, m.json...)
	}
	return dst, Sent{Messages: len(msgs) - first, Dropped: first}
}

// appendUserMessage appends a user message: its upstream content when
// stored, else its text.
func appendUserMessage(dst []byte, r Record) []byte {
	if len(r.Upstream) > 0 {
		return chatmsg.AppendRaw(dst, chatmsg.Raw{Role: "user", Content: r.Upstream})
	}
	return chatmsg.AppendUser(dst, r.Content)
}

// storedAssistant is a _pub_asst object as stored (specs/002 §4.2, §3.8).
type storedAssistant struct {
	Marker string `json:"_t"`
	Text   string `json:"text"`
	Parts  []struct {
		Type    string `json:"type"`
		Content string `json:"content"`
	} `json:"parts"`
	ToolCalls []struct {
		ID       string `json:"id"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls"`
	Status string `json:"status"`
}

// parseAssistant reads an assistant record's content: a _pub_asst object,
// or (as parseHistoryMessages reads it) plain text.
func parseAssistant(content string) storedAssistant {
	var a storedAssistant
	if json.Unmarshal([]byte(content), &a) != nil || a.Marker != AssistantMarker {
		return storedAssistant{Text: content}
	}
	return a
}

// text is the reply's visible text: its text parts joined when it has
// parts (they are what the component shows), else its text.
func (a *storedAssistant) text() string {
	if len(a.Parts) == 0 {
		return a.Text
	}
	var s string
	for _, p := range a.Parts {
		if p.Type == "text" {
			s += p.Content
		}
	}
	return s
}

// storedTool is a _pub_tool object (specs/002 §4.3).
type storedTool struct {
	Marker     string `json:"_t"`
	ToolCallID string `json:"toolCallId"`
	Body       string `json:"body"`
}

// parseTool reads a tool record's content.
func parseTool(content string) storedTool {
	var t storedTool
	if json.Unmarshal([]byte(content), &t) != nil || t.Marker != ToolMarker {
		return storedTool{}
	}
	return t
}

// HasCall reports whether an assistant record's content (a _pub_asst
// object) has a tool call id.
func HasCall(content, id string) bool {
	a := parseAssistant(content)
	for _, c := range a.ToolCalls {
		if c.ID == id {
			return true
		}
	}
	return false
}

// imageBlock is the part of a stored image block (specs/002 §3.7) that
// the model is told of.
type imageBlock struct {
	ID     string `json:"id"`
	Images []struct {
		ID string `json:"id"`
	} `json:"images"`
	Mode             string   `json:"mode"`
	Status           string   `json:"status"`
	SelectedImageIDs []string `json:"selectedImageIds"`
	ActionID         string   `json:"actionId"`
}

// parseImageBlock reads an image block's body ("[image_generation] {…}").
func parseImageBlock(body string) (imageBlock, bool) {
	var b imageBlock
	rest, ok := strings.CutPrefix(body, ImagePrefix)
	if !ok || json.Unmarshal([]byte(rest), &b) != nil {
		return imageBlock{}, false
	}
	return b, true
}

// imageChoiceNote is what the model is told of the user's choice of an
// image block: "" until the user chose (image-select).
func imageChoiceNote(body string) string {
	b, ok := parseImageBlock(body)
	if !ok || b.Status != "selected" {
		return ""
	}
	note := "[The user chose images " + strings.Join(b.SelectedImageIDs, ", ") + " of the " + strconvItoa(len(b.Images)) + " generated (" + b.ID + ")"
	if b.ActionID != "" {
		note += ", and asked for " + b.ActionID
	}
	return note + ".]"
}

func strconvItoa(n int) string {
	b, _ := json.Marshal(n)
	return string(b)
}
