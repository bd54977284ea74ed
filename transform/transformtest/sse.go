package transformtest

import (
	"strings"

	"github.com/llmstream/llmstream/transform/jsonout"
)

// SSEReply builds an upstream chat-completions SSE body: reasoning as
// native reasoning_content, reply as content, then calls as native
// tool_calls, each cut into deltas of size bytes (on rune boundaries),
// with the role, finish, usage and [DONE] chunks: what a provider that
// streams reasoning and native tool calls sends, for tests that cut it
// at every size.
func SSEReply(reasoning, reply string, calls [][2]string, size int) []byte {
	var b strings.Builder
	head := `data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":`
	tail := `,"finish_reason":null}]}` + "\n\n"
	b.WriteString(head + `{"role":"assistant","content":""}` + tail)
	pieces := func(s string, each func(string)) {
		for len(s) > 0 {
			n := min(size, len(s))
			for n < len(s) && s[n]&0xC0 == 0x80 {
				n++
			}
			each(s[:n])
			s = s[n:]
		}
	}
	pieces(reasoning, func(p string) {
		b.WriteString(head + `{"reasoning_content":` + string(jsonout.AppendStringS(nil, p)) + `}` + tail)
	})
	pieces(reply, func(p string) {
		b.WriteString(head + `{"content":` + string(jsonout.AppendStringS(nil, p)) + `}` + tail)
	})
	finish := "stop"
	for i, c := range calls {
		finish = "tool_calls"
		idx := string(rune('0' + i))
		b.WriteString(head + `{"tool_calls":[{"index":` + idx + `,"id":"call_` + idx + `","type":"function","function":{"name":"` + c[0] + `","arguments":""}}]}` + tail)
		pieces(c[1], func(p string) {
			b.WriteString(head + `{"tool_calls":[{"index":` + idx + `,"function":{"arguments":` + string(jsonout.AppendStringS(nil, p)) + `}}]}` + tail)
		})
	}
	b.WriteString(head + `{},"finish_reason":"` + finish + `"}]}` + "\n\n")
	b.WriteString(`data: {"id":"c1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":7,"completion_tokens":9,"total_tokens":16}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return []byte(b.String())
}
