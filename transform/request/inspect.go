package request

import (
	"encoding/json"
	"errors"
	"strings"
)

// Inspection is what the checks of a reply (transform/validate) read of
// the chat-completions request sent upstream: the tools the model was
// given, and the agent loop the request continues. Its byte slices borrow
// the body, which must stay unchanged while they are used.
type Inspection struct {
	// Tools are the request's function tools, in order: "tools" entries of
	// type function, then legacy "functions".
	Tools []ToolDef
	// Loop is what the messages after the last user message show.
	Loop Loop
}

// ToolDef is one function tool of a request.
type ToolDef struct {
	// Name is the function name.
	Name string
	// Parameters is the raw JSON Schema of the arguments, nil when the
	// tool declares none (it then accepts any arguments).
	Parameters []byte
}

// Loop is the current iteration of the agent loop a request continues:
// the assistant tool calls and the tool results in the messages after the
// last user message (specs/004 §7.3.1: called_tools and the events of the
// current loop, not the history before it). A request without a user
// message is one loop from its first message.
type Loop struct {
	// Calls are the assistant messages' tool calls, in order.
	Calls []LoopCall
	// Results are the tool messages, in order.
	Results []LoopResult
}

// LoopCall is one tool call an assistant message made.
type LoopCall struct {
	// ID is the call's id ("" for a legacy function_call).
	ID string
	// Name is the function called.
	Name string
}

// LoopResult is one tool message: role "tool" (answering a call by its
// tool_call_id), or the legacy role "function" (naming its function).
type LoopResult struct {
	// CallID is the tool_call_id, "" when there is none.
	CallID string
	// Name is the function whose result this is: the name of the call
	// CallID answers, else the message's own "name", else "".
	Name string
	// Content is the raw JSON value of "content" (a string, an array of
	// content parts, or null); nil when absent. Borrowed.
	Content []byte
	// Message is the whole raw message object. Borrowed.
	Message []byte
}

// ErrNotChatRequest is returned by Inspect for a body that is not a JSON
// object with a "messages" array.
var ErrNotChatRequest = errors.New("request: not a chat-completions request")

// Inspect reads body, a chat-completions request (the body Rewrite made),
// for the checks of its reply. It validates body first: the scanner skips
// values by their delimiters and relies on a well-formed document.
func Inspect(body []byte) (Inspection, error) {
	if !json.Valid(body) {
		return Inspection{}, ErrNotChatRequest
	}
	d := jsonDoc(body)
	root := d.root()
	msgs := d.member(root, "messages")
	if d.kind(root) != '{' || d.kind(msgs) != '[' {
		return Inspection{}, ErrNotChatRequest
	}
	var in Inspection
	d.elements(d.member(root, "tools"), func(t span) bool {
		if typ := d.member(t, "type"); typ.exists() && !d.stringIs(typ, "function") {
			return true // a hosted or custom tool has no function schema
		}
		in.Tools = appendToolDef(in.Tools, d, d.member(t, "function"))
		return true
	})
	d.elements(d.member(root, "functions"), func(f span) bool {
		in.Tools = appendToolDef(in.Tools, d, f)
		return true
	})
	in.Loop = readLoop(d, msgs)
	return in, nil
}

// appendToolDef appends the function object fn, when it has a name.
func appendToolDef(defs []ToolDef, d jsonDoc, fn span) []ToolDef {
	name := d.memberStr(fn, "name")
	if name == "" {
		return defs
	}
	def := ToolDef{Name: name}
	if p := d.member(fn, "parameters"); p.exists() && d.kind(p) != 'n' {
		def.Parameters = d[p.start:p.end]
	}
	return append(defs, def)
}

// readLoop reads the messages after the last user message.
func readLoop(d jsonDoc, msgs span) Loop {
	var all []span
	last := -1
	d.elements(msgs, func(m span) bool {
		if d.stringIs(d.member(m, "role"), "user") {
			last = len(all)
		}
		all = append(all, m)
		return true
	})
	var l Loop
	for _, m := range all[last+1:] {
		role := d.member(m, "role")
		switch {
		case d.stringIs(role, "assistant"):
			d.elements(d.member(m, "tool_calls"), func(c span) bool {
				l.Calls = append(l.Calls, LoopCall{
					ID:   d.memberStr(c, "id"),
					Name: d.memberStr(d.member(c, "function"), "name"),
				})
				return true
			})
			if fc := d.member(m, "function_call"); d.kind(fc) == '{' {
				l.Calls = append(l.Calls, LoopCall{Name: d.memberStr(fc, "name")})
			}
		case d.stringIs(role, "tool"), d.stringIs(role, "function"):
			r := LoopResult{CallID: d.memberStr(m, "tool_call_id"), Message: d[m.start:m.end]}
			if c := d.member(m, "content"); c.exists() {
				r.Content = d[c.start:c.end]
			}
			r.Name = l.callName(r.CallID)
			if r.Name == "" {
				r.Name = d.memberStr(m, "name")
			}
			l.Results = append(l.Results, r)
		}
	}
	return l
}

// callName returns the name of the call with id, "" if none has it.
func (l *Loop) callName(id string) string {
	if id == "" {
		return ""
	}
	for _, c := range l.Calls {
		if c.ID == id {
			return c.Name
		}
	}
	return ""
}

// trimmed returns d without its surrounding whitespace.
func (d jsonDoc) trimmed() jsonDoc {
	i, j := d.skipSpace(0), len(d)
	for j > i && isSpace(d[j-1]) {
		j--
	}
	return d[i:j]
}

// Text returns the text of the result's content: a string's value, or the
// text parts of an array joined by newlines; "" for anything else.
func (r LoopResult) Text() string {
	d := jsonDoc(r.Content)
	if len(d.trimmed()) == 0 {
		return ""
	}
	v := d.root()
	switch d.kind(v) {
	case '"':
		return d.str(v)
	case '[':
		var b strings.Builder
		d.elements(v, func(part span) bool {
			if t := d.member(part, "text"); d.kind(t) == '"' {
				if b.Len() > 0 {
					b.WriteByte('\n')
				}
				b.WriteString(d.str(t))
			}
			return true
		})
		return b.String()
	}
	return ""
}
