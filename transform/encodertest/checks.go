package encodertest

import (
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
)

// CheckScenarios runs a subtest per scenario. encode encodes the events
// and returns the output with the protocol's verdict on it (nil when it is
// well-formed); the output must then equal the golden file
// testdata/<scenario><suffix>.golden. suffix tells apart the goldens of a
// protocol that encodes each scenario more than one way.
func CheckScenarios(t *testing.T, suffix string, encode func(evs []transform.Event) ([]byte, error)) {
	t.Helper()
	for _, s := range Scenarios() {
		t.Run(s.Name+suffix, func(t *testing.T) {
			out, err := encode(s.Events)
			if err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			Golden(t, s.Name+suffix, out)
		})
	}
}

// CheckWholeWritesNothingBeforeTheEnd checks an encoder that answers with
// one JSON body ("stream": false): before scenario's terminal event it
// writes nothing, heartbeats included, so that its HTTP status can still
// follow the outcome.
func CheckWholeWritesNothingBeforeTheEnd(t *testing.T, enc transform.Encoder, scenario string) {
	t.Helper()
	out := enc.Begin(nil)
	evs := ScenarioEvents(scenario)
	for _, e := range evs[:len(evs)-1] {
		out = enc.AppendEvent(out, e)
	}
	out = enc.AppendHeartbeat(out, Created)
	if len(out) != 0 {
		t.Errorf("wrote %q before the terminal event", out)
	}
}

// CheckNothingAfterTerminal checks that a KindFinish or KindError ends the
// stream whatever the caller does next: later events, heartbeats and a
// second terminal event append nothing. newEncoder returns a new encoder
// per terminal event tried.
func CheckNothingAfterTerminal(t *testing.T, newEncoder func() transform.Encoder) {
	t.Helper()
	late := []transform.Event{
		Raw("late"), Reasoning("late"), Answer("late"), ToolStart(0, "c", "f"),
		Heartbeat(), Finish("stop"), Failure(transform.CodeUpstreamError, "late"),
	}
	for _, term := range []transform.Event{Finish("stop"), Failure(transform.CodeUpstreamError, "x")} {
		t.Run(term.Kind.String(), func(t *testing.T) {
			enc := newEncoder()
			enc.Begin(nil)
			enc.AppendEvent(nil, term)
			for _, e := range late {
				if out := appendStep(enc, nil, e, time.Now()); len(out) != 0 {
					t.Errorf("%v after the terminal event wrote %q", e.Kind, out)
				}
			}
		})
	}
}

// AllocsCase is an event CheckZeroAllocs measures, named for its subtest,
// after the events of Setup (on top of the protocol's own setup).
type AllocsCase struct {
	Name  string
	Event transform.Event
	Setup []transform.Event
}

// deltaCases are the events CheckZeroAllocs measures for every protocol:
// each kind the pipeline sends once per delta, with text that needs
// escaping and with Chinese, and a heartbeat. A protocol that drops a kind
// must drop it for free too.
var deltaCases = []AllocsCase{
	{"raw", Raw("some reply text, with \"quotes\"\n"), nil},
	{"reasoning_delta", Reasoning("reasoning text"), nil},
	{"phase_delta", PhaseDelta(1, "phase text"), nil},
	{"answer_delta", Answer("some answer text, with \"quotes\"\n"), nil},
	{"answer_delta_chinese", Answer("三分化训练计划"), nil},
	{"tool_args_delta", ToolArgs(0, "c", "f", `{"a":1}`), nil},
	// A server call's arguments stream like a client call's (CONTRACT.md
	// §12), at index 7 so that no protocol's own setup call is in its way.
	{"server_tool_args_delta", ServerToolArgs(7, "s", "lookup", `{"a":1}`),
		[]transform.Event{ServerToolStart(7, "s", "lookup", "Lookup", "demo", 1)}},
	{"heartbeat", Heartbeat(), nil},
}

// CheckZeroAllocs runs a subtest per delta kind, and per extra case, that
// fails unless appending its event (a Heartbeat step calls
// AppendHeartbeat) to a buffer with room allocates nothing in steady
// state: encoders run once per delta, on every stream. Each subtest
// measures a new encoder from newEncoder, after Begin and the setup
// events.
func CheckZeroAllocs(t *testing.T, newEncoder func() transform.Encoder, setup []transform.Event, extra ...AllocsCase) {
	t.Helper()
	for _, c := range append(deltaCases[:len(deltaCases):len(deltaCases)], extra...) {
		t.Run(c.Name, func(t *testing.T) {
			enc, buf := prepare(newEncoder(), append(setup[:len(setup):len(setup)], c.Setup...))
			now := time.Now()
			allocs := testing.AllocsPerRun(1000, func() {
				buf = appendStep(enc, buf[:0], c.Event, now)
			})
			if allocs != 0 {
				t.Errorf("%v allocations per event, want 0", allocs)
			}
		})
	}
}

// BenchmarkReply measures enc streaming a short reply, after Begin and the
// setup events: two deltas of kind thinking, then three of kind answer,
// ASCII that needs escaping and Chinese. A protocol passes the kinds it
// sends (KindRaw for both, for one that forwards the raw reply). It reports
// the text's bytes and the events per second.
func BenchmarkReply(b *testing.B, enc transform.Encoder, setup []transform.Event, thinking, answer transform.Kind) {
	deltas := []transform.Event{
		{Kind: thinking, Index: 1, Text: []byte("Thinking about ")},
		{Kind: thinking, Index: 1, Text: []byte("the user's plan")},
		{Kind: answer, Text: []byte("Here is a plan:\n")},
		{Kind: answer, Text: []byte("- 第二天：拉\n")},
		{Kind: answer, Text: []byte("\"quoted\" \\ text")},
	}
	var size int64
	for _, d := range deltas {
		size += int64(len(d.Text))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	enc, buf := prepare(enc, setup)
	b.ResetTimer()
	for b.Loop() {
		for _, d := range deltas {
			buf = enc.AppendEvent(buf[:0], d)
		}
	}
	b.ReportMetric(float64(b.N*len(deltas))/b.Elapsed().Seconds(), "events/s")
}

// prepare begins a stream with enc and feeds it the setup events, into a
// buffer large enough that measuring never grows it.
func prepare(enc transform.Encoder, setup []transform.Event) (transform.Encoder, []byte) {
	buf := enc.Begin(make([]byte, 0, 64<<10))
	for _, e := range setup {
		buf = enc.AppendEvent(buf, e)
	}
	return enc, buf
}

// appendStep appends ev, or a heartbeat at now for a Heartbeat step.
func appendStep(enc transform.Encoder, dst []byte, ev transform.Event, now time.Time) []byte {
	if ev.Kind == KindHeartbeat {
		return enc.AppendHeartbeat(dst, now)
	}
	return enc.AppendEvent(dst, ev)
}
