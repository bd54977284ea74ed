package gymbro

import "github.com/llmstream/llmstream/transform"

// ServerCalls follows the calls to tools the gateway runs (CONTRACT.md §12)
// through a stream, for the protocols built on SystemEvents (gymbro and
// jsonseq), which show a call once its arguments are complete, then its
// progress and its result, and owe a result to every call that runs when
// the stream ends. It keeps what the later events do not repeat: the
// label and tool server of the call's start. The zero value is empty.
type ServerCalls struct {
	calls []ServerCall
}

// ServerCall is one call to a tool the gateway runs.
type ServerCall struct {
	// Index is the call's pipeline index; ID and Name its id and tool.
	Index    int
	ID, Name string
	// Label is the tool's display label (its name when it has none),
	// Server the tool server's name.
	Label, Server string
	// Shown: the complete call went out; Running: it runs and its result
	// is owed; ran: it ran (one run, one result).
	Shown, Running, ran bool
}

// maxServerCalls bounds the calls a stream follows, far above what a turn
// makes, so that a bad sequence cannot grow the list without bound.
const maxServerCalls = 1 << 10

// Start notes a server call's start (a KindToolCallStart with Server).
func (c *ServerCalls) Start(ev transform.Event) {
	if c.Get(ev.Index) != nil || len(c.calls) >= maxServerCalls {
		return
	}
	call := ServerCall{Index: ev.Index, ID: ev.ID, Name: ev.Name, Label: ev.Name}
	if ev.Tool != nil {
		call.Server = ev.Tool.Server
		if ev.Tool.Label != "" {
			call.Label = ev.Tool.Label
		}
	}
	c.calls = append(c.calls, call)
}

// Show notes that a server call is complete (a KindToolCallEnd with
// Server) and returns it, to be shown; a call whose start never came is
// noted now, without label or server.
func (c *ServerCalls) Show(ev transform.Event) *ServerCall {
	c.Start(ev)
	call := c.Get(ev.Index)
	if call != nil {
		call.Shown = true
	}
	return call
}

// Run notes that the gateway runs a shown call (KindToolRun) and reports
// whether it does; a call not shown, or run before, does not.
func (c *ServerCalls) Run(ev transform.Event) bool {
	call := c.Get(ev.Index)
	if call == nil || !call.Shown || call.ran {
		return false
	}
	call.Running, call.ran = true, true
	return true
}

// Running returns the running call at index i, nil if none.
func (c *ServerCalls) Running(i int) *ServerCall {
	if call := c.Get(i); call != nil && call.Running {
		return call
	}
	return nil
}

// Finish notes a running call's result (KindToolResult) and returns the
// call, nil when none runs at that index: a result without its run is not
// shown.
func (c *ServerCalls) Finish(i int) *ServerCall {
	call := c.Running(i)
	if call != nil {
		call.Running = false
	}
	return call
}

// Get returns the call at pipeline index i, nil if none.
func (c *ServerCalls) Get(i int) *ServerCall {
	for k := range c.calls {
		if c.calls[k].Index == i {
			return &c.calls[k]
		}
	}
	return nil
}

// Abandon calls f for each call still running, in the order they started,
// and notes it finished: the stream ends without its result.
func (c *ServerCalls) Abandon(f func(*ServerCall)) {
	for k := range c.calls {
		if call := &c.calls[k]; call.Running {
			call.Running = false
			f(call)
		}
	}
}
