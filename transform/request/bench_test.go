package request

import (
	"strconv"
	"strings"
	"testing"
)

// openaiBody returns a chat-completions body with n turns of about 1 KB.
func openaiBody(n int) []byte {
	var b strings.Builder
	b.WriteString(`{"model":"gpt-4o","temperature":0.7,"messages":[{"role":"system","content":"client prompt"}`)
	text := strings.Repeat("Lorem ipsum dolor sit amet, \u00e9\u4f60 \\\"q\\\" ", 20)
	for i := range n {
		b.WriteString(`,{"role":"user","content":"` + text + strconv.Itoa(i) + `"},{"role":"assistant","content":"` + text + `"}`)
	}
	b.WriteString(`],"tools":[{"type":"function","function":{"name":"ask_user","parameters":{}}},{"type":"function","function":{"name":"calc"}}],"stream":false}`)
	return []byte(b.String())
}

func BenchmarkRewrite(b *testing.B) {
	tools := [][]byte{[]byte(askUser), []byte(search)}
	benches := []struct {
		name   string
		shaper Shaper
		body   []byte
	}{
		{"openai_small", Shaper{Tools: tools, Model: "m"}, openaiBody(1)},
		{"openai_100_turns", Shaper{Tools: tools, Model: "m", Mode: ModeReplace}, openaiBody(100)},
		{"aisdk", Shaper{Format: AISDK, Tools: tools, Model: "m"}, []byte(
			`{"id":"c","messages":[{"id":"1","role":"user","parts":[{"type":"text","text":"Hello there"}]},` +
				`{"id":"2","role":"assistant","parts":[{"type":"step-start"},{"type":"reasoning","text":"r"},{"type":"text","text":"Hi! How can I help?"}]},` +
				`{"id":"3","role":"user","parts":[{"type":"text","text":"What is this?"},{"type":"file","mediaType":"image/png","url":"https://x/a.png"}]}],` +
				`"trigger":"submit-message"}`)},
		{"skillpet", Shaper{Format: Skillpet, Tools: tools, Model: "m"}, []byte(
			`{"projectId":"p1","message":"帮我写一个故事","enableThinking":true,"enableSearch":false,"conversationId":"conv_1"}`)},
	}
	prompt := strings.Repeat("You are a helpful assistant. ", 40)
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			b.SetBytes(int64(len(bb.body)))
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := bb.shaper.Rewrite(bb.body, prompt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
