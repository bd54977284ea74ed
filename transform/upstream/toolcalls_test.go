package upstream

import (
	"errors"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// td is a tool call delta; index -1 means none.
func td(index int, id, name, args string) ToolCallDelta {
	d := ToolCallDelta{Index: max(index, 0), HasIndex: index >= 0, Arguments: []byte(args)}
	if id != "" {
		d.ID = []byte(id)
	}
	if name != "" {
		d.Name = []byte(name)
	}
	return d
}

// assemble feeds deltas to t, then Finishes it when finish is set, and
// returns the events, cloned, and the first error.
func assemble(t *ToolCalls, finish bool, deltas ...ToolCallDelta) ([]transform.Event, error) {
	var evs []transform.Event
	emit := func(ev transform.Event) { evs = append(evs, ev.Clone()) }
	for _, d := range deltas {
		if err := t.Add(d, emit); err != nil {
			return evs, err
		}
	}
	if finish {
		t.Finish(emit)
	}
	return evs, nil
}

func TestToolCalls(t *testing.T) {
	tests := []struct {
		name       string
		cumulative bool
		maxCalls   int
		deltas     []ToolCallDelta
		noFinish   bool
		want       string
		err        error
	}{
		{name: "OA06", deltas: []ToolCallDelta{td(0, "c1", "f", ""), td(0, "", "", `{"a"`), td(0, "", "", `:1}`)},
			want: `TC{0 c1 f} TA0"{\"a\"" TA0":1}" TC}0 {"a":1}`},
		{name: "OA09", deltas: []ToolCallDelta{td(0, "", "", `{"q":`), td(0, "", "", `"x`), td(0, "c1", "search", `"}`)},
			want: `TC{0 c1 search} TA0"{\"q\":\"x\"}" TC}0 {"q":"x"}`},
		{name: "OA09 type missing or late", deltas: []ToolCallDelta{td(0, "c1", "f", `{}`), {Index: 0, HasIndex: true, Type: []byte("function")}},
			want: `TC{0 c1 f} TA0"{}" TC}0 {}`},
		{name: "OA10 whole arguments, two calls in one delta", deltas: []ToolCallDelta{td(0, "a", "f", `{"x":1}`), td(1, "b", "g", `{}`)},
			want: `TC{0 a f} TA0"{\"x\":1}" TC{1 b g} TA1"{}" TC}0 {"x":1} TC}1 {}`},
		{name: "OA11 arguments that parse do not end the call", deltas: []ToolCallDelta{td(0, "c", "f", `{}`), td(0, "", "", ``)}, noFinish: true,
			want: `TC{0 c f} TA0"{}"`},
		{name: "OA11 more arguments after a prefix that parses", deltas: []ToolCallDelta{td(0, "c", "f", `{"a":1}`), td(0, "", "", ` `)},
			want: `TC{0 c f} TA0"{\"a\":1}" TA0" " TC}0 {"a":1} `},
		{name: "OA12", deltas: []ToolCallDelta{td(0, "c", "f", ``)},
			want: `TC{0 c f} TC}0 {}`},
		{name: "OA13", deltas: []ToolCallDelta{td(0, "c", "f", `{"city":"東`), td(0, "", "", "京\xff\"}")},
			want: `TC{0 c f} TA0"{\"city\":\"東" TA0"京\xff\"}" TC}0 {"city":"東京` + "\xff" + `"}`},
		{name: "OA14 cumulative snapshots", cumulative: true, deltas: []ToolCallDelta{td(0, "c", "f", `{"count": 1`), td(0, "", "", `{"count": 10`), td(0, "", "", ``), td(0, "", "", `{"count": 100}`)},
			want: `TC{0 c f} TA0"{\"count\": 1" TA0"0" TA0"0}" TC}0 {"count": 100}`},
		{name: "OA14 plain deltas are not dropped", deltas: []ToolCallDelta{td(0, "c", "f", `{"count": 1`), td(0, "", "", `0`), td(0, "", "", `0}`)},
			want: `TC{0 c f} TA0"{\"count\": 1" TA0"0" TA0"0}" TC}0 {"count": 100}`},
		{name: "OA14 plain deltas under the cumulative option are an error", cumulative: true, deltas: []ToolCallDelta{td(0, "c", "f", `{"count": 10`), td(0, "", "", `0`)},
			want: `TC{0 c f} TA0"{\"count\": 10"`, err: ErrNotCumulative},
		{name: "OA16 partial arguments end at Finish", deltas: []ToolCallDelta{td(0, "c", "f", `{"q":"unfini`)},
			want: `TC{0 c f} TA0"{\"q\":\"unfini" TC}0 {"q":"unfini`},
		{name: "same index, another id: a new call", deltas: []ToolCallDelta{td(0, "a", "f", `{}`), td(0, "b", "f", `{"x":2}`)},
			want: `TC{0 a f} TA0"{}" TC{1 b f} TA1"{\"x\":2}" TC}0 {} TC}1 {"x":2}`},
		{name: "keyed by id without index, interleaved", deltas: []ToolCallDelta{td(-1, "a", "f", ``), td(-1, "b", "g", ``), td(-1, "a", "", `[1]`), td(-1, "b", "", `[2]`)},
			want: `TC{0 a f} TC{1 b g} TA0"[1]" TA1"[2]" TC}0 [1] TC}1 [2]`},
		{name: "index found by id", deltas: []ToolCallDelta{td(-1, "a", "f", ``), td(3, "a", "", `{}`), td(3, "", "", ` `)},
			want: `TC{0 a f} TA0"{}" TA0" " TC}0 {} `},
		{name: "neither index nor id: the last call", deltas: []ToolCallDelta{td(0, "a", "f", ``), td(1, "b", "g", `{`), td(-1, "", "", `}`)},
			want: `TC{0 a f} TC{1 b g} TA1"{" TA1"}" TC}0 {} TC}1 {}`},
		{name: "provider indices are not event indices", deltas: []ToolCallDelta{td(5, "a", "f", `{}`), td(2, "b", "g", `{}`)},
			want: `TC{0 a f} TA0"{}" TC{1 b g} TA1"{}" TC}0 {} TC}1 {}`},
		{name: "calls start in the order their names arrive", deltas: []ToolCallDelta{td(0, "", "", `{"a":1}`), td(1, "b", "g", `{}`), td(0, "a", "f", ``)},
			want: `TC{0 b g} TA0"{}" TC{1 a f} TA1"{\"a\":1}" TC}0 {} TC}1 {"a":1}`},
		{name: "name repeated in every fragment", deltas: []ToolCallDelta{td(0, "c", "f", `{`), td(0, "c", "f", `}`), td(0, "", "f", ``)},
			want: `TC{0 c f} TA0"{" TA0"}" TC}0 {}`},
		{name: "another name with the call's id: first name kept", deltas: []ToolCallDelta{td(0, "c", "f", `{`), td(0, "c", "g", `}`)},
			want: `TC{0 c f} TA0"{" V(tool_name_changed@0:g) TA0"}" TC}0 {}`},
		{name: "another name without an id: a new call", deltas: []ToolCallDelta{td(0, "", "f", `{}`), td(0, "", "g", `[]`)},
			want: `TC{0  f} TA0"{}" TC{1  g} TA1"[]" TC}0 {} TC}1 []`},
		{name: "an id that comes after the start", deltas: []ToolCallDelta{td(0, "", "f", ``), td(0, "c1", "", `{}`)},
			want: `TC{0  f} TA0"{}" TC}0 {}`},
		{name: "a call without a name is delivered at Finish", deltas: []ToolCallDelta{td(0, "a", "f", `{}`), td(1, "", "", `{"x":1}`)},
			want: `TC{0 a f} TA0"{}" TC}0 {} V(tool_call_without_name@0) TC{1  } TA1"{\"x\":1}" TC}1 {"x":1}`},
		{name: "a fragment with nothing opens no call", deltas: []ToolCallDelta{{Index: 0, HasIndex: true, Type: []byte("function")}},
			want: ``},
		{name: "too many calls", maxCalls: 2, deltas: []ToolCallDelta{td(0, "a", "f", ``), td(1, "b", "f", ``), td(2, "c", "f", ``)},
			want: `TC{0 a f} TC{1 b f}`, err: ErrTooManyToolCalls},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tc := ToolCalls{Cumulative: tt.cumulative, MaxCalls: tt.maxCalls}
			evs, err := assemble(&tc, !tt.noFinish, tt.deltas...)
			if got := transformtest.Format(evs); got != tt.want {
				t.Errorf("events:\n got %s\nwant %s", got, tt.want)
			}
			if !errors.Is(err, tt.err) || (err == nil) != (tt.err == nil) {
				t.Fatalf("error: got %v, want %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if tt.noFinish {
				if !tc.Open() {
					t.Error("Open() = false with a call in progress")
				}
				return
			}
			if tc.Open() {
				t.Error("Open() = true after Finish")
			}
			if err := transformtest.WellFormed(evs); err != nil {
				t.Error(err)
			}
		})
	}
}

// TestToolCallsAcrossFinish checks that a call after Finish is a new call
// with the next index, and that Reset starts the indices and the limit over.
func TestToolCallsAcrossFinish(t *testing.T) {
	tc := ToolCalls{MaxCalls: 2}
	evs, err := assemble(&tc, true, td(0, "a", "f", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	more, err := assemble(&tc, true, td(0, "", "", `[]`), td(0, "", "g", ``))
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, more...)
	if got, want := transformtest.Format(evs), `TC{0 a f} TA0"{}" TC}0 {} TC{1  g} TA1"[]" TC}1 []`; got != want {
		t.Errorf("got %s\nwant %s", got, want)
	}
	tc.Reset()
	evs, err = assemble(&tc, true, td(0, "x", "h", ``), td(1, "y", "h", ``))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := transformtest.Format(evs), `TC{0 x h} TC{1 y h} TC}0 {} TC}1 {}`; got != want {
		t.Errorf("after Reset: got %s\nwant %s", got, want)
	}
}

func TestToolCallsDoNotAllocatePerDelta(t *testing.T) {
	var tc ToolCalls
	frag := ToolCallDelta{Index: 0, HasIndex: true, Arguments: []byte(`"abc",`)}
	first := td(0, "call_1", "search", `{"q":[`)
	n := 0
	emit := func(ev transform.Event) { n += len(ev.Text) }
	stream := func() {
		tc.Reset()
		if err := tc.Add(first, emit); err != nil {
			t.Fatal(err)
		}
		for range 100 {
			if err := tc.Add(frag, emit); err != nil {
				t.Fatal(err)
			}
		}
		tc.Finish(emit)
	}
	stream()
	// The start converts the id and the name to strings once per call: two
	// allocations per call, none per delta.
	if a := testing.AllocsPerRun(20, stream); a > 2 {
		t.Errorf("%v allocations per stream of 101 deltas, want at most 2", a)
	}
}
