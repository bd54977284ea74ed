package agent

import (
	"encoding/json"
	"sort"
	"strings"

	"github.com/llmstream/llmstream/transform"
)

// The labels of the options llmstream writes itself. The skillpet
// component is Chinese (specs/002), and its users read them.
const (
	labelApprove     = "允许"
	labelDeny        = "拒绝"
	labelYes         = "是"
	labelNo          = "否"
	labelAccept      = "确认"
	labelDecline     = "拒绝"
	maxOptions       = 64
	maxQuestions     = 32
	maxElicitMessage = 4 << 10
)

// Approval returns the park of a call to a tool the route marks approve
// (CONTRACT.md §13): the call has not run, and the user is asked whether
// it may, with approve and deny as the options.
func Approval(label string) Park {
	return Park{
		Await: transform.Await{
			Kind:    transform.AwaitApproval,
			Message: "是否允许运行「" + label + "」？",
			Options: []transform.Option{
				{ID: transform.OptionApprove, Label: labelApprove, Description: "运行「" + label + "」"},
				{ID: transform.OptionDeny, Label: labelDeny, Description: "不运行，告诉助手"},
			},
		},
		Resume: Resume{Mode: ResumeApprove},
	}
}

// elicitSchema is an elicitation's requestedSchema (MCP 2025-11-25
// "elicitation/create": a flat object of primitive properties).
type elicitSchema struct {
	Properties map[string]elicitProp `json:"properties"`
	Required   []string              `json:"required"`
	// order keeps the properties in the order the server wrote them.
	order []string
}

type elicitProp struct {
	Type        string            `json:"type"`
	Title       string            `json:"title"`
	Description string            `json:"description"`
	Enum        []json.RawMessage `json:"enum"`
	EnumNames   []string          `json:"enumNames"`
	OneOf       []constTitle      `json:"oneOf"`
	AnyOf       []constTitle      `json:"anyOf"`
	Items       *elicitProp       `json:"items"`
}

type constTitle struct {
	Const json.RawMessage `json:"const"`
	Title string          `json:"title"`
}

// Elicitation reads an MCP elicitation (form mode: message and
// requestedSchema) as a park: one choice (a single property with options,
// a boolean, or no property at all: a confirmation) or a form. ok is false
// for a schema llmstream cannot show (not an object of primitive
// properties): the caller declines it.
func Elicitation(message string, schema []byte) (Park, bool) {
	var s elicitSchema
	if len(schema) > 0 && string(schema) != "null" {
		if json.Unmarshal(schema, &s) != nil {
			return Park{}, false
		}
		s.order = propertyOrder(schema)
		if len(s.order) != len(s.Properties) { // a repeated name: the map's order
			s.order = s.order[:0]
			for name := range s.Properties {
				s.order = append(s.order, name)
			}
			sort.Strings(s.order)
		}
	}
	if len(message) > maxElicitMessage {
		message = message[:maxElicitMessage]
	}
	required := map[string]bool{}
	for _, r := range s.Required {
		required[r] = true
	}
	p := Park{Await: transform.Await{Message: message}, Resume: Resume{Mode: ResumeRetry}}
	if len(s.Properties) == 0 {
		// A bare confirmation: accept or decline.
		p.Await.Kind = transform.AwaitChoice
		p.Await.Options = []transform.Option{{ID: ActionAccept, Label: labelAccept}, {ID: ActionDecline, Label: labelDecline}}
		return p, true
	}
	if len(s.Properties) > maxQuestions {
		return Park{}, false
	}
	for _, name := range s.order {
		prop := s.Properties[name]
		f, q, ok := field(name, prop, required[name])
		if !ok {
			return Park{}, false
		}
		p.Resume.Fields = append(p.Resume.Fields, f)
		p.Await.Questions = append(p.Await.Questions, q)
	}
	if len(p.Resume.Fields) == 1 && len(p.Await.Questions[0].Options) > 0 && p.Resume.Fields[0].Type != "array" {
		// One choice: shown as the options of an interactive tool.
		q := p.Await.Questions[0]
		p.Await.Kind = transform.AwaitChoice
		p.Await.Options = q.Options
		if p.Await.Message == "" {
			p.Await.Message = q.Prompt
		}
		p.Await.Questions = nil
		return p, true
	}
	p.Await.Kind = transform.AwaitForm
	return p, true
}

// field reads one property as a field and the question that asks it.
func field(name string, prop elicitProp, required bool) (Field, transform.Question, bool) {
	f := Field{Name: name, Type: prop.Type, Required: required}
	q := transform.Question{ID: name, Prompt: firstOf(prop.Title, prop.Description, name)}
	if q.Prompt != prop.Description && prop.Description != "" {
		q.Placeholder = prop.Description
	}
	addOption := func(raw json.RawMessage, label string) {
		id := optionID(raw)
		if label == "" {
			label = id
		}
		f.Values = append(f.Values, OptionValue{ID: id, Label: label, Value: raw})
		q.Options = append(q.Options, transform.Option{ID: id, Label: label})
	}
	enums := func(p elicitProp) {
		switch {
		case len(p.OneOf) > 0:
			for _, c := range p.OneOf {
				addOption(c.Const, c.Title)
			}
		case len(p.AnyOf) > 0:
			for _, c := range p.AnyOf {
				addOption(c.Const, c.Title)
			}
		default:
			for i, v := range p.Enum {
				label := ""
				if i < len(p.EnumNames) {
					label = p.EnumNames[i]
				}
				addOption(v, label)
			}
		}
	}
	switch prop.Type {
	case "boolean":
		addOption(json.RawMessage("true"), labelYes)
		addOption(json.RawMessage("false"), labelNo)
	case "string", "":
		f.Type = "string"
		enums(prop)
		q.AllowFreeText = len(q.Options) == 0
	case "number", "integer":
		enums(prop)
		q.AllowFreeText = len(q.Options) == 0
	case "array":
		if prop.Items == nil {
			return Field{}, q, false
		}
		enums(*prop.Items)
		q.AllowMultiple = true
		if len(q.Options) == 0 {
			return Field{}, q, false
		}
	default:
		return Field{}, q, false
	}
	if len(q.Options) > maxOptions {
		return Field{}, q, false
	}
	return f, q, true
}

// optionID is the id of an option whose value is raw: a string's text,
// any other value's JSON.
func optionID(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	return strings.TrimSpace(string(raw))
}

func firstOf(ss ...string) string {
	for _, s := range ss {
		if strings.TrimSpace(s) != "" {
			return s
		}
	}
	return ""
}

// propertyOrder returns the names of the schema's properties in the order
// they are written: a form asks its questions in the server's order, which
// a Go map loses. nil when the schema cannot be read so.
func propertyOrder(schema []byte) []string {
	dec := json.NewDecoder(strings.NewReader(string(schema)))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil
	}
	var skip json.RawMessage
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return nil
		}
		if key != "properties" {
			if dec.Decode(&skip) != nil {
				return nil
			}
			continue
		}
		if t, err := dec.Token(); err != nil || t != json.Delim('{') {
			return nil
		}
		var names []string
		for dec.More() {
			name, err := dec.Token()
			s, ok := name.(string)
			if err != nil || !ok || dec.Decode(&skip) != nil {
				return nil
			}
			names = append(names, s)
		}
		return names
	}
	return nil
}
