package upstream

import (
	"testing"

	"github.com/llmstream/llmstream/transform"
)

// BenchmarkChunkDecoder decodes realistic chat.completion.chunk payloads.
func BenchmarkChunkDecoder(b *testing.B) {
	const head = `{"id":"chatcmpl-AbC123","object":"chat.completion.chunk","created":1735689600,"model":"gpt-4o-2024-08-06","system_fingerprint":"fp_50cad350e4","choices":[{"index":0,"delta":`
	const tail = `,"logprobs":null,"finish_reason":null}],"usage":null}`
	benches := []struct {
		name, delta string
	}{
		{"content", `{"content":" the answer is"}`},
		{"escapes", `{"content":"\n\n- \"item\" \u00e9 caf\u00e9\t\ud83d\ude00 \\path"}`},
		{"non-ASCII", `{"content":"天空呈蓝色，是因为瑞利散射。"}`},
		{"reasoning", `{"content":null,"reasoning_content":"Let me think about\nthis","reasoning":"Let me think about\nthis"}`},
		{"tool call start", `{"tool_calls":[{"index":0,"id":"call_Xk9","type":"function","function":{"name":"get_weather","arguments":""}}]}`},
		{"tool call arguments", `{"tool_calls":[{"index":0,"function":{"arguments":"{\"location\": \"Paris"}}]}`},
	}
	for _, bb := range benches {
		b.Run(bb.name, func(b *testing.B) {
			data := []byte(head + bb.delta + tail)
			var d ChunkDecoder
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := d.Decode(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkToolCalls assembles one call from 1000 argument fragments.
func BenchmarkToolCalls(b *testing.B) {
	first := td(0, "call_1", "search", `{"q":[`)
	frag := ToolCallDelta{Index: 0, HasIndex: true, Arguments: []byte(`"abc",`)}
	var tc ToolCalls
	n := 0
	emit := func(ev transform.Event) { n += len(ev.Text) }
	b.SetBytes(int64(len(first.Arguments) + 1000*len(frag.Arguments)))
	b.ReportAllocs()
	for b.Loop() {
		tc.Reset()
		if err := tc.Add(first, emit); err != nil {
			b.Fatal(err)
		}
		for range 1000 {
			if err := tc.Add(frag, emit); err != nil {
				b.Fatal(err)
			}
		}
		tc.Finish(emit)
	}
}
