// Command llmload is llmstream's load and fault harness: it opens streams
// to gateway routes, closed-loop (a fixed number at once) or open-loop (a
// fixed arrival rate, whether or not earlier streams ended), reads every
// event as it arrives, and reports how the streams ended, their latency
// (first byte, first event, whole stream) and the gaps between the
// client's reads, with percentiles. It can
//
//   - send each route its protocol's request (the protocol clients of
//     transform/wiretest, which also read the streams back: -check says
//     whether each stream kept its protocol's rules, ended with the
//     protocol's own error event or was cut, and whether the answer is
//     whole: the same on every completed stream of a route, a prefix of
//     it on a failed one);
//
//   - misbehave as clients do (-abort, -slow, -noread, -slowloris: every
//     N-th stream);
//
//   - hold conversations (-conversations: skillpet turns, each user its
//     own project, the history checked at the end);
//
//   - sample the gateway's own metrics (-metrics: Caddy's admin /metrics,
//     process and Go collectors) to give CPU per stream, RSS, heap,
//     goroutines and open files per open stream, and their course over a
//     soak;
//
//   - without a metrics endpoint, read the Caddy process itself: -pid
//     (Linux) reports the CPU time it spent per stream (user and system,
//     from /proc/<pid>/stat, before and after the run: mock included when
//     the mock runs in the same Caddy), and -admin (Caddy's admin address)
//     samples its Go heap and goroutines while the streams run and reports
//     the peak over the idle values per stream in flight (what a running
//     stream, an agent loop's call for one, holds).
//
//     go run ./cmd/llmload -url http://127.0.0.1:8480/gymbro -n 2000 -c 32
//     go run ./cmd/llmload -url gymbro=http://127.0.0.1:8480/gymbro,openai=http://127.0.0.1:8480/openai \
//     -rate 50 -duration 1h -metrics http://127.0.0.1:2019/metrics -sample 1m
//     go run ./cmd/llmload -url http://127.0.0.1:8480/agent2 -n 3000 -c 32 -pid $(pgrep -f 'caddy run')
//     go run ./cmd/llmload -url http://127.0.0.1:8480/agentsleep -n 200 -c 200 -admin http://127.0.0.1:8482
//
// Faults on the upstream side are llm_mock's (fault), and on the tool
// servers' llmstream-demo-mcp's (--fault); examples/load/run.sh puts the
// pieces together. It exits 1 when -check found a stream that broke its
// protocol, lost text, or hung, so that a short run can gate CI.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/llmstream/llmstream/transform/wiretest"
)

// options are the command's flags.
type options struct {
	routes      []route
	n, c        int
	rate        float64
	duration    time.Duration
	ramp        time.Duration
	timeout     time.Duration
	check       bool
	sameAnswer  bool
	metrics     string
	sample      time.Duration
	convs       int
	turns       int
	faults      clientFaults
	quiet       bool
	monitorOnly bool
	leftovers   time.Duration
	slack       float64
	pid         int    // the Caddy process whose CPU time per stream is reported (/proc)
	admin       string // Caddy's admin address: heap and goroutines per stream in flight
}

// clientFaults are the client-side faults: each applies to every N-th
// stream (0: none), counted from 1 in start order.
type clientFaults struct {
	abort         int           // hang up after the first event
	slow          int           // read slowly: slowRead bytes, then a pause
	slowPause     time.Duration // the slow reader's pause
	noread        int           // never read the body; hang up after noreadHold
	noreadHold    time.Duration
	slowloris     int           // send the request body a byte at a time
	slowlorisGap  time.Duration // between two bytes
	slowReadBytes int
}

// route is one route under load: its URL and its protocol, whose client
// sends the request and reads the stream.
type route struct {
	name   string // as given, for the report
	url    string
	proto  string
	client *wiretest.Client
	body   []byte
}

func main() {
	o, err := parseFlags(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmload:", err)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	failed, err := run(ctx, o, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "llmload:", err)
		os.Exit(2)
	}
	if failed {
		os.Exit(1)
	}
}

func parseFlags(args []string) (options, error) {
	fs := flag.NewFlagSet("llmload", flag.ContinueOnError)
	var o options
	urls := fs.String("url", "http://localhost:8080/gymbro",
		"the routes to load, comma-separated: [protocol=]URL (the protocol defaults to the URL's last path element when it names one, else -proto)")
	proto := fs.String("proto", "openai", "the protocol of routes whose URL does not name one (its client's request body, and how its streams are read)")
	body := fs.String("body", "", "the request body, or @file, instead of the protocol client's")
	fs.IntVar(&o.n, "n", 0, "streams in all (0: as many as -duration allows; closed loop without -duration: 1000)")
	fs.IntVar(&o.c, "c", 16, "closed loop: streams at once; open loop (-rate): at most this many open (0: no bound)")
	fs.Float64Var(&o.rate, "rate", 0, "open loop: new streams a second, at a steady pace, whether or not earlier ones ended")
	fs.DurationVar(&o.duration, "duration", 0, "stop starting streams after this long")
	fs.DurationVar(&o.ramp, "ramp", 0, "closed loop: spread the first streams' starts over this long (10,000 connections at once overflow the listen backlog)")
	fs.DurationVar(&o.timeout, "timeout", 2*time.Minute, "bound on each stream: one still open then is a hang")
	fs.BoolVar(&o.check, "check", false, "read each stream with its protocol's client: its rules, its ending, its answer whole")
	fs.BoolVar(&o.sameAnswer, "same-answer", true, "with -check: every completed stream of a route shows the same answer (off when replies vary, e.g. tool faults)")
	fs.StringVar(&o.metrics, "metrics", "", "the gateway's Prometheus metrics URL (Caddy admin /metrics), sampled every -sample")
	fs.DurationVar(&o.sample, "sample", 10*time.Second, "the metrics sampling interval")
	fs.IntVar(&o.convs, "conversations", 0, "hold this many skillpet conversations (the route's protocol must be skillpet): each user sends -turns turns in a row, and the history is checked at the end")
	fs.IntVar(&o.turns, "turns", 3, "turns per conversation")
	fs.IntVar(&o.faults.abort, "abort", 0, "every N-th stream hangs up after its first event")
	fs.IntVar(&o.faults.slow, "slow", 0, "every N-th stream reads slowly (-slow-read bytes, then -slow-pause)")
	fs.DurationVar(&o.faults.slowPause, "slow-pause", 100*time.Millisecond, "the slow reader's pause between reads")
	fs.IntVar(&o.faults.slowReadBytes, "slow-read", 64, "the slow reader's bytes per read")
	fs.IntVar(&o.faults.noread, "noread", 0, "every N-th stream never reads its body, and hangs up after -noread-hold")
	fs.DurationVar(&o.faults.noreadHold, "noread-hold", 10*time.Second, "how long a client that never reads holds its connection")
	fs.IntVar(&o.faults.slowloris, "slowloris", 0, "every N-th stream sends its request body a byte at a time")
	fs.DurationVar(&o.faults.slowlorisGap, "slowloris-gap", 50*time.Millisecond, "the pause between two bytes of a slowloris body")
	fs.BoolVar(&o.quiet, "quiet", false, "print only the summary, not the metric samples as they come")
	fs.DurationVar(&o.leftovers, "leftovers", 0, "after the load, wait up to this long for the gateway's goroutines and open files to come back to their baseline (-metrics), and fail the run if they do not")
	fs.Float64Var(&o.slack, "slack", 20, "goroutines and open files above the baseline that -leftovers allows (idle pooled connections: Redis, upstream keep-alive)")
	fs.BoolVar(&o.monitorOnly, "monitor", false, "only sample -metrics, every -sample, for -duration (no streams): watch a soak from outside")
	fs.IntVar(&o.pid, "pid", 0, "the Caddy process: report its CPU time per stream (Linux /proc), mock included when the mock runs in the same Caddy")
	fs.StringVar(&o.admin, "admin", "", "Caddy's admin address (http://host:port): sample its heap in use and goroutines every 100ms (/debug/vars, /debug/pprof) and report the peak over idle per stream in flight")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	var payload []byte
	if *body != "" {
		payload = []byte(*body)
		if strings.HasPrefix(*body, "@") {
			b, err := os.ReadFile((*body)[1:])
			if err != nil {
				return o, err
			}
			payload = b
		}
	}
	for _, spec := range strings.Split(*urls, ",") {
		r := route{name: spec, url: spec, proto: *proto}
		if p, u, ok := strings.Cut(spec, "="); ok && !strings.Contains(p, "/") {
			r.proto, r.url = p, u
		} else if last := spec[strings.LastIndexByte(spec, '/')+1:]; isProtocol(last) {
			r.proto = last
		}
		c, err := wiretest.For(r.proto)
		if err != nil {
			return o, err
		}
		r.client, r.body = c, []byte(c.Request)
		if payload != nil {
			r.body = payload
		}
		o.routes = append(o.routes, r)
	}
	switch {
	case o.monitorOnly && (o.metrics == "" || o.duration == 0):
		return o, errors.New("-monitor needs -metrics and -duration")
	case o.leftovers > 0 && o.metrics == "":
		return o, errors.New("-leftovers needs -metrics")
	case o.rate < 0 || o.c < 0 || o.n < 0:
		return o, errors.New("-rate, -c and -n must not be negative")
	case o.rate == 0 && o.c == 0:
		return o, errors.New("a closed loop needs -c > 0")
	case o.convs > 0 && (o.rate > 0 || len(o.routes) != 1 || o.routes[0].proto != "skillpet"):
		return o, errors.New("-conversations runs closed-loop on one skillpet route")
	}
	if o.n == 0 && o.duration == 0 && o.convs == 0 {
		o.n = 1000
	}
	return o, nil
}

func isProtocol(name string) bool {
	_, err := wiretest.For(name)
	return err == nil
}

// run runs the load and reports it to w; failed says -check found a
// stream that broke the rules, lost text or hung.
func run(ctx context.Context, o options, w io.Writer) (failed bool, err error) {
	mon := newMonitor(o.metrics, o.sample, w, o.quiet)
	if o.monitorOnly {
		ctx, cancel := context.WithTimeout(ctx, o.duration)
		defer cancel()
		return false, mon.watch(ctx, func() int { return 0 })
	}
	conns := o.c
	if o.convs > 0 {
		conns = o.convs
	}
	transport := &http.Transport{
		MaxIdleConnsPerHost: max(conns, 64), DisableCompression: true,
		// Streams are long and many: no pooled connection is shared by
		// two at once anyway.
		MaxConnsPerHost: 0,
	}
	client := &http.Client{Transport: transport}
	defer transport.CloseIdleConnections()

	l := &load{o: o, client: client, refs: map[string]*reference{}}
	var cpuBefore time.Duration
	if o.pid != 0 {
		if cpuBefore, err = cpuTime(o.pid); err != nil {
			return false, err
		}
	}
	var mem *memSampler
	if o.admin != "" {
		if mem, err = startSampling(o.admin); err != nil {
			return false, err
		}
	}
	if err := mon.start(ctx); err != nil {
		return false, err
	}
	monCtx, stopMon := context.WithCancel(ctx)
	monDone := make(chan error, 1)
	go func() { monDone <- mon.watch(monCtx, func() int { return int(l.open.Load()) }) }()

	start := time.Now()
	switch {
	case o.convs > 0:
		l.conversations(ctx)
	case o.rate > 0:
		l.openLoop(ctx)
	default:
		l.closedLoop(ctx)
	}
	elapsed := time.Since(start)
	stopMon()
	if err := <-monDone; err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintln(w, "metrics:", err)
	}
	transport.CloseIdleConnections()
	failed = l.report(w, elapsed)
	mon.report(w, l.done.Load(), l.peak.Load())
	if o.pid != 0 {
		after, err := cpuTime(o.pid)
		if err != nil {
			return failed, err
		}
		used := after - cpuBefore
		fmt.Fprintf(w, "caddy cpu %v in all, %.0f µs per stream, %.0f%% of one core\n",
			used.Round(time.Millisecond), float64(used.Microseconds())/float64(max(l.done.Load(), 1)), 100*used.Seconds()/elapsed.Seconds())
	}
	if mem != nil {
		mem.stop(w, max(int(l.peak.Load()), 1))
	}
	if o.leftovers > 0 {
		left, err := mon.settle(ctx, o.leftovers, o.slack)
		if err != nil {
			return failed, err
		}
		if left != "" {
			fmt.Fprintln(w, "LEFTOVER", left)
			failed = true
		}
	}
	return failed, nil
}

// load is one run's state.
type load struct {
	o      options
	client *http.Client

	started, done atomic.Int64
	open, peak    atomic.Int64

	mu      sync.Mutex
	results []result
	refs    map[string]*reference // route name: its reference answer
	convErr []string
}

// begin counts a stream as open.
func (l *load) begin() int64 {
	n := l.open.Add(1)
	for p := l.peak.Load(); n > p && !l.peak.CompareAndSwap(p, n); p = l.peak.Load() {
	}
	return l.started.Add(1)
}

// end records a finished stream.
func (l *load) end(r result) {
	l.open.Add(-1)
	l.done.Add(1)
	l.mu.Lock()
	if !l.o.check && l.o.convs == 0 {
		r.answer = "" // kept only for the check
	}
	l.results = append(l.results, r)
	l.mu.Unlock()
}

// more reports whether stream number n (from 1) is to be started.
func (l *load) more(ctx context.Context, n int64, deadline time.Time) bool {
	switch {
	case ctx.Err() != nil:
		return false
	case l.o.n > 0 && n > int64(l.o.n):
		return false
	case l.o.duration > 0 && time.Now().After(deadline):
		return false
	}
	return true
}

// closedLoop keeps -c streams open: each worker starts its next stream
// when its last one ends.
func (l *load) closedLoop(ctx context.Context) {
	deadline := time.Now().Add(l.o.duration)
	var next atomic.Int64
	var wg sync.WaitGroup
	for i := range l.o.c {
		wg.Go(func() {
			if l.o.ramp > 0 {
				select {
				case <-time.After(l.o.ramp * time.Duration(i) / time.Duration(l.o.c)):
				case <-ctx.Done():
					return
				}
			}
			for {
				n := next.Add(1)
				if !l.more(ctx, n, deadline) {
					return
				}
				l.one(ctx, n)
			}
		})
	}
	wg.Wait()
}

// openLoop starts -rate streams a second at a steady pace, whether or not
// the earlier ones ended, at most -c open (a start that would exceed it is
// counted as skipped, not delayed: an open loop does not slow down).
func (l *load) openLoop(ctx context.Context) {
	deadline := time.Now().Add(l.o.duration)
	every := time.Duration(float64(time.Second) / l.o.rate)
	tick := time.NewTicker(every)
	defer tick.Stop()
	var wg sync.WaitGroup
	var n int64
	for {
		n++
		if !l.more(ctx, n, deadline) {
			break
		}
		if l.o.c > 0 && l.open.Load() >= int64(l.o.c) {
			l.end(result{outcome: "skipped: -c streams open", route: "-"})
			l.open.Add(1) // end counted it as closing one
		} else {
			wg.Go(func() { l.one(ctx, n) })
		}
		select {
		case <-tick.C:
		case <-ctx.Done():
		}
	}
	wg.Wait()
}

// one runs stream number n (from 1) on its route, with its fault.
func (l *load) one(ctx context.Context, n int64) {
	rt := &l.o.routes[int(n-1)%len(l.o.routes)]
	l.begin()
	r := l.stream(ctx, rt, n, rt.body, nil)
	l.end(r)
}

// every reports whether stream n is one of every k-th (k > 0).
func every(n int64, k int) bool { return k > 0 && n%int64(k) == 0 }

// pct returns the p-th percentile of sorted d.
func pct(d []time.Duration, p float64) time.Duration {
	return d[int(float64(len(d)-1)*p/100)].Round(10 * time.Microsecond)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
