package llmmock

import (
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/caddyserver/caddy/v2"
)

// Fault makes some of the mock's replies fail the way real upstreams fail,
// for the load harness's fault runs (docs/operations.md "Load and faults"):
// which requests fail is counted, not drawn, so that a run fails the same
// share of its streams every time.
type Fault struct {
	// Kind is what goes wrong:
	//   - reset: the connection is cut after After reply bytes, with no
	//     finish (a provider's load balancer dropping the stream);
	//   - stall: no byte after After reply bytes for Delay, then the
	//     reply goes on (Delay 0: until the client leaves), so that a
	//     stall shorter than the gateway's idle_timeout is survived and a
	//     longer one is its upstream_timeout;
	//   - garbage: after After reply bytes, a data line that is not JSON
	//     (bytes that are not UTF-8 among them), then the rest of the
	//     reply;
	//   - slow_start: the status line and the first byte wait Delay;
	//   - status: the request is answered Status (default 503) with an
	//     OpenAI-style error body, as an overloaded provider does.
	Kind string `json:"kind"`
	// Every and Burst pick the requests: of each Every requests (counted
	// in arrival order, from 1) the last Burst fail. Every 1 (the
	// default) is every request; Burst defaults to 1, so that "every 10"
	// is the 10th, 20th, … and "every 100 burst 20" is twenty failures in
	// a row each hundred requests (a 5xx burst).
	Every int `json:"every,omitempty"`
	Burst int `json:"burst,omitempty"`
	// After is the reply bytes sent before a mid-stream fault (reset,
	// stall, garbage); 0 means half the reply.
	After int `json:"after,omitempty"`
	// Delay is how long slow_start waits and stall holds.
	Delay caddy.Duration `json:"delay,omitempty"`
	// Status is the status kind's HTTP status.
	Status int `json:"status,omitempty"`
}

// The fault kinds.
const (
	FaultReset     = "reset"
	FaultStall     = "stall"
	FaultGarbage   = "garbage"
	FaultSlowStart = "slow_start"
	FaultStatus    = "status"
)

// check validates f and fills in its defaults.
func (f *Fault) check() error {
	switch f.Kind {
	case FaultReset, FaultStall, FaultGarbage, FaultSlowStart, FaultStatus:
	default:
		return fmt.Errorf("fault: unknown kind %q (reset, stall, garbage, slow_start, status)", f.Kind)
	}
	if f.Every == 0 {
		f.Every = 1
	}
	if f.Burst == 0 {
		f.Burst = 1
	}
	switch {
	case f.Every < 0 || f.Burst < 0 || f.After < 0 || f.Delay < 0:
		return fmt.Errorf("fault %s: every, burst, after and delay must not be negative", f.Kind)
	case f.Burst > f.Every:
		return fmt.Errorf("fault %s: burst %d is more than every %d", f.Kind, f.Burst, f.Every)
	case f.Kind == FaultSlowStart && f.Delay == 0:
		return fmt.Errorf("fault slow_start: a delay is required")
	}
	if f.Kind == FaultStatus {
		if f.Status == 0 {
			f.Status = http.StatusServiceUnavailable
		}
		if f.Status < 400 || f.Status > 599 {
			return fmt.Errorf("fault status: %d is not an error status", f.Status)
		}
	}
	return nil
}

// hits reports whether request n (from 1) is one of f's.
func (f *Fault) hits(n uint64) bool {
	return (n-1)%uint64(f.Every) >= uint64(f.Every-f.Burst)
}

// faultFor returns the first of m's faults that request n hits, or nil.
func (m *Mock) faultFor(n uint64) *Fault {
	for i := range m.Faults {
		if m.Faults[i].hits(n) {
			return &m.Faults[i]
		}
	}
	return nil
}

// garbageLine is what the garbage fault writes: an SSE data line that
// starts like a chunk and is not JSON, with bytes that are not UTF-8.
var garbageLine = []byte("data: {\"choices\":[{\"delta\":{\"content\":\"\xff\xfe\x00 <html>502 Bad Gateway</html>\n\n")

// midStream applies the turn's mid-stream fault, if it is due now that
// sent reply bytes went out: it reports false when the reply must stop
// here (the client left during a stall). A reset does not return.
func (t *mockTurn) midStream() bool {
	f := t.fault
	if f == nil || t.faulted {
		return true
	}
	after := f.After
	if after == 0 {
		after = len(t.reply) / 2
	}
	if t.sent < after {
		return true
	}
	t.faulted = true
	switch f.Kind {
	case FaultReset:
		// Cut the connection without a finish: net/http aborts the
		// response quietly for this panic value.
		panic(http.ErrAbortHandler)
	case FaultGarbage:
		_ = t.write(garbageLine)
	case FaultStall:
		return t.wait(time.Duration(f.Delay))
	}
	return true
}

// wait holds the turn for d (0: until the client leaves); it reports
// false when the client left.
func (t *mockTurn) wait(d time.Duration) bool {
	var timeout <-chan time.Time
	if d > 0 {
		timer := time.NewTimer(d)
		defer timer.Stop()
		timeout = timer.C
	}
	select {
	case <-timeout:
		return true
	case <-t.r.Context().Done():
		return false
	}
}

// statusFault answers the request with f's error status.
func statusFault(w http.ResponseWriter, f *Fault) error {
	w.Header().Set("Retry-After", "1")
	return mockError(w, f.Status, "mock_fault_"+strconv.Itoa(f.Status), "llm_mock: a scripted "+strconv.Itoa(f.Status)+" (fault status)")
}
