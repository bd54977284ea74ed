package request

import "github.com/llmstream/llmstream/transform/jsonout"

// The top-level members the openai rewrite changes, as indexes into
// touched. Their order is the order in which absent ones are appended to the
// object.
const (
	tModel = iota
	tMessages
	tTools
	tToolChoice
	tStream
	tStreamOptions
	// tN is read, never written: more than one choice is refused.
	tN
	numTouched
)

// touched names the members the rewrite may change.
var touched = [numTouched]string{
	tModel:         "model",
	tMessages:      "messages",
	tTools:         "tools",
	tToolChoice:    "tool_choice",
	tStream:        "stream",
	tStreamOptions: "stream_options",
	tN:             "n",
}

// splice applies the openai rules (CONTRACT.md §3, request_format openai)
// to the chat-completions object root of d. It copies d and replaces only the
// values of the members in touched; absent ones are appended before the
// closing brace, so the client's members keep their bytes and order.
func (s *Shaper) splice(d jsonDoc, root span, prompt, mode string) ([]byte, Info, *Error) {
	var vals [numTouched]span // the client's value of each touched member
	n := 0                    // the object's member count
	var dup string
	d.members(root, func(key, val span) bool {
		n++
		for k, name := range touched {
			if d.stringIs(key, name) {
				if vals[k].exists() {
					dup = name
					return false
				}
				vals[k] = val
			}
		}
		return true
	})
	if dup != "" {
		return nil, Info{}, badRequest(CodeDuplicateKey, `request body has more than one "`+dup+`" member`)
	}
	msgs := vals[tMessages]
	if !msgs.exists() {
		return nil, Info{}, badRequest(CodeMissingMessages, `request body has no "messages" array`)
	}
	if d.kind(msgs) != '[' {
		return nil, Info{}, badRequest(CodeInvalidMessages, `"messages" must be an array, got `+d.typeName(msgs))
	}
	if tools := vals[tTools]; len(s.Tools) > 0 && tools.exists() && d.kind(tools) != 'n' && d.kind(tools) != '[' {
		return nil, Info{}, badRequest(CodeInvalidTools, `"tools" must be an array, got `+d.typeName(tools))
	}

	// Every client protocol carries one answer, and upstream chunks of
	// several choices would interleave (CONTRACT §7): n other than 1 is
	// refused before anything goes upstream.
	if n := vals[tN]; n.exists() && d.kind(n) != 'n' && string(d[n.start:n.end]) != "1" {
		return nil, Info{}, badRequest(CodeUnsupportedN, `"n" must be 1: llmstream streams one answer per request, got `+
			string(d[n.start:min(n.end, n.start+32)]))
	}

	info := Info{Stream: d.kind(vals[tStream]) == 't', Model: s.Model,
		IncludeUsage: d.kind(d.member(vals[tStreamOptions], "include_usage")) == 't'}
	if info.Model == "" {
		info.Model = d.str(vals[tModel])
	}

	out := make([]byte, 0, len(d)+len(prompt)+toolsLen(s.Tools)+128)
	// order lists the touched members present, in document order.
	var order [numTouched]int
	m := 0
	for k, v := range vals {
		if !v.exists() {
			continue
		}
		j := m
		for ; j > 0 && vals[order[j-1]].start > v.start; j-- {
			order[j] = order[j-1]
		}
		order[j] = k
		m++
	}
	pos := 0
	for _, k := range order[:m] {
		v := vals[k]
		// The bytes up to the value (other members, this key, the colon and
		// the client's whitespace) are copied as they are.
		mark := len(out)
		out = append(out, d[pos:v.start]...)
		var changed bool
		if out, changed = s.appendValue(out, k, d, v, prompt, mode); changed {
			pos = v.end
		} else {
			out = out[:mark]
		}
	}
	// Appended members go before the whitespace that precedes the closing
	// brace, so that a pretty-printed body keeps its brace on its own line.
	closing := d.spaceBefore(pos, root.end-1)
	out = append(out, d[pos:closing]...)
	for k, name := range touched {
		if vals[k].exists() {
			continue
		}
		mark := len(out)
		if n > 0 {
			out = append(out, ',')
		}
		out = jsonout.AppendStringS(out, name)
		out = append(out, ':')
		var changed bool
		if out, changed = s.appendValue(out, k, d, span{}, prompt, mode); !changed {
			out = out[:mark]
			continue
		}
		n++
	}
	return append(out, d[closing:]...), info, nil
}

// appendValue appends the new value of touched member k; cur is the
// client's value (absent when it sent none). It reports false when the
// member is to be left as the client sent it.
func (s *Shaper) appendValue(dst []byte, k int, d jsonDoc, cur span, prompt, mode string) ([]byte, bool) {
	switch k {
	case tModel:
		if s.Model == "" {
			return dst, false
		}
		return jsonout.AppendStringS(dst, s.Model), true
	case tMessages:
		return appendMessages(dst, d, cur, prompt, mode), true
	case tTools:
		if len(s.Tools) == 0 {
			return dst, false
		}
		return appendTools(dst, d, cur, s.Tools), true
	case tToolChoice:
		if s.ToolChoice == "" {
			return dst, false
		}
		return appendToolChoice(dst, s.ToolChoice), true
	case tStream:
		return append(dst, "true"...), true
	case tStreamOptions:
		return appendStreamOptions(dst, d, cur), true
	}
	// tN stays as the client sent it, or absent.
	return dst, false
}

// appendMessages appends the messages array msgs with the system prompt
// placed by mode (CONTRACT.md §3). Kept messages are copied byte for byte
// with the whitespace before them; only the inserted message and removed
// system messages change the array. An empty prompt inserts nothing, but
// replace still removes the client's system messages: a route that replaces
// the prompt with nothing strips it.
func appendMessages(dst []byte, d jsonDoc, msgs span, prompt, mode string) []byte {
	// at is the number of client messages before the prompt: 0 for prepend
	// and replace, up to the last system message for append.
	at := 0
	if mode == ModeAppend {
		i := 0
		d.elements(msgs, func(e span) bool {
			i++
			if isSystem(d, e) {
				at = i
			}
			return true
		})
	}
	dst = append(dst, '[')
	first := true
	sep := func() {
		if !first {
			dst = append(dst, ',')
		}
		first = false
	}
	insert := func() {
		if prompt != "" {
			sep()
			dst = appendSystemMessage(dst, prompt)
		}
	}
	pos := msgs.start + 1 // just past '['
	i := 0
	d.elements(msgs, func(e span) bool {
		if i == at {
			insert()
		}
		i++
		pos = e.end
		if mode == ModeReplace && isSystem(d, e) {
			return true
		}
		sep()
		dst = append(dst, d[d.segmentStart(e.start):e.end]...)
		return true
	})
	if i == at {
		insert()
	}
	// Between the last element and ']' there is only the client's
	// whitespace.
	return append(dst, d[pos:msgs.end]...)
}

// isSystem reports whether message m is a system message: role "system",
// or "developer", which newer OpenAI clients send instead (CONTRACT §7),
// so that append and replace treat both alike.
func isSystem(d jsonDoc, m span) bool {
	role := d.member(m, "role")
	return d.stringIs(role, "system") || d.stringIs(role, "developer")
}

// appendSystemMessage appends {"role":"system","content":prompt}.
func appendSystemMessage(dst []byte, prompt string) []byte {
	dst = append(dst, `{"role":"system","content":`...)
	dst = jsonout.AppendStringS(dst, prompt)
	return append(dst, '}')
}

// appendStreamOptions appends stream_options with include_usage true, so
// that the upstream reports usage for completed.metadata (CONTRACT.md §3).
// A client object keeps its other members byte for byte; any other value
// is replaced.
func appendStreamOptions(dst []byte, d jsonDoc, cur span) []byte {
	if d.kind(cur) != '{' {
		return append(dst, `{"include_usage":true}`...)
	}
	pos := cur.start
	n, set := 0, false
	d.members(cur, func(key, val span) bool {
		n++
		if !d.stringIs(key, "include_usage") {
			return true
		}
		// Every include_usage is set, so that duplicates agree whichever
		// one the upstream's parser keeps.
		dst = append(dst, d[pos:val.start]...)
		dst = append(dst, "true"...)
		pos = val.end
		set = true
		return true
	})
	closing := d.spaceBefore(pos, cur.end-1)
	dst = append(dst, d[pos:closing]...)
	if !set {
		if n > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `"include_usage":true`...)
	}
	return append(dst, d[closing:cur.end]...)
}
