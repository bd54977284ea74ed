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

// tp is a fragment without index at position pos of a chunk's tool_calls
// array of several (ToolCallDelta.Positional).
func tp(pos int, id, name, args string) ToolCallDelta {
	d := td(-1, id, name, args)
	d.Positional, d.Position = true, pos
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

// toolCallsCase is a sequence of deltas and the events it must give.
type toolCallsCase struct {
	name       string
	cumulative bool
	maxCalls   int
	deltas     []ToolCallDelta
	noFinish   bool
	want       string
	err        error
}

// indexlessCases are the matching rules for fragments without an index
// (CONTRACT.md §7): several in one chunk match by position, a lone one
// with a new id starts the next call, a lone one with neither continues
// the latest call.
var indexlessCases = []toolCallsCase{
	{name: "Moonshot parallel calls: names, then positional arguments",
		deltas: []ToolCallDelta{tp(0, "a", "get_weather", ``), tp(1, "b", "get_time", ``),
			tp(0, "", "", `{"location":"San Francisco"}`), tp(1, "", "", `{"zone":"UTC"}`)},
		want: `TC{0 a get_weather} TC{1 b get_time} TA0"{\"location\":\"San Francisco\"}" TA1"{\"zone\":\"UTC\"}" TC}0 {"location":"San Francisco"} TC}1 {"zone":"UTC"}`},
	{name: "positional arguments in fragments over several chunks",
		deltas: []ToolCallDelta{tp(0, "a", "f", `{"x":`), tp(1, "b", "g", `{"y":`), tp(0, "", "", `1}`), tp(1, "", "", `2}`)},
		want:   `TC{0 a f} TA0"{\"x\":" TC{1 b g} TA1"{\"y\":" TA0"1}" TA1"2}" TC}0 {"x":1} TC}1 {"y":2}`},
	{name: "lone calls started by id, then positional arguments",
		deltas: []ToolCallDelta{td(-1, "a", "f", ``), td(-1, "b", "g", ``), tp(0, "", "", `{"p":0}`), tp(1, "", "", `{"p":1}`)},
		want:   `TC{0 a f} TC{1 b g} TA0"{\"p\":0}" TA1"{\"p\":1}" TC}0 {"p":0} TC}1 {"p":1}`},
	{name: "Moonshot single call: id and name, then arguments alone",
		deltas: []ToolCallDelta{td(-1, "get_weather:0", "get_weather", ``), td(-1, "", "", `{"city":`), td(-1, "", "", `"Paris"}`)},
		want:   `TC{0 get_weather:0 get_weather} TA0"{\"city\":" TA0"\"Paris\"}" TC}0 {"city":"Paris"}`},
	{name: "a lone fragment with a new id starts the next call",
		deltas: []ToolCallDelta{td(-1, "a", "f", `{}`), td(-1, "b", "f", ``), td(-1, "", "", `[]`)},
		want:   `TC{0 a f} TA0"{}" TC{1 b f} TA1"[]" TC}0 {} TC}1 []`},
	{name: "a lone fragment with neither continues the latest call",
		deltas: []ToolCallDelta{tp(0, "a", "f", ``), tp(1, "b", "g", ``), td(-1, "", "", `{"late":true}`)},
		want:   `TC{0 a f} TC{1 b g} TA1"{\"late\":true}" TC}0 {} TC}1 {"late":true}`},
	{name: "a positional fragment's id wins over its position",
		deltas: []ToolCallDelta{tp(0, "a", "f", ``), tp(1, "b", "g", ``), tp(0, "b", "", `[2]`), tp(1, "a", "", `[1]`)},
		want:   `TC{0 a f} TC{1 b g} TA1"[2]" TA0"[1]" TC}0 [1] TC}1 [2]`},
	{name: "Gemini whole calls without index, ids and names in one chunk",
		deltas: []ToolCallDelta{tp(0, "c-1", "add", `{"a":2,"b":3}`), tp(1, "c-2", "multiply", `{"a":2,"b":3}`)},
		want:   `TC{0 c-1 add} TA0"{\"a\":2,\"b\":3}" TC{1 c-2 multiply} TA1"{\"a\":2,\"b\":3}" TC}0 {"a":2,"b":3} TC}1 {"a":2,"b":3}`},
	{name: "positional fragments without names or ids: calls without names",
		deltas: []ToolCallDelta{tp(0, "", "", `{"a":1}`), tp(1, "", "", `{"b":2}`)},
		want:   `V(tool_call_without_name@0) TC{0  } TA0"{\"a\":1}" TC}0 {"a":1} V(tool_call_without_name@0) TC{1  } TA1"{\"b\":2}" TC}1 {"b":2}`},
	{name: "an index sent later replaces the stand-in key",
		deltas: []ToolCallDelta{td(-1, "a", "f", ``), td(-1, "b", "g", ``), td(7, "a", "", `{}`), td(7, "", "", ` `), tp(1, "", "", `[]`)},
		want:   `TC{0 a f} TC{1 b g} TA0"{}" TA0" " TA1"[]" TC}0 {}  TC}1 []`},
}

func TestToolCalls(t *testing.T) {
	tests := []toolCallsCase{
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
		// Issue 9: the index keys the call (PARSING.md §5.7). A new index
		// with the id of a call at another index is another call, passed
		// on without the id, which would make two calls of one id.
		{name: "a new index with another call's id: a new call without the id", deltas: []ToolCallDelta{td(0, "a", "f", `{`), td(1, "a", "g", `[`), td(1, "", "", `]`), td(0, "", "", `}`)},
			want: `TC{0 a f} TA0"{" V(duplicate_tool_call_id@0:a) TC{1  g} TA1"[" TA1"]" TA0"}" TC}0 {} TC}1 []`},
		// LocalAI re-sends a call at another index with its id: two calls,
		// each with its own arguments, never one call with "{…}{…}".
		{name: "LocalAI: a call re-sent at another index", deltas: []ToolCallDelta{td(1, "X", "bash", `{"s":1}`), td(0, "X", "bash", ``), td(0, "", "", `{"s":1}`)},
			want: `TC{0 X bash} TA0"{\"s\":1}" V(duplicate_tool_call_id@0:X) TC{1  bash} TA1"{\"s\":1}" TC}0 {"s":1} TC}1 {"s":1}`},
		// The id repeated in every fragment of the call (vLLM, DeepSeek) is
		// reported once.
		{name: "a duplicate id repeated in every fragment", deltas: []ToolCallDelta{td(0, "a", "f", `{}`), td(1, "a", "g", `[`), td(1, "a", "", `]`)},
			want: `TC{0 a f} TA0"{}" V(duplicate_tool_call_id@0:a) TC{1  g} TA1"[" TA1"]" TC}0 {} TC}1 []`},
		{name: "too many calls", maxCalls: 2, deltas: []ToolCallDelta{td(0, "a", "f", ``), td(1, "b", "f", ``), td(2, "c", "f", ``)},
			want: `TC{0 a f} TC{1 b f}`, err: ErrTooManyToolCalls},
	}
	tests = append(tests, indexlessCases...)
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
	// An id of the earlier round is still the other call's (issue 9).
	tc.MaxCalls = 3
	more, err = assemble(&tc, true, td(0, "a", "h", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := transformtest.Format(more), `V(duplicate_tool_call_id@0:a) TC{2  h} TA2"{}" TC}2 {}`; got != want {
		t.Errorf("an id of the earlier round: got %s\nwant %s", got, want)
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

// TestToolCallsPositionsAcrossFinish checks that the stand-in keys of
// calls without index start over after a finish, like providers' indices.
func TestToolCallsPositionsAcrossFinish(t *testing.T) {
	// A lone call after a finish is call 0 of its round, which a
	// positional fragment at 0 finds.
	var tc ToolCalls
	evs, err := assemble(&tc, true, td(-1, "a", "f", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	more, err := assemble(&tc, true, td(-1, "b", "g", ``), tp(0, "", "", `[0]`), tp(1, "c", "h", `[1]`))
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, more...)
	if got, want := transformtest.Format(evs), `TC{0 a f} TA0"{}" TC}0 {} TC{1 b g} TA1"[0]" TC{2 c h} TA2"[1]" TC}1 [0] TC}2 [1]`; got != want {
		t.Errorf("positions after a finish: got %s\nwant %s", got, want)
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
