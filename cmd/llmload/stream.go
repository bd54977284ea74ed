package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/llmstream/llmstream/transform"
)

// result is one stream's measurements.
type result struct {
	route      string
	fault      string // the client fault it played, "" for none
	status     int
	firstByte  time.Duration
	firstEvent time.Duration
	total      time.Duration
	events     int
	bytes      int64
	// gaps are the times between the reads that completed an event: the
	// pacing the client sees.
	gaps []time.Duration
	// outcome is how the stream ended: ok, error event <code>, http
	// <status>, cut: <why>, hang, or the client's own doing.
	outcome string
	// answer is what the protocol's client assembled (-check); partial
	// says the stream did not complete, so the answer may be a prefix.
	answer  string
	partial bool
	// broken is a protocol rule the stream broke (-check).
	broken string
}

// The outcomes that a client fault makes on purpose.
const (
	outcomeAborted = "aborted by the client"
	outcomeNoread  = "never read by the client"
	outcomeHang    = "hang: no end within -timeout"
)

// stream sends one request of route rt (stream number n) and reads the
// response to its end, playing the client fault due for n.
func (l *load) stream(ctx context.Context, rt *route, n int64, body []byte, header http.Header) result {
	f := l.o.faults
	r := result{route: rt.name}
	switch {
	case every(n, f.abort):
		r.fault = "abort"
	case every(n, f.noread):
		r.fault = "noread"
	case every(n, f.slow):
		r.fault = "slow"
	case every(n, f.slowloris):
		r.fault = "slowloris"
	}
	ctx, cancel := context.WithTimeout(ctx, l.o.timeout)
	defer cancel()
	var reqBody io.Reader = bytes.NewReader(body)
	if r.fault == "slowloris" {
		reqBody = &trickle{ctx: ctx, b: body, gap: f.slowlorisGap}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, rt.url, reqBody)
	if err != nil {
		r.outcome = "request: " + trim(err)
		return r
	}
	req.ContentLength = int64(len(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header[k] = v
	}
	start := time.Now()
	resp, err := l.client.Do(req)
	if err != nil {
		r.total = time.Since(start)
		r.outcome = "transport: " + trim(err)
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			r.outcome = outcomeHang + " (before the response)"
		}
		return r
	}
	defer resp.Body.Close()
	r.status = resp.StatusCode
	keep := l.o.check || l.o.convs > 0 || r.status != http.StatusOK
	if r.fault == "noread" {
		// Headers read, body never: the gateway's writes fill the
		// socket buffers and block, until the client hangs up.
		select {
		case <-time.After(f.noreadHold):
		case <-ctx.Done():
		}
		r.total = time.Since(start)
		r.outcome = outcomeNoread
		return r
	}
	size := 32 << 10
	if r.fault == "slow" {
		size = max(1, f.slowReadBytes)
	}
	buf := make([]byte, size)
	var all, pending []byte
	var last time.Time
	for {
		k, err := resp.Body.Read(buf)
		now := time.Now()
		if k > 0 {
			if r.bytes == 0 {
				r.firstByte = now.Sub(start)
			}
			r.bytes += int64(k)
			all = append(all, buf[:k]...)
			if !keep && len(all) > 4<<10 {
				// Only the end is looked at (errorEvent).
				all = append(all[:0], all[len(all)-512:]...)
			}
			pending = append(pending, buf[:k]...)
			var evs int
			pending, evs = events(pending)
			if evs > 0 {
				if r.events == 0 {
					r.firstEvent = now.Sub(start)
				} else {
					r.gaps = append(r.gaps, now.Sub(last))
				}
				last = now
				r.events += evs
				if r.fault == "abort" {
					r.total = now.Sub(start)
					r.outcome = outcomeAborted
					return r
				}
			}
		}
		if err != nil {
			r.total = time.Since(start)
			l.classify(ctx, &r, rt, all, err)
			return r
		}
		if r.fault == "slow" {
			select {
			case <-time.After(f.slowPause):
			case <-ctx.Done():
			}
		}
	}
}

// events drops the complete lines of b and counts the data lines among
// them; the rest of a line is kept for the next read.
func events(b []byte) ([]byte, int) {
	n := 0
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return b, n
		}
		if bytes.HasPrefix(b[:i], []byte("data:")) {
			n++
		}
		b = b[i+1:]
	}
}

// classify names how a stream ended: from its protocol's client with
// -check, else from its last event.
func (l *load) classify(ctx context.Context, r *result, rt *route, all []byte, readErr error) {
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		r.outcome = outcomeHang
		r.partial = true
		return
	case r.status != http.StatusOK:
		seen, err := rt.client.Read(all, transform.Meta{})
		r.outcome = fmt.Sprintf("http %d", r.status)
		if err == nil && seen.Code != "" {
			r.outcome += " " + seen.Code
		}
		return
	}
	cut := readErr != io.EOF
	if !l.o.check && l.o.convs == 0 {
		switch {
		case cut:
			r.outcome = "cut: " + trim(readErr)
		case errorEvent(all, r):
			r.outcome = "error event"
		default:
			r.outcome = "ok"
		}
		return
	}
	seen, err := rt.client.Read(all, transform.Meta{Stream: true})
	r.answer = seen.Answer
	switch {
	case cut:
		r.outcome, r.partial = "cut: "+trim(readErr), true
	case err != nil:
		r.outcome, r.partial = "broke the protocol", true
		r.broken = trim(err)
	case seen.Failed:
		r.outcome, r.partial = "error event", true
		if seen.Code != "" {
			r.outcome += " " + seen.Code
		}
	default:
		r.outcome = "ok"
	}
}

// errorEvent is the quick look at a stream's end without -check: an error
// event of any protocol among its last bytes.
func errorEvent(all []byte, r *result) bool {
	tail := all[max(0, len(all)-512):]
	return bytes.Contains(tail, []byte(`"type":"error"`)) || bytes.Contains(tail, []byte(`{"error":`)) ||
		bytes.Contains(tail, []byte("event: error")) || bytes.Contains(tail, []byte(`"type":"response.failed"`))
}

// trickle is a slowloris body: one byte a read, gap apart.
type trickle struct {
	ctx context.Context
	b   []byte
	gap time.Duration
	n   int
}

func (t *trickle) Read(p []byte) (int, error) {
	if len(t.b) == 0 {
		return 0, io.EOF
	}
	if t.n > 0 {
		select {
		case <-time.After(t.gap):
		case <-t.ctx.Done():
			return 0, t.ctx.Err()
		}
	}
	t.n++
	p[0] = t.b[0]
	t.b = t.b[1:]
	return 1, nil
}

func trim(err error) string {
	s := err.Error()
	s = strings.ReplaceAll(s, "\n", " ")
	if len(s) > 80 {
		s = s[:80]
	}
	return s
}
