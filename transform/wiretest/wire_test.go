package wiretest_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/transformtest"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// The property (CONTRACT.md §7): for every reply, in every format and
// every protocol, the client receives what its protocol's rules allow
// (each protocol's wiretest.Client, written from its document), and nothing
// the model wrote for the user vanishes: the answer text the client
// assembles is the answer text the format parser found (the raw reply
// for a RawAnswer protocol), and the reasoning a protocol carries is what
// its client's CheckReasoning expects of the reasoning found.
//
// A reply runs through the real pipeline: the format table's parser
// (format.Formats) and the protocol table's encoder (protocol.Protocols),
// fed an upstream SSE stream whose content deltas are the reply cut where
// the input says, with native reasoning and tool-call deltas mixed in.

// upstream is one upstream reply: content deltas, with native reasoning
// and tool-call fragments mixed in where mix says.
type upstream struct {
	content [][]byte
	// mix holds one byte per content delta, read modulo 8: 1 sends a
	// native reasoning delta before it, 2 starts a tool call, 3 sends
	// more of the latest call's arguments, 4 starts a call at a new index
	// with the latest call's id (LocalAI re-sends calls so: issue 9);
	// others nothing.
	mix []byte
	// cut ends the stream without a finish reason or [DONE], as an
	// upstream that broke off.
	cut bool
}

// body writes u as the upstream's SSE body.
func (u upstream) body() []byte {
	var b bytes.Buffer
	chunk := func(delta string, finish string) {
		fr := "null"
		if finish != "" {
			fr = strconv.Quote(finish)
		}
		fmt.Fprintf(&b, `data: {"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":%s,"finish_reason":%s}]}`+"\n\n", delta, fr)
	}
	str := func(s []byte) string {
		q, _ := json.Marshal(string(s))
		return string(q)
	}
	calls := 0
	for i, c := range u.content {
		if len(u.mix) > 0 {
			switch u.mix[i%len(u.mix)] % 8 {
			case 1:
				chunk(`{"reasoning_content":`+str([]byte("native thought "+strconv.Itoa(i)+". "))+`}`, "")
			case 2:
				chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_up_%d","type":"function","function":{"name":"lookup","arguments":"{\"q\":"}}]}`, calls, calls), "")
				calls++
			case 3:
				if calls > 0 {
					chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"function":{"arguments":"%d}"}}]}`, calls-1, i), "")
				}
			case 4:
				if calls > 0 {
					chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_up_%d","type":"function","function":{"name":"lookup","arguments":"{\"q\":"}}]}`, calls, calls-1), "")
					calls++
				}
			}
		}
		chunk(`{"content":`+str(c)+`}`, "")
	}
	if u.cut {
		return b.Bytes()
	}
	reason := "stop"
	if calls > 0 {
		reason = "tool_calls"
	}
	chunk(`{}`, reason)
	b.WriteString(`data: {"id":"chatcmpl-up","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":5,"total_tokens":8}}` + "\n\n")
	b.WriteString("data: [DONE]\n\n")
	return b.Bytes()
}

// recorder passes events to the protocol's encoder and keeps a copy: what
// the format parser and the pipeline found, to compare the wire with.
type recorder struct {
	transform.Encoder
	evs []transform.Event
}

func (r *recorder) AppendEvent(dst []byte, ev transform.Event) []byte {
	r.evs = append(r.evs, ev.Clone())
	return r.Encoder.AppendEvent(dst, ev)
}

// run streams u through the pipeline of format f and protocol pr and
// returns what the client received, the events the encoder was given, the
// stream's Meta and the encoder.
func run(t testing.TB, f *format.Format, pr *protocol.Protocol, u upstream, stream bool, limits transform.Limits) ([]byte, []transform.Event, transform.Meta, transform.Encoder) {
	t.Helper()
	clock := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	meta := transform.Meta{
		MessageID: "msg-w", RequestID: "req-w", Provider: "openai", Model: "asked-model",
		Stream: stream, ReasoningTitle: "Thought", Limits: limits, Created: clock,
		Now: func() time.Time { clock = clock.Add(300 * time.Millisecond); return clock },
	}
	p, err := pipeline.New(pipeline.Config{Format: f.Name, Parser: transform.ParserOptions{Limits: limits}})
	if err != nil {
		t.Fatal(err)
	}
	enc := pr.NewEncoder(meta)
	rec := &recorder{Encoder: enc}
	p.Reset(rec, meta)
	out := p.Start(nil, "text/event-stream", "up-req")
	body := u.body()
	// The SSE framer is tested for every cut elsewhere; two pieces show it
	// here.
	half := len(body) / 2
	out = p.Feed(out, body[:half])
	out = p.Feed(out, body[half:])
	out = p.Close(out)
	return out, rec.evs, meta, enc
}

// checkWire checks one stream of protocol pr: its rules, and that nothing
// the model wrote vanished (see the property above).
func checkWire(pr *protocol.Protocol, out []byte, evs []transform.Event, meta transform.Meta, enc transform.Encoder) error {
	c, err := wiretest.For(pr.Name)
	if err != nil {
		return err
	}
	seen, err := c.Read(out, meta)
	if err != nil {
		return err
	}
	if !meta.Stream && seen.Failed {
		return nil // one error object instead of the completion
	}
	var raw, answer strings.Builder
	var found wiretest.Found
	for _, ev := range evs {
		// The upstream's strings are whole characters, so a text event
		// cut inside one is the parser's doing; every protocol encodes
		// each event's text on its own, and the client would get U+FFFD
		// for each piece.
		if ev.Kind.IsDelta() && !utf8.Valid(ev.Text) {
			return fmt.Errorf("a %s event is not whole UTF-8 characters: %q", ev.Kind, ev.Text)
		}
		switch ev.Kind {
		case transform.KindRaw:
			raw.Write(ev.Text)
		case transform.KindAnswerDelta:
			answer.Write(ev.Text)
		case transform.KindReasoningDelta:
			found.Reasoning = append(found.Reasoning, string(ev.Text))
			found.Native = append(found.Native, string(ev.Text))
		case transform.KindPhaseDelta:
			found.Reasoning = append(found.Reasoning, string(ev.Text))
			found.Phases = append(found.Phases, string(ev.Text))
		}
	}
	want := answer.String()
	if c.RawAnswer {
		want = raw.String()
	}
	if seen.Answer != want {
		return fmt.Errorf("the client got the answer\n %q\nthe reply had\n %q", seen.Answer, want)
	}
	if r, ok := enc.(transform.Repairer); ok {
		codes, n := r.Repairs()
		found.LeftOut = n > len(codes) || slices.Contains(codes, transform.CodeReasoningLeftOut)
	}
	return c.CheckReasoning(seen, found)
}

// checkAll runs u through every format × protocol and checks each stream.
func checkAll(t testing.TB, u upstream, limits transform.Limits) {
	t.Helper()
	for _, f := range format.Formats() {
		for _, pr := range protocol.Protocols() {
			streams := []bool{true}
			if pr.ClientChoosesStream {
				streams = append(streams, false)
			}
			for _, stream := range streams {
				out, evs, meta, enc := run(t, f, pr, u, stream, limits)
				if err := checkWire(pr, out, evs, meta, enc); err != nil {
					t.Fatalf("format %s, protocol %s (stream %v): %v\nevents: %s\nwire:\n%s",
						f.Name, pr.Name, stream, err, transformtest.Format(evs), out)
				}
			}
		}
	}
}

// tight are limits small enough that the fuzzer reaches the holds' limits
// and the fatal ones, and the JSON limits that end the reading of a
// reply's JSON but not its stream (max_key, max_depth, aiplan's
// max_tool_calls: CONTRACT.md §7).
var tight = transform.Limits{MaxBlockBytes: 48, MaxTagBytes: 20, MaxKeyBytes: 16, MaxDepth: 6, MaxToolCalls: 3}

// TestEveryProtocolHasAClient makes a new protocol row come with a client
// that reads it by its rules.
func TestEveryProtocolHasAClient(t *testing.T) {
	for _, pr := range protocol.Protocols() {
		if _, err := wiretest.For(pr.Name); err != nil {
			t.Error(err)
		}
	}
}

// replies returns the replies the property is checked on besides the
// fuzzer's: the example fixtures, every format parser's fixtures, and the
// out-of-order replies of testdata.
func replies(t testing.TB) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	for _, pattern := range []string{
		"../../examples/fixtures/*", "testdata/*",
		"../thinkingml/testdata/*.txt", "../jsonl/testdata/*.jsonl",
		"../aiplan/testdata/*.txt", "../finalresult/testdata/*.txt",
	} {
		paths, err := filepath.Glob(pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if st, err := os.Stat(p); err != nil || st.IsDir() {
				continue // testdata/fuzz
			}
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			out[p] = b
		}
	}
	if len(out) < 20 {
		t.Fatalf("found only %d replies", len(out))
	}
	return out
}

// cutEvery cuts b into deltas of about n bytes, on character boundaries
// as a provider's JSON strings are.
func cutEvery(b []byte, n int) [][]byte {
	var out [][]byte
	for len(b) > n {
		k := n
		for k < len(b) && !utf8.RuneStart(b[k]) {
			k++
		}
		out = append(out, b[:k])
		b = b[k:]
	}
	return append(out, b)
}

// TestWire checks the property on every fixture, cut in deltas of 7 bytes,
// plain, with native reasoning and tool calls mixed in, cut off, and under
// tight limits.
func TestWire(t *testing.T) {
	for name, b := range replies(t) {
		t.Run(name, func(t *testing.T) {
			deltas := cutEvery(b, 7)
			checkAll(t, upstream{content: deltas}, transform.Limits{})
			checkAll(t, upstream{content: deltas, mix: []byte{0, 1, 0, 2, 3, 0, 1}}, transform.Limits{})
			checkAll(t, upstream{content: deltas, mix: []byte{2, 4, 3, 0, 4}}, transform.Limits{})
			checkAll(t, upstream{content: deltas[:len(deltas)/2], cut: true}, transform.Limits{})
			checkAll(t, upstream{content: deltas}, tight)
		})
	}
}

// FuzzWire checks the property on any reply, cut anywhere, with native
// deltas mixed in where the fuzzer says.
func FuzzWire(f *testing.F) {
	for _, b := range replies(f) {
		f.Add(b, []byte{7, 3, 20, 1, 9}, []byte{0})
		f.Add(b, []byte{5, 5, 5, 5}, []byte{1, 0, 2, 3, 0x80})
		f.Add(b, []byte{3, 9, 4, 2}, []byte{0x40, 2, 4, 3, 4, 3})
	}
	f.Fuzz(func(t *testing.T, data, cuts, mix []byte) {
		u := upstream{content: transformtest.CutsFromBytes(data, cuts)}
		limits := transform.Limits{}
		if len(mix) > 0 {
			u.mix = mix[1:]
			u.cut = mix[0]&0x80 != 0
			if mix[0]&0x40 != 0 {
				limits = tight
			}
		}
		checkAll(t, u, limits)
	})
}
