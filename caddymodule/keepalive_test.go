package caddymodule

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// fakeClock is a clock that moves only when the test advances it; a timer
// that comes due fires then, in the advancing goroutine, in the order of
// its deadlines. Its times are exact, so tests can assert on them.
type fakeClock struct {
	mu     sync.Mutex
	start  time.Time
	now    time.Time
	timers []*fakeTimer
}

func newFakeClock() *fakeClock {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	return &fakeClock{start: t0, now: t0}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// elapsed is the time since the clock was made.
func (c *fakeClock) elapsed() time.Duration { return c.Now().Sub(c.start) }

func (c *fakeClock) AfterFunc(d time.Duration, f func()) timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f, armed: true}
	c.timers = append(c.timers, t)
	return t
}

// advance moves the clock d on, firing each timer that comes due. A
// callback runs without the clock's lock, so it may read the clock and
// re-arm timers; one it re-arms within d fires in the same advance.
func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	target := c.now.Add(d)
	c.mu.Unlock()
	for {
		c.mu.Lock()
		var next *fakeTimer
		for _, t := range c.timers {
			if t.armed && !t.at.After(target) && (next == nil || t.at.Before(next.at)) {
				next = t
			}
		}
		if next == nil {
			c.now = target
			c.mu.Unlock()
			return
		}
		if next.at.After(c.now) {
			c.now = next.at
		}
		next.armed = false
		c.mu.Unlock()
		next.f()
	}
}

type fakeTimer struct {
	c     *fakeClock
	at    time.Time
	f     func()
	armed bool
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.at, t.armed = t.c.now.Add(d), true
	return was
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// keepaliveRun drives one keepalive on a fake clock and logs its callbacks
// as "name@elapsed".
type keepaliveRun struct {
	mu    sync.Mutex
	clock *fakeClock
	ka    *keepalive
	ended bool
	log   []string
}

func newKeepaliveRun(idle, beat time.Duration) *keepaliveRun {
	r := &keepaliveRun{clock: newFakeClock()}
	r.ka = newKeepalive(&r.mu, r.clock, idle, beat)
	r.ka.ended = func() bool { return r.ended }
	note := func(name string) func() {
		return func() { r.log = append(r.log, fmt.Sprintf("%s@%v", name, r.clock.elapsed())) }
	}
	r.ka.onIdle, r.ka.onRelease = note("idle"), note("release")
	beatNote := note("beat")
	r.ka.onBeat = func() {
		beatNote()
		r.ka.wrote() // the writer's heartbeat is a write
	}
	return r
}

// locked runs f as the writer does, with the lock held.
func (r *keepaliveRun) locked(f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	f()
}

// A keepaliveStep is one thing that happens to the stream.
type keepaliveStep func(r *keepaliveRun)

func wait(d time.Duration) keepaliveStep { return func(r *keepaliveRun) { r.clock.advance(d) } }

func upstreamSends(r *keepaliveRun) { r.locked(r.ka.upstreamActive) }
func clientWritten(r *keepaliveRun) { r.locked(r.ka.wrote) }
func streamEnds(r *keepaliveRun)    { r.locked(func() { r.ended = true }) }
func stopTimers(r *keepaliveRun)    { r.ka.stop() }

func armIdle(d time.Duration) keepaliveStep {
	return func(r *keepaliveRun) { r.locked(func() { r.ka.armIdle(d) }) }
}

func TestKeepalive(t *testing.T) {
	const idle, beat = 30 * time.Second, 10 * time.Second
	tests := []struct {
		name       string
		idle, beat time.Duration
		steps      []keepaliveStep
		want       string
	}{
		{"idle_after_silence", idle, 0, []keepaliveStep{wait(time.Minute)}, "idle@30s"},
		{"idle_fires_once", idle, 0, []keepaliveStep{wait(time.Hour)}, "idle@30s"},
		{"idle_measures_the_upstream_not_the_timer", idle, 0, []keepaliveStep{
			wait(20 * time.Second), upstreamSends, wait(20 * time.Second), upstreamSends, wait(time.Minute),
		}, "idle@1m10s"},
		{"client_writes_do_not_feed_the_idle_timer", idle, 0, []keepaliveStep{
			wait(20 * time.Second), clientWritten, wait(20 * time.Second),
		}, "idle@30s"},
		{"idle_disabled", 0, 0, []keepaliveStep{wait(time.Hour)}, ""},
		{"ended_stream_releases_instead", idle, 0, []keepaliveStep{
			wait(10 * time.Second), streamEnds, wait(time.Minute),
		}, "release@30s"},
		{"grace_after_done", 0, 0, []keepaliveStep{
			wait(5 * time.Second), streamEnds, armIdle(time.Second), wait(time.Minute),
		}, "release@6s"},
		{"grace_replaces_the_idle_deadline", idle, 0, []keepaliveStep{
			wait(5 * time.Second), streamEnds, armIdle(time.Second), wait(time.Minute),
		}, "release@6s"},
		{"heartbeats_in_silence", 0, beat, []keepaliveStep{wait(35 * time.Second)}, "beat@10s beat@20s beat@30s"},
		{"writes_postpone_heartbeats", 0, beat, []keepaliveStep{
			wait(8 * time.Second), clientWritten, wait(8 * time.Second), clientWritten, wait(15 * time.Second),
		}, "beat@26s"},
		{"upstream_bytes_do_not_postpone_heartbeats", 0, beat, []keepaliveStep{
			wait(8 * time.Second), upstreamSends, wait(5 * time.Second),
		}, "beat@10s"},
		{"no_heartbeat_after_the_end", 0, beat, []keepaliveStep{
			wait(15 * time.Second), streamEnds, wait(time.Minute),
		}, "beat@10s"},
		{"both_timers", idle, beat, []keepaliveStep{wait(35 * time.Second)}, "beat@10s beat@20s idle@30s beat@30s"},
		{"stop_silences_both", idle, beat, []keepaliveStep{
			wait(15 * time.Second), stopTimers, wait(time.Hour),
		}, "beat@10s"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newKeepaliveRun(tt.idle, tt.beat)
			r.ka.start()
			for _, step := range tt.steps {
				step(r)
			}
			if got := strings.Join(r.log, " "); got != tt.want {
				t.Errorf("callbacks %q, want %q", got, tt.want)
			}
		})
	}
}

// TestKeepaliveStoppedCallback: a timer that fired just before stop runs
// its callback once stop released the lock. It must do nothing: the
// writer's pipeline may already be back in its pool.
func TestKeepaliveStoppedCallback(t *testing.T) {
	r := newKeepaliveRun(time.Second, time.Second)
	r.ka.start()
	r.clock.mu.Lock()
	r.clock.now = r.clock.now.Add(time.Hour) // both are due, neither has run
	r.clock.mu.Unlock()
	r.ka.stop()
	r.ka.idleFired()
	r.ka.beatFired()
	if len(r.log) != 0 {
		t.Errorf("callbacks after stop: %q", r.log)
	}
}

// TestKeepaliveSystemClock runs the keepalive on real timers, on their own
// goroutines (run it with -race): the idle callback and a heartbeat come,
// under the lock, and none after stop returned.
func TestKeepaliveSystemClock(t *testing.T) {
	var mu sync.Mutex
	ka := newKeepalive(&mu, nil, time.Millisecond, time.Millisecond)
	idle, beat := make(chan struct{}), make(chan struct{})
	stopped, beats := false, 0
	ka.ended = func() bool { return false }
	ka.onIdle = func() {
		if stopped {
			t.Error("idle callback after stop")
		}
		close(idle)
	}
	ka.onRelease = func() { t.Error("release: the stream did not end") }
	ka.onBeat = func() {
		if stopped {
			t.Error("heartbeat after stop")
		}
		if beats++; beats == 1 {
			close(beat)
		}
		ka.wrote()
	}
	ka.start()
	for _, c := range []chan struct{}{idle, beat} {
		select {
		case <-c:
		case <-time.After(10 * time.Second):
			t.Fatal("a timer never fired")
		}
	}
	ka.stop()
	mu.Lock()
	stopped = true
	mu.Unlock()
	time.Sleep(5 * time.Millisecond) // a window for a stray callback, not an assertion on time
}
