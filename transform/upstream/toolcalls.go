package upstream

import (
	"bytes"
	"errors"
	"fmt"

	"github.com/llmstream/llmstream/transform"
)

// The violation codes ToolCalls reports (KindViolation); the stream goes on.
const (
	// CodeToolCallWithoutName: a call got arguments or an id but never a
	// name. Finish still delivers it, with an empty name, so that no
	// argument byte is lost.
	CodeToolCallWithoutName = "tool_call_without_name"
	// CodeToolNameChanged: a fragment with the call's own id named another
	// function. The first name is kept.
	CodeToolNameChanged = "tool_name_changed"
	// CodeDuplicateToolCallID: a call came with the id of another call of
	// the stream (LocalAI re-sends a call at another index with its id);
	// Text is the id. The call is passed on without it, so that the
	// router gives it one of its own: every protocol keys calls by id, and
	// two calls with one id break the clients' bookkeeping (CONTRACT.md
	// §7: renumbered ids are reported).
	CodeDuplicateToolCallID = "duplicate_tool_call_id"
)

// ErrTooManyToolCalls is returned, wrapped with the limit, when a stream
// opens more than ToolCalls.MaxCalls calls. The caller ends the stream with
// transform.CodeTooManyToolCalls.
var ErrTooManyToolCalls = errors.New("upstream: too many tool calls")

// ErrNotCumulative is returned when ToolCalls.Cumulative is set and a
// fragment is not a snapshot that extends the arguments received so far
// (PARSING.md OA14): guessing would drop or duplicate bytes. The caller ends
// the stream with transform.CodeUpstreamError.
var ErrNotCumulative = errors.New("upstream: tool call arguments are not cumulative snapshots")

// emptyArgs is what KindToolCallEnd carries for a call sent no arguments
// (OA12). Its capacity is cut so that an append by a consumer copies.
var emptyArgs = []byte("{}")[:2:2]

// ToolCalls assembles the tool_calls deltas of one stream into tool-call
// events (PARSING.md §4.4 and §5.7): KindToolCallStart once a call's name is
// known, KindToolArgsDelta for each fragment of its arguments, byte for
// byte as sent (OA13), and KindToolCallEnd from Finish only, never because
// the arguments already parse as JSON (OA11).
//
// Fragments are matched to calls (CONTRACT.md §7):
//
//   - by index, when the fragment has one (PARSING.md §5.7: the index
//     keys the call, as the OpenAI SDKs key it); an index no call has
//     starts a new call, even with the id of a call at another index,
//     which is a provider's mistake (LocalAI re-sends a call at another
//     index with its id): gluing the fragment to that call would glue
//     its arguments ("{…}{…}") and leave its continuation a call of its
//     own;
//   - else by id, when it has one that a call has; an id no call has
//     starts the next call;
//   - else, in a chunk whose tool_calls held several fragments
//     (Positional), by its position in that array, which stands in for
//     the index (Moonshot and Gemini send parallel calls without one);
//   - else (a lone fragment with neither) it continues the call most
//     recently started.
//
// A call started without an index is keyed by its position when it came
// in an array of several, else as the next call (0, 1, … since the last
// Finish), so that a later chunk of positional fragments finds it; an
// index sent later for it, with the call's id, replaces that key. A
// fragment that names another
// id, or (without the call's own id) another function, than the call it
// points to starts a new call: some providers reuse index 0 for every
// call. A call opens only once its name is known (OA09): the arguments
// that came before are held and sent right after the start. Event Index
// is the order in which calls start (0, 1, …), not the provider's index.
// Ids are passed on, never made up: the router fills in a call without
// one, and a call whose id another call of the stream already has is
// passed on without it (CodeDuplicateToolCallID). A call's ID is the one
// it has when it starts; a late id still matches fragments.
//
// The zero value is ready to use. A ToolCalls serves one stream at a time
// and is not safe for concurrent use.
type ToolCalls struct {
	// MaxCalls bounds the calls of one stream. Zero means
	// transform.DefaultMaxToolCalls.
	MaxCalls int
	// Cumulative says each arguments fragment is a snapshot of all the
	// arguments so far, not a delta (a provider quirk, OA14). Only the new
	// suffix is emitted; a fragment that does not extend the snapshot is an
	// error (ErrNotCumulative).
	Cumulative bool

	calls []toolCall // the stream's calls in order of appearance; [n:] is spare storage
	n     int
	order []int // the entry of each started call, by event Index
	open  int   // entries not yet finished
	// nextKey is the key of the next call started without an index: one
	// past the largest key since the last Finish.
	nextKey int
}

// toolCall is one call being assembled. Its buffers are kept across Reset.
type toolCall struct {
	key int // the provider's index, or one that stands in for it
	// implicit says the provider sent no index for the call: key is its
	// position or its order, and an index sent later replaces it.
	implicit bool
	id, name []byte
	args     []byte
	index    int // the event Index, -1 until started
	entry    int // the call's position in ToolCalls.calls
	done     bool
	dupID    bool // its id was another call's: reported, not kept
	// idStr and nameStr are converted once, at start, for the events.
	idStr, nameStr string
}

// Add applies one delta: it emits KindToolCallStart when the call's name
// becomes known and KindToolArgsDelta for each argument fragment of a
// started call. d's slices are not retained.
func (t *ToolCalls) Add(d ToolCallDelta, emit transform.Emit) error {
	c, err := t.lookup(d)
	if err != nil {
		return err
	}
	if len(c.id) == 0 && len(d.ID) > 0 && !c.dupID {
		if t.idTaken(d.ID) {
			c.dupID = true
			index := c.index
			if index < 0 {
				index = len(t.order) // as tool_call_without_name: the next call's
			}
			emit(transform.Event{Kind: transform.KindViolation, Code: CodeDuplicateToolCallID, Index: index, Text: d.ID})
		} else {
			c.id = append(c.id, d.ID...)
		}
	}
	if len(d.Name) > 0 {
		if len(c.name) == 0 {
			c.name = append(c.name, d.Name...)
		} else if !bytes.Equal(c.name, d.Name) {
			// Only a fragment carrying the call's own id gets here (see
			// startsNew): the same call cannot change function.
			emit(transform.Event{Kind: transform.KindViolation, Code: CodeToolNameChanged, Index: c.index, Text: d.Name})
		}
	}
	frag := d.Arguments
	if t.Cumulative && len(frag) > 0 {
		if !bytes.HasPrefix(frag, c.args) {
			return fmt.Errorf("upstream: tool call %q: %d-byte fragment after %d bytes: %w", c.name, len(frag), len(c.args), ErrNotCumulative)
		}
		frag = frag[len(c.args):]
	}
	c.args = append(c.args, frag...)
	if c.index < 0 {
		if len(c.name) > 0 {
			t.start(c, emit)
		}
		return nil
	}
	if len(frag) > 0 {
		emit(transform.Event{Kind: transform.KindToolArgsDelta, Index: c.index, Text: frag})
	}
	return nil
}

// Finish ends every call, in event Index order: KindToolCallEnd with its
// ID, Name and complete arguments ("{}" when none: OA12). The router calls
// it on finish_reason or at the end of the stream. A reply cut off by
// finish_reason "length" (OA16) still ends its calls here, with the partial
// arguments: telling the client that the reply was truncated is the
// router's business. A call that never got a name but has arguments or an
// id is started here with an empty name, after a CodeToolCallWithoutName
// violation, so that no byte is lost; one with neither is dropped.
func (t *ToolCalls) Finish(emit transform.Emit) {
	for _, e := range t.order {
		if c := &t.calls[e]; !c.done {
			t.end(c, emit)
		}
	}
	for e := range t.calls[:t.n] {
		c := &t.calls[e]
		if c.done {
			continue
		}
		if len(c.args) > 0 || len(c.id) > 0 {
			emit(transform.Event{Kind: transform.KindViolation, Code: CodeToolCallWithoutName, Index: len(t.order)})
			t.start(c, emit)
			t.end(c, emit)
			continue
		}
		c.done = true
		t.open--
	}
	t.nextKey = 0 // the calls after a finish are a new round
}

// Open reports whether a call is in progress: started and not ended, or
// holding fragments that wait for a name. Finish ends them.
func (t *ToolCalls) Open() bool { return t.open > 0 }

// Reset forgets the stream's calls, keeping the options and the buffers.
func (t *ToolCalls) Reset() {
	t.n, t.open, t.nextKey = 0, 0, 0
	t.order = t.order[:0]
}

// lookup returns the call d belongs to, creating it if needed (see the
// matching rules on ToolCalls).
func (t *ToolCalls) lookup(d ToolCallDelta) (*toolCall, error) {
	var c *toolCall
	switch {
	case d.HasIndex:
		c = t.findKey(d.Index)
		if c == nil && len(d.ID) > 0 {
			// Only a call that started without an index takes the index
			// sent later for it; a call keyed by another index is
			// another call.
			switch c = t.findID(d.ID); {
			case c == nil:
			case c.implicit:
				c.key, c.implicit = d.Index, false
			default:
				c = nil
			}
		}
	case len(d.ID) > 0:
		c = t.findID(d.ID)
	case d.Positional:
		c = t.findKey(d.Position)
	case t.n > 0 && !t.calls[t.n-1].done:
		c = &t.calls[t.n-1]
	}
	if c != nil && !startsNew(c, d) {
		if d.HasIndex {
			// The provider's index now keys the call: an id sent with
			// another index later is another call's.
			c.implicit = false
		}
		return c, nil
	}
	return t.create(d)
}

// startsNew reports whether d, which points at c, is a new call instead: it
// carries another id, or another name without c's id.
func startsNew(c *toolCall, d ToolCallDelta) bool {
	if len(d.ID) > 0 && len(c.id) > 0 {
		return !bytes.Equal(d.ID, c.id)
	}
	return len(d.Name) > 0 && len(c.name) > 0 && !bytes.Equal(d.Name, c.name)
}

// find returns the latest open call that match accepts. The stream's calls
// are bounded by MaxCalls, and the latest is checked first.
func (t *ToolCalls) find(match func(*toolCall) bool) *toolCall {
	for e := t.n - 1; e >= 0; e-- {
		if c := &t.calls[e]; !c.done && match(c) {
			return c
		}
	}
	return nil
}

func (t *ToolCalls) findKey(key int) *toolCall {
	return t.find(func(c *toolCall) bool { return c.key == key })
}

func (t *ToolCalls) findID(id []byte) *toolCall {
	return t.find(func(c *toolCall) bool { return bytes.Equal(c.id, id) })
}

// idTaken reports whether a call of the stream, open or finished, has id.
// Ids are checked only when a call gets its first one, and the calls are
// bounded by MaxCalls.
func (t *ToolCalls) idTaken(id []byte) bool {
	for e := range t.calls[:t.n] {
		if bytes.Equal(t.calls[e].id, id) {
			return true
		}
	}
	return false
}

// create appends a call for d, reusing the storage of an earlier stream.
func (t *ToolCalls) create(d ToolCallDelta) (*toolCall, error) {
	limit := t.MaxCalls
	if limit <= 0 {
		limit = transform.DefaultMaxToolCalls
	}
	if t.n >= limit {
		return nil, fmt.Errorf("upstream: more than %d tool calls: %w", limit, ErrTooManyToolCalls)
	}
	if t.n == len(t.calls) {
		t.calls = append(t.calls, toolCall{})
	}
	key, implicit := d.Index, false
	switch {
	case d.HasIndex:
	case d.Positional:
		key, implicit = d.Position, true
	default:
		key, implicit = t.nextKey, true
	}
	t.nextKey = max(t.nextKey, key+1)
	c := &t.calls[t.n]
	*c = toolCall{
		key: key, implicit: implicit, index: -1, entry: t.n,
		id: c.id[:0], name: c.name[:0], args: c.args[:0],
	}
	t.n++
	t.open++
	return c, nil
}

// start emits KindToolCallStart and the arguments held until then.
func (t *ToolCalls) start(c *toolCall, emit transform.Emit) {
	c.index = len(t.order)
	t.order = append(t.order, c.entry)
	c.idStr, c.nameStr = string(c.id), string(c.name)
	emit(transform.Event{Kind: transform.KindToolCallStart, Index: c.index, ID: c.idStr, Name: c.nameStr})
	if len(c.args) > 0 {
		emit(transform.Event{Kind: transform.KindToolArgsDelta, Index: c.index, Text: c.args[:len(c.args):len(c.args)]})
	}
}

// end emits KindToolCallEnd.
func (t *ToolCalls) end(c *toolCall, emit transform.Emit) {
	args := c.args[:len(c.args):len(c.args)]
	if len(args) == 0 {
		args = emptyArgs
	}
	c.done = true
	t.open--
	emit(transform.Event{Kind: transform.KindToolCallEnd, Index: c.index, ID: c.idStr, Name: c.nameStr, Text: args})
}
