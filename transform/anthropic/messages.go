package anthropic

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/llmstream/llmstream/transform/chatmsg"

	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// messageWriter appends the OpenAI messages of a Messages API conversation
// to c.out, inside the messages array.
type messageWriter struct {
	c *converter
	n int // messages written
	// tools are the request's tools, for the tool_reference blocks that
	// name them.
	tools []wireTool
	// owed are the ids of the mcp_tool_use calls written whose result has
	// not been (mcp_messages.go).
	owed []string
}

// wireMessage is one element of messages: {role, content}.
type wireMessage struct {
	Role    string          `json:"role"`
	Content json.RawMessage `json:"content"`
}

// block is a content block, with the fields of every type this converter
// reads; the type says which are set. cache_control, citations and the
// like are not read: they have no chat-completions counterpart.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	Source    *source         `json:"source"`
	Title     string          `json:"title"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	ToolName  string          `json:"tool_name"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// source is an image or document block's source.
type source struct {
	Type      string          `json:"type"`
	MediaType string          `json:"media_type"`
	Data      json.RawMessage `json:"data"`
	URL       string          `json:"url"`
	Content   json.RawMessage `json:"content"`
}

// part is a piece of a user message's OpenAI content: text, or an
// image_url or file part already encoded.
type part struct {
	text    string
	encoded []byte
}

// system writes the top-level system prompt, a string or text blocks, as
// the first system message.
func (w *messageWriter) system(raw json.RawMessage) *request.Error {
	if raw = present(raw); raw == nil {
		return nil
	}
	text, e := w.systemText("system", raw)
	if e != nil {
		return e
	}
	w.systemMessage(text)
	return nil
}

// systemText reads a system prompt: a string, or text blocks joined by a
// blank line (one system message: many chat templates accept no other
// system message than the first).
func (w *messageWriter) systemText(path string, raw json.RawMessage) (string, *request.Error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, nil
	}
	blocks, e := decodeBlocks(path, raw)
	if e != nil {
		return "", e
	}
	texts := make([]string, 0, len(blocks))
	for i, b := range blocks {
		if b.Type != "text" {
			return "", unsupported(path + "." + strconv.Itoa(i) + ": a system prompt holds text blocks only, got " + strconv.Quote(b.Type))
		}
		texts = append(texts, b.Text)
	}
	return strings.Join(texts, "\n\n"), nil
}

// systemMessage writes {"role":"system","content":text}.
func (w *messageWriter) systemMessage(text string) {
	w.open("system")
	w.c.out = jsonout.AppendStringS(w.c.out, text)
	w.c.out = append(w.c.out, '}')
}

// next separates the next message from the one before.
func (w *messageWriter) next() {
	if w.n > 0 {
		w.c.out = append(w.c.out, ',')
	}
	w.n++
}

// open starts a message with role, up to its content's value.
func (w *messageWriter) open(role string) {
	w.next()
	w.c.out = append(w.c.out, `{"role":"`...)
	w.c.out = append(w.c.out, role...)
	w.c.out = append(w.c.out, `","content":`...)
}

// message writes message i of the conversation.
func (w *messageWriter) message(i int, raw json.RawMessage) *request.Error {
	path := "messages." + strconv.Itoa(i)
	var m wireMessage
	if json.Unmarshal(raw, &m) != nil {
		return invalid(path + ": must be an object with role and content")
	}
	content := present(m.Content)
	if content == nil {
		return invalid(path + ".content: field required")
	}
	switch m.Role {
	case "user":
		return w.user(path+".content", content)
	case "assistant":
		return w.assistant(path+".content", content)
	case "system":
		text, e := w.systemText(path+".content", content)
		if e == nil {
			w.settle()
			w.systemMessage(text)
		}
		return e
	}
	return invalid(path + ".role: must be user, assistant or system, got " + strconv.Quote(m.Role))
}

// user writes a user message. Its tool_result blocks become tool messages
// first, as chat completions wants them right after the assistant's tool
// calls; the rest (text, images, documents, and the images tool results
// returned, which a tool message cannot carry) becomes one user message:
// a string for a lone text block, else an array of content parts in order.
func (w *messageWriter) user(path string, raw json.RawMessage) *request.Error {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		w.settle()
		w.open("user")
		w.c.out = jsonout.AppendStringS(w.c.out, s)
		w.c.out = append(w.c.out, '}')
		return nil
	}
	blocks, e := decodeBlocks(path, raw)
	if e != nil {
		return e
	}
	var parts []part
	for i, b := range blocks {
		bpath := path + "." + strconv.Itoa(i)
		switch b.Type {
		case "tool_result", "mcp_tool_result":
			if b.Type == "mcp_tool_result" && !w.pay(b.ToolUseID) {
				continue // answers no call: a tool message would be refused
			}
			images, e := w.toolResult(bpath, b)
			if e != nil {
				return e
			}
			parts = append(parts, images...)
		case "text":
			parts = append(parts, part{text: b.Text})
		case "image":
			p, e := imagePart(bpath, b.Source)
			if e != nil {
				return e
			}
			parts = append(parts, p)
		case "document":
			p, e := documentPart(bpath, b)
			if e != nil {
				return e
			}
			parts = append(parts, p)
		default:
			return unknownBlock(bpath, b.Type, "a user message")
		}
	}
	w.settle()
	if len(parts) == 0 {
		return nil
	}
	w.open("user")
	if len(parts) == 1 && parts[0].encoded == nil {
		w.c.out = jsonout.AppendStringS(w.c.out, parts[0].text)
		w.c.out = append(w.c.out, '}')
		return nil
	}
	w.c.out = append(w.c.out, '[')
	for i, p := range parts {
		if i > 0 {
			w.c.out = append(w.c.out, ',')
		}
		if p.encoded != nil {
			w.c.out = append(w.c.out, p.encoded...)
			continue
		}
		w.c.out = append(w.c.out, `{"type":"text","text":`...)
		w.c.out = jsonout.AppendStringS(w.c.out, p.text)
		w.c.out = append(w.c.out, '}')
	}
	w.c.out = append(w.c.out, "]}"...)
	return nil
}

// toolResult writes a tool_result block as a tool message whose content is
// its text blocks joined by a blank line, after "Error: " when is_error is
// set (chat completions has no error flag, and the model must know the
// call failed). The images it holds are returned, for the user message
// that follows: OpenAI tool messages carry text only.
func (w *messageWriter) toolResult(path string, b block) ([]part, *request.Error) {
	var text string
	var images []part
	if content := present(b.Content); content != nil {
		if json.Unmarshal(content, &text) != nil {
			blocks, e := decodeBlocks(path+".content", content)
			if e != nil {
				return nil, e
			}
			texts := make([]string, 0, len(blocks))
			var refs []string
			for i, rb := range blocks {
				rpath := path + ".content." + strconv.Itoa(i)
				switch rb.Type {
				case "text":
					texts = append(texts, rb.Text)
				case "tool_reference":
					refs = append(refs, rb.ToolName)
				case "image":
					p, e := imagePart(rpath, rb.Source)
					if e != nil {
						return nil, e
					}
					images = append(images, p)
				case "document":
					p, e := documentPart(rpath, rb)
					if e != nil {
						return nil, e
					}
					if p.encoded != nil {
						images = append(images, p)
					} else {
						texts = append(texts, p.text)
					}
				default:
					return nil, unknownBlock(rpath, rb.Type, "a tool result")
				}
			}
			if refs != nil {
				texts = append(texts, w.toolReferences(refs))
			}
			text = strings.Join(texts, "\n\n")
		}
	}
	if b.IsError {
		text = "Error: " + text
	}
	w.next()
	w.c.out = chatmsg.AppendTool(w.c.out, b.ToolUseID, text)
	return images, nil
}

// toolReferences renders the tools that tool_reference blocks name (what
// Claude Code's ToolSearch returns to load a deferred tool) as text, the
// way Claude Code itself rewrites them for models that cannot read
// references: <functions> with a <function> holding each tool's
// {description, name, parameters}. A name the request's tools lack is
// rendered with its name alone.
func (w *messageWriter) toolReferences(names []string) string {
	out := []byte("<functions>")
	for _, name := range names {
		out = append(out, "\n<function>"...)
		i := slices.IndexFunc(w.tools, func(t wireTool) bool { return t.Name == name })
		if i < 0 {
			out = append(out, `{"name":`...)
			out = jsonout.AppendStringS(out, name)
		} else {
			t := w.tools[i]
			out = append(out, `{"description":`...)
			out = jsonout.AppendStringS(out, t.Description)
			out = append(out, `,"name":`...)
			out = jsonout.AppendStringS(out, name)
			out = append(out, `,"parameters":`...)
			out = jsonout.AppendOrString(out, t.InputSchema)
		}
		out = append(out, "}</function>"...)
	}
	return string(append(out, "\n</functions>"...))
}

// assistant writes an assistant message: its text blocks joined by a blank
// line as the content (null when there is none but tool calls), its
// tool_use blocks as tool_calls whose arguments are the input as a JSON
// string. thinking and redacted_thinking blocks are dropped: their
// signatures mean nothing to another model, and chat templates (and
// DeepSeek's API) want earlier reasoning left out. A message left with
// nothing is dropped.
func (w *messageWriter) assistant(path string, raw json.RawMessage) *request.Error {
	w.settle()
	var s string
	if json.Unmarshal(raw, &s) == nil {
		w.next()
		w.c.out = chatmsg.AppendAssistant(w.c.out, s, nil)
		return nil
	}
	blocks, e := decodeBlocks(path, raw)
	if e != nil {
		return e
	}
	for i, b := range blocks {
		bpath := path + "." + strconv.Itoa(i)
		switch b.Type {
		case "text", "thinking", "redacted_thinking", "mcp_tool_result":
		case "tool_use", "mcp_tool_use":
			if in := present(b.Input); in != nil && in[0] != '{' {
				return invalid(bpath + ".input: must be an object")
			}
		default:
			return unknownBlock(bpath, b.Type, "an assistant message")
		}
	}
	w.assistantSteps(blocks)
	return nil
}

// toolCalls returns the tool calls of tool_use or mcp_tool_use blocks,
// their arguments the input as a JSON string.
func toolCalls(calls []block) []chatmsg.ToolCall {
	tcs := make([]chatmsg.ToolCall, len(calls))
	var args bytes.Buffer
	for i, b := range calls {
		args.Reset()
		if in := present(b.Input); in == nil || json.Compact(&args, in) != nil {
			args.Reset()
			args.WriteString("{}")
		}
		tcs[i] = chatmsg.ToolCall{ID: b.ID, Name: b.Name, Arguments: args.String()}
	}
	return tcs
}

// knownBlocks are the block types this converter reads; the fields of
// any other type are not decoded (their shapes differ: a search_result's
// source is a string), so that it gets the error naming its type.
var knownBlocks = map[string]bool{
	"text": true, "image": true, "document": true, "tool_use": true, "tool_result": true,
	"tool_reference": true, "thinking": true, "redacted_thinking": true,
	"mcp_tool_use": true, "mcp_tool_result": true,
}

// decodeBlocks decodes an array of content blocks.
func decodeBlocks(path string, raw json.RawMessage) ([]block, *request.Error) {
	var raws []json.RawMessage
	if err := json.Unmarshal(raw, &raws); err != nil {
		return nil, invalid(path + ": must be a string or an array of content blocks")
	}
	blocks := make([]block, len(raws))
	for i, r := range raws {
		var typ struct {
			Type string `json:"type"`
		}
		if err := json.Unmarshal(r, &typ); err != nil {
			return nil, invalid(path + "." + strconv.Itoa(i) + ": must be a content block object with a type")
		}
		if !knownBlocks[typ.Type] {
			blocks[i].Type = typ.Type
			continue
		}
		if err := json.Unmarshal(r, &blocks[i]); err != nil {
			return nil, invalid(path + "." + strconv.Itoa(i) + ": invalid " + typ.Type + " block (" + err.Error() + ")")
		}
	}
	return blocks, nil
}

// imagePart encodes an image block's source as an image_url part: a
// base64 source as a data: URL, a url source as the URL. Files API sources
// live on Anthropic's servers, out of the upstream's reach.
func imagePart(path string, src *source) (part, *request.Error) {
	if src == nil {
		return part{}, invalid(path + ".source: field required")
	}
	p := []byte(`{"type":"image_url","image_url":{"url":`)
	switch src.Type {
	case "base64":
		if !strings.HasPrefix(src.MediaType, "image/") {
			return part{}, invalid(path + ".source.media_type: must be an image type, got " + strconv.Quote(src.MediaType))
		}
		data, ok := stringBody(src.Data)
		if !ok {
			return part{}, invalid(path + ".source.data: must be a base64 string")
		}
		p = appendDataURL(p, src.MediaType, data)
	case "url":
		p = jsonout.AppendStringS(p, src.URL)
	default:
		return part{}, unsupportedSource(path, src.Type)
	}
	return part{encoded: append(p, "}}"...)}, nil
}

// documentPart converts a document block: a text or content source
// becomes text; a base64 PDF becomes an OpenAI file part (a data: URL in
// file_data), which vision-capable OpenAI-compatible servers read; URL and
// Files API sources are refused, since chat completions cannot fetch them.
func documentPart(path string, b block) (part, *request.Error) {
	src := b.Source
	if src == nil {
		return part{}, invalid(path + ".source: field required")
	}
	switch src.Type {
	case "text":
		var text string
		if json.Unmarshal(src.Data, &text) != nil {
			return part{}, invalid(path + ".source.data: must be a string")
		}
		return part{text: text}, nil
	case "content":
		var text string
		if json.Unmarshal(src.Content, &text) == nil {
			return part{text: text}, nil
		}
		blocks, e := decodeBlocks(path+".source.content", src.Content)
		if e != nil {
			return part{}, e
		}
		texts := make([]string, 0, len(blocks))
		for i, cb := range blocks {
			if cb.Type != "text" {
				return part{}, unsupported(path + ".source.content." + strconv.Itoa(i) + ": a document's content holds text blocks only here, got " + strconv.Quote(cb.Type))
			}
			texts = append(texts, cb.Text)
		}
		return part{text: strings.Join(texts, "\n\n")}, nil
	case "base64":
		if src.MediaType != "application/pdf" {
			return part{}, invalid(path + ".source.media_type: must be application/pdf, got " + strconv.Quote(src.MediaType))
		}
		data, ok := stringBody(src.Data)
		if !ok {
			return part{}, invalid(path + ".source.data: must be a base64 string")
		}
		name := b.Title
		if name == "" {
			name = "document.pdf"
		}
		p := []byte(`{"type":"file","file":{"filename":`)
		p = jsonout.AppendStringS(p, name)
		p = append(p, `,"file_data":`...)
		p = appendDataURL(p, src.MediaType, data)
		return part{encoded: append(p, "}}"...)}, nil
	}
	return part{}, unsupportedSource(path, src.Type)
}

// appendDataURL appends "data:<mediaType>;base64,<data>" as a JSON
// string; data is the inside of the client's JSON string, copied as it is.
func appendDataURL(dst []byte, mediaType string, data []byte) []byte {
	dst = append(dst, `"data:`...)
	dst = jsonout.AppendStringBodyS(dst, mediaType)
	dst = append(dst, ";base64,"...)
	dst = append(dst, data...)
	return append(dst, '"')
}

// stringBody returns the inside of a JSON string literal, escapes and all:
// a valid string body that can be spliced into another string. The base64
// payload is copied, never decoded.
func stringBody(raw json.RawMessage) ([]byte, bool) {
	if len(raw) < 2 || raw[0] != '"' {
		return nil, false
	}
	return raw[1 : len(raw)-1], true
}

// unsupportedSource refuses a source type chat completions cannot carry.
func unsupportedSource(path, typ string) *request.Error {
	if typ == "file" {
		return unsupported(path + ".source: Files API sources (file_id) are stored at Anthropic; send the data as base64 or a URL")
	}
	return unsupported(path + ".source.type: " + strconv.Quote(typ) + " is not supported here")
}

// unknownBlock refuses a content block type: server tool blocks
// (server_tool_use, web_search_tool_result, …) come from tools an
// OpenAI-compatible upstream does not run, and the others have no
// chat-completions counterpart.
func unknownBlock(path, typ, where string) *request.Error {
	return unsupported(path + ".type: " + strconv.Quote(typ) + " blocks are not supported in " + where +
		" (text, image, document, tool_use, tool_result, tool_reference, mcp_tool_use, mcp_tool_result and thinking are)")
}
