package caddymodule

import (
	"sync"
	"time"
)

// keepalive owns a stream's two timers, the way reverse_proxy's
// maxLatencyWriter owns its flush timer (streaming.go): the idle timer,
// which measures the upstream's silence (idle_timeout) and, once the reply
// completed, how long the upstream may hold its connection open
// (doneGrace); and the heartbeat, which fills the client's silence. It
// decides when; the writer's callbacks decide what goes out.
//
// The timers fire on their own goroutines while the proxy writes on
// another, so mu is the writer's lock: every callback runs with it held,
// and the writer holds it when it calls upstreamActive, wrote and armIdle.
// After stop returns no callback runs, so the writer's pipeline can go back
// to its pool: a callback already waiting for mu finds the keepalive
// stopped.
type keepalive struct {
	mu    *sync.Mutex
	clock clock
	// idle and beat are idle_timeout and the heartbeat interval; 0
	// disables each.
	idle, beat time.Duration

	// ended reports whether the client's stream is over (its terminal
	// event or refusal went out); replyDone whether the upstream's reply
	// is (the stream ended, or a retry is due), nil meaning ended.
	ended, replyDone func() bool
	// onIdle runs when the upstream was silent for idle; onRelease when
	// the idle timer fires after the stream ended (the upstream is let go);
	// onBeat when nothing was written to the client for beat.
	onIdle, onRelease, onBeat func()

	// lastUpstream is when the upstream last sent something (headers or
	// body); lastWrite when the client was last written to.
	lastUpstream, lastWrite time.Time

	idleTimer, beatTimer timer
	stopped              bool
}

// newKeepalive returns a keepalive whose silences are measured from now;
// no timer runs before start.
func newKeepalive(mu *sync.Mutex, c clock, idle, beat time.Duration) *keepalive {
	if c == nil {
		c = systemClock{}
	}
	now := c.Now()
	return &keepalive{mu: mu, clock: c, idle: idle, beat: beat, lastUpstream: now, lastWrite: now}
}

// start arms the idle timer and the heartbeat, each if enabled. It holds mu
// because a short timer can fire before AfterFunc's result is stored, and
// the callbacks re-arm their timers through these fields (a data race, or
// a nil timer).
func (ka *keepalive) start() {
	ka.mu.Lock()
	defer ka.mu.Unlock()
	if ka.idle > 0 {
		ka.armIdle(ka.idle)
	}
	if ka.beat > 0 {
		ka.beatTimer = ka.clock.AfterFunc(ka.beat, ka.beatFired)
	}
}

// stop disarms both timers for good.
func (ka *keepalive) stop() {
	ka.mu.Lock()
	defer ka.mu.Unlock()
	ka.stopped = true
	if ka.idleTimer != nil {
		ka.idleTimer.Stop()
	}
	if ka.beatTimer != nil {
		ka.beatTimer.Stop()
	}
}

// upstreamActive records that the upstream just sent something. The writer
// calls it when its Write returns, so that a client slow to read is not
// mistaken for a silent upstream.
func (ka *keepalive) upstreamActive() { ka.lastUpstream = ka.clock.Now() }

// wrote records a write to the client.
func (ka *keepalive) wrote() { ka.lastWrite = ka.clock.Now() }

// newReply measures the upstream's silence afresh for the next reply of
// the stream (a retry): idle_timeout applies to each reply.
func (ka *keepalive) newReply() {
	ka.lastUpstream = ka.clock.Now()
	switch {
	case ka.idle > 0:
		ka.armIdle(ka.idle)
	case ka.idleTimer != nil:
		ka.idleTimer.Stop() // it may be armed for doneGrace
	}
}

// armIdle (re)arms the idle timer to fire after d.
func (ka *keepalive) armIdle(d time.Duration) {
	if ka.idleTimer == nil {
		ka.idleTimer = ka.clock.AfterFunc(d, ka.idleFired)
		return
	}
	ka.idleTimer.Reset(d)
}

// idleFired runs when the idle timer fires. After the stream ended it lets
// go of the upstream. Otherwise, if the upstream sent something since the
// timer was armed, the timer is re-armed for the rest of idle; if it did
// not, the upstream was silent for idle.
func (ka *keepalive) idleFired() {
	ka.mu.Lock()
	defer ka.mu.Unlock()
	if ka.stopped {
		return
	}
	done := ka.ended
	if ka.replyDone != nil {
		done = ka.replyDone
	}
	if done() {
		ka.onRelease()
		return
	}
	if wait := ka.idle - ka.clock.Now().Sub(ka.lastUpstream); wait > 0 {
		ka.idleTimer.Reset(wait)
		return
	}
	ka.onIdle()
}

// beatFired runs when the heartbeat timer fires: when nothing was written
// for a whole interval it calls onBeat, then re-arms itself; an ended
// stream needs no more.
func (ka *keepalive) beatFired() {
	ka.mu.Lock()
	defer ka.mu.Unlock()
	if ka.stopped || ka.ended() {
		return
	}
	if wait := ka.beat - ka.clock.Now().Sub(ka.lastWrite); wait > 0 {
		ka.beatTimer.Reset(wait)
		return
	}
	ka.onBeat()
	ka.beatTimer.Reset(ka.beat)
}

// clock is the time the keepalive measures silences in; tests inject one
// whose timers fire when the test moves it.
type clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) timer
}

// timer is what keepalive uses of a *time.Timer.
type timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

// systemClock is the real clock.
type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

func (systemClock) AfterFunc(d time.Duration, f func()) timer { return time.AfterFunc(d, f) }
