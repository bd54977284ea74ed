package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform"
)

// A call that waits for the user (CONTRACT.md §13): a tool the route marks
// approve, or a tool server that asks the user something (an MCP
// elicitation) while it runs. The call is parked: the turn ends showing
// the question, and the user's answer, in a later request, resumes it.
// Park is what the loop keeps of such a call; it travels in the parked
// round's record (the conversation store), so everything in it is plain
// data.

// ResumeMode says how a parked call goes on once the user answered.
type ResumeMode string

// The ways a parked call resumes.
const (
	// ResumeApprove: the call has not run; approved, it runs now, else
	// the model is told it was declined.
	ResumeApprove ResumeMode = "approve"
	// ResumeRetry: the server answered the call with an input request
	// (the MCP revision 2026-07-28 multi-round-trip requests: a result
	// "input_required" with inputRequests and a requestState); the call
	// is made again with the user's answer as the input response. Any
	// process that reaches the server can do it: the state is in the
	// record.
	ResumeRetry ResumeMode = "retry"
	// ResumeHeld: the server holds its tools/call request open while it
	// asks (elicitation/create, MCP revision 2025-11-25 and before): only
	// the process that holds that request, Hold names it there, can
	// answer.
	ResumeHeld ResumeMode = "held"
)

// Park is a call waiting for the user: what is shown, and how it resumes.
type Park struct {
	// Await is the question shown to the user.
	Await transform.Await `json:"await"`
	// Resume says how the call goes on.
	Resume Resume `json:"resume"`
}

// Resume is how a parked call goes on.
type Resume struct {
	Mode ResumeMode `json:"mode"`
	// InputID and RequestState are a ResumeRetry's input request id and
	// the server's opaque state, echoed back.
	InputID      string `json:"input_id,omitempty"`
	RequestState string `json:"request_state,omitempty"`
	// Hold names a ResumeHeld call in the process that holds it; Instance
	// names that process, so that another one can say why it cannot.
	Hold     string `json:"hold,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Fields are the elicitation's fields, for its answer's content.
	Fields []Field `json:"fields,omitempty"`
}

// Field is one field of an elicitation's requested schema, as its answer
// is written.
type Field struct {
	Name     string `json:"name"`
	Type     string `json:"type"` // string, number, integer, boolean or array
	Required bool   `json:"required,omitempty"`
	// Values are the raw JSON values of a field's options, by option id.
	Values []OptionValue `json:"values,omitempty"`
}

// OptionValue is the JSON value an option stands for.
type OptionValue struct {
	ID    string          `json:"id"`
	Label string          `json:"label,omitempty"`
	Value json.RawMessage `json:"value"`
}

// Answer is the user's answer to a parked call.
type Answer struct {
	// OptionID is the option picked: OptionApprove or OptionDeny for an
	// approval, one of the options of a choice.
	OptionID string
	// Text is a form's answers as the user's message: one "prompt：answer"
	// line per question, as the skillpet component writes ask_user
	// answers (specs/002 §3.4).
	Text string
	// Reason is what the user said when declining (AI SDK, Responses).
	Reason string
}

// The elicitation actions (MCP "elicitation/create" result).
const (
	ActionAccept  = "accept"
	ActionDecline = "decline"
)

// ErrBadAnswer is wrapped by the errors of Content: the answer does not
// fit what was asked.
var ErrBadAnswer = errors.New("the answer does not fit the question")

// Declined reports whether the answer refuses an approval.
func (a Answer) Declined() bool { return a.OptionID == transform.OptionDeny }

// HasOption reports whether id is one of the await's options.
func HasOption(w transform.Await, id string) bool {
	for _, o := range w.Options {
		if o.ID == id {
			return true
		}
	}
	return false
}

// Content returns the elicitation result the answer makes: its action and,
// when accepted, its content object. A choice's option is the value of its
// field (none for a bare confirmation, whose options are accept and
// decline); a form's answers are read from the answer text's lines.
func (p Park) Content(a Answer) (action string, content json.RawMessage, err error) {
	switch p.Await.Kind {
	case transform.AwaitChoice:
		if a.OptionID == ActionDecline && len(p.Resume.Fields) == 0 {
			return ActionDecline, nil, nil
		}
		if len(p.Resume.Fields) == 0 {
			if a.OptionID != ActionAccept {
				return "", nil, errorf("no option %q", a.OptionID)
			}
			return ActionAccept, json.RawMessage(`{}`), nil
		}
		f := p.Resume.Fields[0]
		for _, v := range f.Values {
			if v.ID == a.OptionID {
				obj := map[string]json.RawMessage{f.Name: v.Value}
				b, _ := json.Marshal(obj)
				return ActionAccept, b, nil
			}
		}
		return "", nil, errorf("no option %q", a.OptionID)
	case transform.AwaitForm:
		return p.formContent(a.Text)
	}
	return "", nil, errorf("an approval has no elicitation content")
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrBadAnswer}, args...)...)
}

// formContent reads a form's answers: each line "prompt：answer" (a
// full-width or ASCII colon) answers the question with that prompt.
func (p Park) formContent(text string) (string, json.RawMessage, error) {
	answers := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		for i, q := range p.Await.Questions {
			for _, sep := range []string{"：", ":"} {
				if rest, ok := strings.CutPrefix(line, q.Prompt+sep); ok {
					if _, dup := answers[p.Await.Questions[i].ID]; !dup {
						answers[q.ID] = strings.TrimSpace(rest)
					}
				}
			}
		}
	}
	obj := map[string]json.RawMessage{}
	for i, f := range p.Resume.Fields {
		v, ok := answers[f.Name]
		if !ok || v == "" {
			if f.Required {
				return "", nil, errorf("no answer for %q", questionPrompt(p.Await, i))
			}
			continue
		}
		raw, err := fieldValue(f, v)
		if err != nil {
			return "", nil, errorf("%q: %v", questionPrompt(p.Await, i), err)
		}
		obj[f.Name] = raw
	}
	b, _ := json.Marshal(obj)
	return ActionAccept, b, nil
}

func questionPrompt(w transform.Await, i int) string {
	if i < len(w.Questions) {
		return w.Questions[i].Prompt
	}
	return strconv.Itoa(i)
}

// fieldValue is the JSON value of a field's answer text.
func fieldValue(f Field, s string) (json.RawMessage, error) {
	pick := func(s string) (json.RawMessage, bool) {
		for _, v := range f.Values {
			if s == v.ID || s == v.Label {
				return v.Value, true
			}
		}
		return nil, false
	}
	switch f.Type {
	case "array":
		var out []json.RawMessage
		for _, part := range splitList(s) {
			v, ok := pick(part)
			if !ok {
				return nil, errors.New("not one of the options: " + part)
			}
			out = append(out, v)
		}
		b, _ := json.Marshal(out)
		return b, nil
	case "boolean":
		if v, ok := pick(s); ok {
			return v, nil
		}
		switch strings.ToLower(s) {
		case "true", "yes", "y", "是", "对", "确认":
			return json.RawMessage("true"), nil
		case "false", "no", "n", "否", "不":
			return json.RawMessage("false"), nil
		}
		return nil, errors.New("not yes or no")
	case "number", "integer":
		n, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || f.Type == "integer" && n != float64(int64(n)) {
			return nil, errors.New("not a " + f.Type)
		}
		return json.RawMessage(strconv.FormatFloat(n, 'f', -1, 64)), nil
	}
	if len(f.Values) > 0 {
		if v, ok := pick(s); ok {
			return v, nil
		}
		return nil, errors.New("not one of the options")
	}
	b, _ := json.Marshal(s)
	return b, nil
}

// splitList splits a multiple choice's answer: the component joins the
// labels with "、", ", " or "，".
func splitList(s string) []string {
	f := strings.FieldsFunc(s, func(r rune) bool { return r == '、' || r == ',' || r == '，' || r == ';' || r == '；' })
	out := f[:0]
	for _, p := range f {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
