package toolserver

import (
	"sync"
	"time"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform/agent"
)

// progressInterval is the least time between two progress reports given
// to a caller: a server may send many; the client needs a few a second.
const progressInterval = 250 * time.Millisecond

// relay passes a call's progress notifications to the caller's callback,
// at most one per progressInterval (the latest wins: one held back is
// sent when the interval ends, unless a newer one replaced it), and never
// after stop returned.
type relay struct {
	mu      sync.Mutex
	fn      func(agent.Progress)
	last    time.Time
	pending agent.Progress
	held    bool
	timer   *time.Timer
	stopped bool
}

// push reports p.
func (r *relay) push(p agent.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped || r.fn == nil {
		return
	}
	now := time.Now()
	if wait := progressInterval - now.Sub(r.last); wait > 0 {
		r.pending, r.held = p, true
		if r.timer == nil {
			r.timer = time.AfterFunc(wait, r.flush)
		}
		return
	}
	r.last = now
	r.fn(p)
}

// flush sends the progress held back.
func (r *relay) flush() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timer = nil
	if r.stopped || !r.held {
		return
	}
	r.held = false
	r.last = time.Now()
	r.fn(r.pending)
}

// setFn replaces the callback (nil: reports are dropped): a call held
// open while its user decides reports to the request that resumes it.
func (r *relay) setFn(fn func(agent.Progress)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fn, r.held = fn, false
}

// stop ends the relay: once it returns, fn is not called again.
func (r *relay) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stopped = true
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
}

// deadline is a call's timeout: timeout from the start, started again by
// each progress notification, never beyond cap times timeout in all.
// expire runs when it passes.
type deadline struct {
	mu      sync.Mutex
	timeout time.Duration
	hard    time.Time
	timer   *time.Timer
	capped  bool // the hard limit is what expired
}

func newDeadline(timeout time.Duration, capTimes int, expire func()) *deadline {
	d := &deadline{timeout: timeout, hard: time.Now().Add(timeout * time.Duration(capTimes))}
	d.timer = time.AfterFunc(timeout, expire)
	return d
}

// extend starts the timeout again (progress was made), up to the cap.
func (d *deadline) extend() {
	d.mu.Lock()
	defer d.mu.Unlock()
	now := time.Now()
	next := d.timeout
	if left := d.hard.Sub(now); left <= next {
		next, d.capped = max(left, 0), true
	}
	d.timer.Reset(next)
}

// stop stops the timer.
func (d *deadline) stop() { d.timer.Stop() }

// pause stops the timer while the user decides: waiting for them is not
// the server being slow.
func (d *deadline) pause() { d.timer.Stop() }

// restart starts the timeout and its cap over: the user answered, and the
// server works again.
func (d *deadline) restart() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.hard = time.Now().Add(d.timeout * time.Duration(config.ToolTimeoutCap))
	d.timer.Reset(d.timeout)
}

// hitCap reports whether the cap, not the plain timeout, expired.
func (d *deadline) hitCap() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.capped
}
