package pipeline

import (
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/transformtest"
	"github.com/llmstream/llmstream/transform/validate"
)

// FuzzValidation streams any two upstream bodies as a reply and its retry
// through a pipeline whose checks act (format auto, so that FinalResult,
// AIPlan tool calls and text all occur), whole and cut where cuts says,
// and checks the gate: no panic; the same events for both cuts; while a
// retry is due, nothing but routing, reasoning and violations reached the
// encoder; well-formed events ending in exactly one finish or error.
func FuzzValidation(f *testing.F) {
	f.Add([]byte(sseBody(content(`{"status":"artifact_ready","message":"done"}`), "finish:stop")),
		[]byte(sseBody(content(`{"status":"answer_ready","message":"ok"}`), "finish:stop")), []byte{9, 30})
	f.Add([]byte(sseBody(`{"reasoning_content":"r"}`, `{"tool_calls":[{"index":0,"id":"a","function":{"name":"get_weather","arguments":"{\"city\":7}"}}]}`, "finish:tool_calls")),
		[]byte(sseBody(content(`{"thought":"t","response_mode":"TOOL_EXECUTION","direct_response":null,"tool_calls":[{"name":"nope","args":{}}]}`), "finish:stop")), []byte{3, 3, 50})
	f.Add([]byte(sseBody(content("<think>x</think><final>a</final>"), "-")), []byte(sseBody(content("plain"))), []byte{1})
	in, err := request.Inspect([]byte(`{"messages":[],"tools":[{"type":"function","function":{"name":"get_weather",` +
		`"parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}]}`))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, first, second, cuts []byte) {
		run := func(split func([]byte) [][]byte) (*recorder, bool) {
			p, err := New(Config{Format: format.Auto})
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			p.Reset(rec, transform.Meta{MessageID: "m1"})
			p.Validate(&Validation{Tools: validate.NewTools(nil, in.Tools), Act: true, Retries: 1, Terminal: true,
				ArtifactTools: validate.ArtifactTools{"make"}, Expected: validate.ModeArtifact})
			reply := func(body []byte) {
				p.Start(nil, "text/event-stream", "up")
				for _, c := range split(body) {
					p.Feed(nil, c)
				}
				p.Close(nil)
			}
			reply(first)
			retried := p.RetryPending()
			if retried {
				for _, ev := range rec.events {
					switch ev.Kind {
					case transform.KindRouted, transform.KindReasoningStart, transform.KindReasoningDelta,
						transform.KindReasoningEnd, transform.KindViolation:
					default:
						t.Fatalf("the refused reply reached the encoder: %s", transformtest.Format(rec.events))
					}
				}
				p.NextAttempt()
				reply(second)
			}
			if p.RetryPending() || !p.Ended() {
				t.Fatalf("after the last reply: retry pending %v, ended %v", p.RetryPending(), p.Ended())
			}
			return rec, retried
		}
		whole, retried := run(func(b []byte) [][]byte { return [][]byte{b} })
		cut, retriedCut := run(func(b []byte) [][]byte { return transformtest.CutsFromBytes(b, cuts) })
		if retried != retriedCut {
			t.Fatalf("retried %v whole, %v cut", retried, retriedCut)
		}
		if w, c := whole.notation(), cut.notation(); w != c {
			t.Fatalf("cut:\n got %s\nwant %s", c, w)
		}
		evs := cut.events
		if err := transformtest.WellFormed(evs); err != nil {
			t.Fatalf("%v: %s", err, transformtest.Format(evs))
		}
		terminal := 0
		for _, ev := range evs {
			if ev.Kind == transform.KindFinish || ev.Kind == transform.KindError {
				terminal++
			}
		}
		if last := evs[len(evs)-1].Kind; terminal != 1 || last != transform.KindFinish && last != transform.KindError {
			t.Fatalf("want exactly one finish or error, last: %s", transformtest.Format(evs))
		}
	})
}
