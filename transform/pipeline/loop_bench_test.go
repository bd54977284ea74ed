package pipeline

import (
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/request"
)

// loopRoundBody is the upstream SSE body of a round that calls
// get_weather: a sentence, then the call, its arguments in three deltas.
var loopRoundBody = []byte(sseBody(append(append([]string{content("Let me check the weather there first.")},
	nativeCall("call_1", "get_weather", `{"city":"Paris","unit":"c"}`)...), "finish:tool_calls",
	`usage:{"prompt_tokens":310,"completion_tokens":24,"total_tokens":334}`)...))

// loopAnswerBody is the upstream SSE body of the round that answers.
var loopAnswerBody = []byte(sseBody(content("It is 18°C and sunny in Paris, a good day for a walk along the Seine."), "finish:stop",
	`usage:{"prompt_tokens":420,"completion_tokens":21,"total_tokens":441}`))

// loopRequest is a chat request of the size a client sends with the
// server's tools added: a system prompt, a user message, four tools.
func loopRequest() []byte {
	var b strings.Builder
	b.WriteString(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[`)
	b.WriteString(`{"role":"system","content":"` + strings.Repeat("You are a helpful assistant. ", 20) + `"},`)
	b.WriteString(`{"role":"user","content":"What is the weather in Paris, and should I walk?"}],"tools":[`)
	for i, name := range []string{"get_weather", "search_knowledge", "always_fail", "sleep"} {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`{"type":"function","function":{"name":"` + name + `","description":"` + strings.Repeat("A demo tool. ", 8) +
			`","parameters":{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}}}`)
	}
	b.WriteString(`]}`)
	return []byte(b.String())
}

// loopResult is the result of get_weather as the server gives it.
var loopResult = agent.Result{Parts: []agent.Part{{Kind: agent.PartText, Text: "Paris: 18°C, sunny, humidity 48% (demo data)"}}}

// BenchmarkLoopRound measures what a round of the agent loop costs the
// pipeline (CONTRACT.md §12), per protocol, one op being one round. In
// "round", a turn of rounds rounds: each but the last streams a reply
// that calls a server tool, then the loop's work, and the last answers;
// ns/round and allocs/op (divided by rounds: allocs/round) cover it all,
// decoding and encoding included. In "loop", only the turn loop's own
// work between two replies: the call's start and result (RunTool,
// ToolResult, what the client sees of them), Next, the round's messages
// (AppendRoundMessages), the next request (request.AppendMessages) and
// NextRound; the replies are streamed with the timer stopped.
func BenchmarkLoopRound(b *testing.B) {
	const rounds = 4
	body := loopRequest()
	for _, proto := range protocol.Protocols() {
		for _, part := range []string{"round", "loop"} {
			b.Run(proto.Name+"/"+part, func(b *testing.B) {
				p, err := New(Config{Format: format.Text})
				if err != nil {
					b.Fatal(err)
				}
				meta := transform.Meta{MessageID: "msg_bench", RequestID: "req_bench", Stream: true, Created: time.Unix(1, 0)}
				loop := demoLoop(8)
				loop.MaxResultBytes = agent.DefaultMaxResultBytes
				out := make([]byte, 0, 64<<10)
				var msgs, cur, spare []byte // the round's messages; this request and the next
				feed := func(upstream []byte) {
					if part == "loop" {
						b.StopTimer()
						defer b.StartTimer()
					}
					out = p.Start(out[:0], "text/event-stream", "up")
					out = p.Feed(out[:0], upstream)
					out = p.Close(out[:0])
				}
				b.ReportAllocs()
				b.ResetTimer()
				for done := 0; done < b.N; done += rounds {
					if part == "loop" {
						b.StopTimer()
					}
					p.Reset(proto.NewEncoder(meta), meta)
					p.SetLoop(loop)
					cur = append(cur[:0], body...)
					if part == "loop" {
						b.StartTimer()
					}
					for range rounds - 1 {
						feed(loopRoundBody)
						if !p.ToolsPending() {
							b.Fatalf("%s: the round's call is not pending", proto.Name)
						}
						out = p.RunTool(out[:0], 0)
						out = p.ToolResult(out[:0], 0, loopResult)
						if p.Next() != agent.StepNextRound {
							b.Fatal("the loop did not go on")
						}
						msgs = p.AppendRoundMessages(msgs[:0])
						spare, err = request.AppendMessages(spare[:0], cur, msgs)
						if err != nil {
							b.Fatal(err)
						}
						cur, spare = spare, cur
						out = p.NextRound(out[:0], false)
					}
					feed(loopAnswerBody)
					if !p.Ended() || p.Failed() {
						b.Fatalf("%s: the turn did not end: %+v", proto.Name, p.Summary())
					}
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N), "ns/round")
			})
		}
	}
}
