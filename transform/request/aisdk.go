package request

import (
	"strings"
)

// convertAISDK turns what the AI SDK's useChat (DefaultChatTransport)
// posts, {id, messages: UIMessage[], trigger, messageId?}, into an OpenAI
// request (CONTRACT.md §3, request_format aisdk); the openai rules apply to
// it next. Only the messages are read: id, trigger and messageId concern
// the client's own state, and members a custom transport adds to the body
// are not forwarded, because the route, not the page, decides what reaches
// the upstream.
func convertAISDK(body []byte) ([]byte, Info, *Error) {
	d, root, e := parseObject(body, badRequest)
	if e != nil {
		return nil, Info{}, e
	}
	msgs := d.member(root, "messages")
	if !msgs.exists() {
		return nil, Info{}, badRequest(CodeMissingMessages, `request body has no "messages" array`)
	}
	if d.kind(msgs) != '[' {
		return nil, Info{}, badRequest(CodeInvalidMessages, `"messages" must be an array, got `+d.typeName(msgs))
	}

	mid := make([]byte, 0, len(d)+32)
	mid = append(mid, `{"messages":[`...)
	n := 0
	d.elements(msgs, func(m span) bool {
		mark := len(mid)
		if n > 0 {
			mid = append(mid, ',')
		}
		var ok bool
		if mid, ok = appendUIMessage(mid, d, m); ok {
			n++
		} else {
			mid = mid[:mark]
		}
		return true
	})
	mid = append(mid, "]}"...)
	approvals, cont := aisdkApprovals(d, msgs)
	return mid, Info{Stream: true, Approvals: approvals, ContinueMessage: cont}, nil
}

// The UI message parts that become OpenAI content.
const (
	partNone = iota
	partText
	partImage
)

// uiPart classifies UI message part p and returns the JSON string that
// carries its content: the text of a non-empty text part, the url of an
// image file part. Empty text parts (a stream cut before its first delta)
// carry nothing and would only split the content.
func uiPart(d jsonDoc, p span) (int, span) {
	t := d.member(p, "type")
	switch {
	case d.stringIs(t, "text"):
		if v := d.member(p, "text"); d.kind(v) == '"' && v.end-v.start > 2 {
			return partText, v
		}
	case d.stringIs(t, "file"):
		if v := d.member(p, "url"); d.kind(v) == '"' && v.end-v.start > 2 && isImage(d.memberStr(p, "mediaType")) {
			return partImage, v
		}
	}
	return partNone, span{}
}

// appendUIMessage appends the OpenAI message for AI SDK UIMessage m {id,
// role, parts} (or, without parts, {role, content}) and reports whether
// there was one. The role is kept (system,
// user or assistant; a message with any other role is dropped). Text parts
// become the content; file parts whose media type is image/* become
// image_url parts; every other part (reasoning, data-*, source-*,
// step-start, other files, tool parts whose call is not over) is dropped,
// because an OpenAI message has no place for it. A message left with no
// content is dropped. An assistant message with tool parts whose call is
// over becomes the assistant and tool messages of its steps instead
// (appendAssistantSteps).
//
// With text only, the content is one string: the text parts joined with no
// separator, as the AI SDK's own OpenAI provider joins an assistant
// message's text parts. With an image, the content is an array of text and
// image_url parts in the message's order, adjacent text parts joined.
func appendUIMessage(dst []byte, d jsonDoc, m span) ([]byte, bool) {
	role := d.member(m, "role")
	var roleName string
	for _, r := range [...]string{"system", "user", "assistant"} {
		if d.stringIs(role, r) {
			roleName = r
		}
	}
	if roleName == "" {
		return dst, false
	}
	parts := d.member(m, "parts")
	if d.kind(parts) != '[' {
		// A message without parts, as AI SDK 4's useChat and hand-written
		// clients send it: its content string is the text (CONTRACT §7), so
		// that the upstream still sees the turn.
		c := d.member(m, "content")
		if d.kind(c) != '"' || c.end-c.start == 2 {
			return dst, false
		}
		dst = append(dst, `{"role":"`...)
		dst = append(dst, roleName...)
		dst = append(dst, `","content":`...)
		dst = append(dst, d[c.start:c.end]...)
		return append(dst, '}'), true
	}
	if roleName == "assistant" && hasFinishedToolPart(d, parts) {
		// Tool calls whose outcome the page has (aisdk_tools.go).
		return appendAssistantSteps(dst, d, parts)
	}
	texts, images := 0, 0
	d.elements(parts, func(p span) bool {
		switch k, _ := uiPart(d, p); k {
		case partText:
			texts++
		case partImage:
			images++
		}
		return true
	})
	if texts+images == 0 {
		return dst, false
	}
	dst = append(dst, `{"role":"`...)
	dst = append(dst, roleName...)
	dst = append(dst, `","content":`...)
	if images == 0 {
		dst = append(dst, '"')
		d.elements(parts, func(p span) bool {
			if k, v := uiPart(d, p); k == partText {
				dst = appendStringBody(dst, d, v)
			}
			return true
		})
		return append(dst, `"}`...), true
	}
	dst = append(dst, '[')
	prev := partNone
	d.elements(parts, func(p span) bool {
		k, v := uiPart(d, p)
		switch {
		case k == partNone:
			return true
		case k == partText && prev == partText:
			// Join into the open text part.
			dst = appendStringBody(dst, d, v)
			return true
		}
		if prev == partText {
			dst = append(dst, `"}`...)
		}
		if prev != partNone {
			dst = append(dst, ',')
		}
		if k == partText {
			dst = append(dst, `{"type":"text","text":"`...)
			dst = appendStringBody(dst, d, v)
		} else {
			dst = appendImagePart(dst, d[v.start:v.end])
		}
		prev = k
		return true
	})
	if prev == partText {
		dst = append(dst, `"}`...)
	}
	return append(dst, "]}"...), true
}

// appendStringBody appends the inside of JSON string v, without its quotes.
// A string literal's inside is a valid string body whose escapes end within
// it, so bodies concatenate into one string without decoding: the client's
// bytes, escapes included, pass through unchanged.
func appendStringBody(dst []byte, d jsonDoc, v span) []byte {
	return append(dst, d[v.start+1:v.end-1]...)
}

// appendImagePart appends an image_url content part for rawURL, a JSON
// string literal copied as it is.
func appendImagePart(dst []byte, rawURL []byte) []byte {
	dst = append(dst, `{"type":"image_url","image_url":{"url":`...)
	dst = append(dst, rawURL...)
	return append(dst, "}}"...)
}

// isImage reports whether mediaType is an image type. Media types are
// case-insensitive (RFC 2045 §5.1).
func isImage(mediaType string) bool {
	return len(mediaType) > len("image/") && strings.EqualFold(mediaType[:len("image/")], "image/")
}
