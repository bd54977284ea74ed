package request

import "github.com/llmstream/llmstream/transform/jsonout"

// SkillpetFacts is what the skillpet request body (specs/002 §2.3) tells
// the skillpet encoder: request_format skillpet puts it in Info.Facts, the
// handler in transform.Meta.Request. A stream without one (another request
// format) ends with the message_id as its conversationId and shows
// reasoning. The type is here, beside the body's converter, so that the
// skillpet protocol imports request shaping and not the other way round.
type SkillpetFacts struct {
	// ConversationID is done.conversationId: the body's conversationId,
	// else its projectId.
	ConversationID string
	// NoThinking is set unless enableThinking is true (specs/002 §3.2:
	// thinking is sent only when enableThinking is true); it suppresses
	// every thinking event.
	NoThinking bool
	// Search is enableSearch: true, which offers the route's search tools
	// (CONTRACT.md §13).
	Search bool
}

// convertSkillpet turns a skillpet POST /stream body (specs/002 §2.3:
// projectId and message required; enableThinking, enableSearch,
// attachments, conversationId optional) into an OpenAI request with one
// user message (CONTRACT.md §3, request_format skillpet); the openai rules
// apply to it next. enableThinking, unless true, turns reasoning off
// (specs/002 §3.2); enableSearch has no OpenAI counterpart: it offers the
// route's search tools (CONTRACT.md §13). Its Facts are a SkillpetFacts.
func convertSkillpet(body []byte) ([]byte, Info, *Error) {
	d, root, e := parseObject(body, missingParams)
	if e != nil {
		return nil, Info{}, e
	}
	// specs/002 §8 checks the parameters as JavaScript truthiness; a
	// non-string projectId or message is refused too, since neither can
	// become a conversation id or a message text unambiguously.
	projectID := d.memberStr(root, "projectId")
	if projectID == "" {
		return nil, Info{}, missingParams("", "projectId is required")
	}
	msg := d.member(root, "message")
	if d.kind(msg) != '"' || msg.end-msg.start == 2 {
		return nil, Info{}, missingParams("", "message is required")
	}

	mid := make([]byte, 0, len(d)+64)
	mid = append(mid, `{"messages":[{"role":"user","content":`...)
	mid = appendSkillpetContent(mid, d, msg, d.member(root, "attachments"))
	mid = append(mid, "}]}"...)

	req := SkillpetFacts{
		ConversationID: d.memberStr(root, "conversationId"),
		NoThinking:     d.kind(d.member(root, "enableThinking")) != 't',
		Search:         d.kind(d.member(root, "enableSearch")) == 't',
	}
	if req.ConversationID == "" {
		req.ConversationID = projectID
	}
	return mid, Info{Stream: true, Facts: req}, nil
}

// appendSkillpetContent appends the user message's content: the message
// text, then the attachments (each {id, name, size, type, url,
// processedData?}). An attachment whose type is image/* with a url becomes
// an image_url part, making the content an array. Any other attachment
// cannot be shown to an OpenAI model, so it is named in the text instead,
// on a line "- name (type): url" under "Attachments:", for the model to
// know it exists. processedData is not forwarded: its shape is the
// backend's own (specs/002 §2.3 leaves it open).
func appendSkillpetContent(dst []byte, d jsonDoc, msg, attachments span) []byte {
	images := 0
	var notes []byte // the "Attachments:" lines, unescaped
	d.elements(attachments, func(a span) bool {
		typ, u := d.memberStr(a, "type"), d.memberStr(a, "url")
		if isImage(typ) && u != "" {
			images++
			return true
		}
		name := d.memberStr(a, "name")
		if name == "" && u == "" {
			return true
		}
		if notes == nil {
			notes = append(notes, "\n\nAttachments:"...)
		}
		if name == "" {
			name = "attachment"
		}
		notes = append(notes, "\n- "...)
		notes = append(notes, name...)
		if typ != "" {
			notes = append(notes, " ("...)
			notes = append(notes, typ...)
			notes = append(notes, ')')
		}
		if u != "" {
			notes = append(notes, ": "...)
			notes = append(notes, u...)
		}
		return true
	})
	if images > 0 {
		dst = append(dst, `[{"type":"text","text":`...)
	}
	// One string literal: the client's message as it sent it, escapes and
	// all, then the notes escaped.
	dst = append(dst, d[msg.start:msg.end-1]...)
	if notes != nil {
		mark := len(dst)
		dst = jsonout.AppendString(dst, notes)
		dst = append(dst[:mark], dst[mark+1:]...) // drop the notes' opening quote
	} else {
		dst = append(dst, '"')
	}
	if images == 0 {
		return dst
	}
	dst = append(dst, '}')
	d.elements(attachments, func(a span) bool {
		if u := d.member(a, "url"); isImage(d.memberStr(a, "type")) && d.kind(u) == '"' && u.end-u.start > 2 {
			dst = append(dst, ',')
			dst = appendImagePart(dst, d[u.start:u.end])
		}
		return true
	})
	return append(dst, ']')
}
