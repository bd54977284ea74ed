package anthropic_test

import (
	"fmt"
	"testing"

	"github.com/llmstream/llmstream/transform/anthropic"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/pipeline"
)

// upstreamReply is an upstream SSE body from a reasoning model that
// answers and calls two tools, the second's arguments interleaved with the
// first's, then reports usage.
func upstreamReply() string {
	chunk := func(delta string) string {
		return `data: {"id":"c","model":"up-model","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]}` + "\n\n"
	}
	return chunk(`{"role":"assistant","content":""}`) +
		chunk(`{"reasoning_content":"Weigh \"both\" 城市"}`) +
		chunk(`{"reasoning_content":" first."}`) +
		chunk(`{"content":"Checking 🌍 "}`) +
		chunk(`{"content":"now."}`) +
		chunk(`{"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"weather","arguments":"{\"city\":"}}]}`) +
		chunk(`{"tool_calls":[{"index":1,"id":"call_b","type":"function","function":{"name":"time","arguments":"{\"tz\":"}}]}`) +
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"\"Paris\"}"}}]}`) +
		chunk(`{"tool_calls":[{"index":1,"function":{"arguments":"\"CET\"}"}}]}`) +
		`data: {"id":"c","model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		`data: {"id":"c","model":"up-model","choices":[],"usage":{"prompt_tokens":50,"completion_tokens":9}}` + "\n\n" +
		"data: [DONE]\n\n"
}

// streamThrough runs body, cut where cuts say, through a pipeline with the
// anthropic encoder and returns what the client got.
func streamThrough(t *testing.T, body string, cuts []int, stream bool) ([]byte, int) {
	t.Helper()
	p, err := pipeline.New(pipeline.Config{Format: format.Auto})
	if err != nil {
		t.Fatal(err)
	}
	m := meta(stream)
	enc := anthropic.New(m)
	p.Reset(enc, m)
	out := p.Start(nil, "text/event-stream", "up-1")
	prev := 0
	for _, c := range append(cuts, len(body)) {
		out = p.Feed(out, []byte(body[prev:c]))
		prev = c
	}
	return p.Close(out), enc.Status()
}

// TestPipelineSplitInvariance: however the upstream's bytes are cut, the
// client assembles the same Message, whole or streamed.
func TestPipelineSplitInvariance(t *testing.T) {
	body := upstreamReply()
	want := []string{"thinking:Weigh \"both\" 城市 first.", "text:Checking 🌍 now.",
		`tool_use:call_a weather {"city":"Paris"}`, `tool_use:call_b time {"tz":"CET"}`}
	check := func(name string, out []byte, status int, stream bool) {
		t.Helper()
		var a *assembled
		var err error
		if stream {
			a, err = checkStream(out)
		} else {
			a, err = checkWhole(out, status)
		}
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, out)
		}
		got := blockStrings(a)
		if !stream {
			got = wholeStrings(a)
		}
		wantHere := want
		if !stream {
			wantHere = wantWhole(want)
		}
		if fmt.Sprint(got) != fmt.Sprint(wantHere) || a.stopReason != "tool_use" || fmt.Sprint(a.usage) != "map[input_tokens:50 output_tokens:9]" {
			t.Fatalf("%s: %q %s %v\nwant %q", name, got, a.stopReason, a.usage, wantHere)
		}
	}
	for _, stream := range []bool{true, false} {
		out, status := streamThrough(t, body, nil, stream)
		check("whole body", out, status, stream)
		for i := 1; i < len(body); i++ {
			out, status := streamThrough(t, body, []int{i}, stream)
			check(fmt.Sprintf("cut at %d", i), out, status, stream)
		}
		ones := make([]int, len(body)-1)
		for i := range ones {
			ones[i] = i + 1
		}
		out, status = streamThrough(t, body, ones, stream)
		check("one byte at a time", out, status, stream)
	}
}
