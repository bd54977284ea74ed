package encodertest_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
)

// TestScenarios checks the promises the scenarios keep for the encoders:
// unique names, and exactly one terminal event, last.
func TestScenarios(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range encodertest.Scenarios() {
		if seen[s.Name] {
			t.Errorf("scenario %s twice", s.Name)
		}
		seen[s.Name] = true
		for i, e := range s.Events {
			terminal := e.Kind == transform.KindFinish || e.Kind == transform.KindError
			if terminal != (i == len(s.Events)-1) {
				t.Errorf("scenario %s: event %d is %v; the terminal event comes once, last", s.Name, i, e.Kind)
			}
		}
		if got := encodertest.ScenarioEvents(s.Name); !reflect.DeepEqual(got, s.Events) {
			t.Errorf("ScenarioEvents(%s) differs from the scenario", s.Name)
		}
	}
}

func TestReadSSE(t *testing.T) {
	good := "event: a\ndata: {\"x\":1}\n\ndata: [DONE]\n\n: keep-alive\n\n"
	evs, err := encodertest.ReadSSE([]byte(good))
	want := []encodertest.SSEEvent{{Name: "a", Data: `{"x":1}`}, {Data: "[DONE]"}, {Comment: true}}
	if err != nil || !reflect.DeepEqual(evs, want) {
		t.Fatalf("ReadSSE(%q) = %+v, %v; want %+v", good, evs, err, want)
	}
	if m, err := evs[0].DecodeData(); err != nil || m["x"] != 1.0 {
		t.Errorf("DecodeData = %v, %v", m, err)
	}
	if _, err := evs[1].DecodeData(); err == nil {
		t.Errorf("DecodeData accepted %q", evs[1].Data)
	}
	for _, bad := range []string{
		"data: x\n",                       // no blank line at the end
		"data: x\ndata: y\n\n",            // two data lines
		"event: a\n\n",                    // no data
		"event: a\nevent: b\ndata: x\n\n", // two event lines
		"data: x\nevent: a\n\n",           // event after data
		": c\ndata: x\n\n",                // comment with data
		"retry: 5\ndata: x\n\n",           // unknown field
	} {
		if _, err := encodertest.ReadSSE([]byte(bad)); err == nil {
			t.Errorf("ReadSSE(%q) accepted it", bad)
		}
	}
}

func TestRunOverwritesText(t *testing.T) {
	// An encoder that kept a borrowed Text would see it overwritten; the
	// caller's events must stay as they were.
	evs := []transform.Event{encodertest.Answer("kept")}
	encodertest.Run(nopEncoder{}, evs)
	if string(evs[0].Text) != "kept" {
		t.Errorf("Run changed the caller's event: %q", evs[0].Text)
	}
}

func TestFuzzEvents(t *testing.T) {
	ops := []byte{24, 0, 25, 3, 13, 7, 16, 2, 0, 255}
	a := encodertest.FuzzEvents(ops, "hello 世界")
	if b := encodertest.FuzzEvents(ops, "hello 世界"); !reflect.DeepEqual(a, b) {
		t.Errorf("FuzzEvents is not deterministic")
	}
	kinds := []transform.Kind{encodertest.KindHeartbeat, transform.KindClarify, transform.KindSerpQueries, transform.KindToolCallEnd, transform.KindRaw}
	for i, e := range a {
		if e.Kind != kinds[i] {
			t.Errorf("event %d is %v, want %v", i, e.Kind, kinds[i])
		}
	}
	if len(encodertest.FuzzEvents(ops, "")) != len(kinds) {
		t.Errorf("an empty pool changes the number of events")
	}
	// The agent loop's kinds (CONTRACT.md §12): run, progress, result and
	// round, with a Tool unless the argument's high bit says not, and a
	// server call's start.
	loop := encodertest.FuzzEvents([]byte{26, 1, 27, 0x81, 28, 0x41, 29, 3, 30, 0, 31, 8, 22, 0, 23, 0}, "abc")
	want := []transform.Kind{transform.KindToolRun, transform.KindToolProgress, transform.KindToolResult, transform.KindRoundStart,
		transform.KindToolCallStart, transform.KindToolCallEnd, transform.KindFinish, transform.KindError}
	for i, e := range loop {
		if e.Kind != want[i] {
			t.Errorf("loop event %d is %v, want %v", i, e.Kind, want[i])
		}
	}
	if loop[0].Tool == nil || loop[1].Tool != nil || loop[2].Tool.Status != transform.ToolFailed || loop[3].Index != 4 {
		t.Errorf("loop events %+v", loop[:4])
	}
	if !loop[4].Server || loop[4].Tool == nil || !loop[5].Server {
		t.Errorf("server call events %+v", loop[4:6])
	}
}

// nopEncoder writes nothing.
type nopEncoder struct{}

func (nopEncoder) Begin(dst []byte) []byte                          { return dst }
func (nopEncoder) AppendEvent(dst []byte, _ transform.Event) []byte { return dst }
func (nopEncoder) AppendHeartbeat(dst []byte, _ time.Time) []byte   { return dst }
