package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// reference is the answer a route's completed streams show, for -check.
type reference struct {
	answer string
	count  int
}

// report prints the totals, the outcomes and percentiles by route, and
// with -check what was lost; it returns whether -check failed the run.
func (l *load) report(w io.Writer, elapsed time.Duration) (failed bool) {
	byRoute := map[string][]result{}
	for _, r := range l.results {
		byRoute[r.route] = append(byRoute[r.route], r)
	}
	secs := elapsed.Seconds()
	var events int
	var size int64
	for _, r := range l.results {
		events += r.events
		size += r.bytes
	}
	fmt.Fprintf(w, "streams  %d in %.2fs (peak %d open): %.1f streams/s\n", len(l.results), secs, l.peak.Load(), float64(len(l.results))/secs)
	fmt.Fprintf(w, "events   %d: %.0f events/s, %.2f MB/s of client bytes\n", events, float64(events)/secs, float64(size)/secs/1e6)
	for _, name := range sortedKeys(byRoute) {
		rs := byRoute[name]
		if len(byRoute) > 1 {
			fmt.Fprintf(w, "route    %s: %d streams\n", name, len(rs))
		}
		outcomes := map[string]int{}
		var fb, fe, tot, gaps []time.Duration
		for _, r := range rs {
			k := r.outcome
			if r.fault != "" && !strings.Contains(k, "client") {
				k += " (" + r.fault + " client)"
			}
			outcomes[k]++
			if r.outcome == "ok" {
				fb, fe, tot = append(fb, r.firstByte), append(fe, r.firstEvent), append(tot, r.total)
			}
			if r.fault == "" {
				gaps = append(gaps, r.gaps...)
			}
		}
		for _, k := range sortedKeys(outcomes) {
			fmt.Fprintf(w, "outcome  %-52s %d\n", k, outcomes[k])
		}
		for _, m := range []struct {
			name string
			d    []time.Duration
		}{{"first byte", fb}, {"first event", fe}, {"stream", tot}, {"gap", gaps}} {
			if len(m.d) == 0 {
				continue
			}
			slices.Sort(m.d)
			fmt.Fprintf(w, "%-12s p50 %-10v p90 %-10v p99 %-10v p99.9 %-10v max %v\n", m.name,
				pct(m.d, 50), pct(m.d, 90), pct(m.d, 99), pct(m.d, 99.9), m.d[len(m.d)-1])
		}
		if l.o.check || l.o.convs > 0 {
			if l.checkRoute(w, name, rs) {
				failed = true
			}
		}
	}
	for _, e := range l.convErr[:min(len(l.convErr), 10)] {
		fmt.Fprintln(w, "LOST     conversation:", e)
	}
	if len(l.convErr) > 0 {
		failed = true
	}
	return failed
}

// checkRoute prints what -check found wrong on one route: streams that
// hung, broke their protocol or were cut by the gateway, and answers that
// are not whole.
func (l *load) checkRoute(w io.Writer, name string, rs []result) (failed bool) {
	answers := map[string]int{}
	for _, r := range rs {
		if r.outcome == "ok" {
			answers[r.answer]++
		}
	}
	var ref reference
	for a, n := range answers {
		if n > ref.count || n == ref.count && a < ref.answer {
			ref = reference{a, n}
		}
	}
	l.refs[name] = &ref
	var problems []string
	add := func(format string, args ...any) {
		problems = append(problems, fmt.Sprintf(format, args...))
	}
	var lost int
	for i, r := range rs {
		switch {
		case strings.HasPrefix(r.outcome, "hang"):
			add("stream %d hung: %s", i, r.outcome)
		case r.broken != "":
			add("stream %d broke its protocol: %s", i, r.broken)
		case strings.HasPrefix(r.outcome, "cut") && r.fault == "":
			add("stream %d was cut without the protocol's end: %s", i, r.outcome)
		case !l.o.sameAnswer || l.o.convs > 0:
		case r.outcome == "ok" && r.answer != ref.answer:
			lost++
			add("stream %d completed with another answer (%d bytes, the others' %d)", i, len(r.answer), len(ref.answer))
		case r.partial && !strings.HasPrefix(ref.answer, r.answer):
			lost++
			add("stream %d (%s) showed an answer that is not the start of the whole one", i, r.outcome)
		}
	}
	fmt.Fprintf(w, "check    %d streams read by the %s client: %d problems, %d answers not whole",
		len(rs), rs[0].route, len(problems), lost)
	if ref.count > 0 {
		fmt.Fprintf(w, " (the answer: %d bytes, on %d completed streams)", len(ref.answer), ref.count)
	}
	fmt.Fprintln(w)
	for _, p := range problems[:min(len(problems), 10)] {
		fmt.Fprintln(w, "PROBLEM ", p)
	}
	return len(problems) > 0
}
