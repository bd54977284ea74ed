// Command llmload is llmstream's load tool: it sends streaming chat
// requests to a gateway route at a fixed concurrency, reads every event as
// it arrives, and reports throughput and latency (time to the first byte
// of the body and to the first event, and total stream time) with
// percentiles, plus how each stream ended.
//
//	go run ./cmd/llmload -url http://localhost:8080/gymbro -n 2000 -c 32
//
// Point it at routes backed by llm_mock with `interval 0` to measure the
// gateway alone. It measures; it asserts nothing.
//
// With -pid (Linux), it also reports the CPU time the Caddy process spent
// per stream (user and system, from /proc/<pid>/stat, read before and
// after the run): the cost of a route, mock included when the mock runs
// in the same Caddy. With -admin (Caddy's admin address, whose
// /debug/vars and /debug/pprof it reads), it samples Caddy's Go heap and
// goroutines while the streams run, and reports the peak over the idle
// values before the run, per stream in flight: what a running stream (an
// agent loop's call, for one) holds.
//
//	go run ./cmd/llmload -url http://127.0.0.1:8480/agent2 -n 3000 -c 32 -pid $(pgrep -f 'caddy run')
//	go run ./cmd/llmload -url http://127.0.0.1:8480/agentsleep -n 200 -c 200 -admin http://127.0.0.1:8482
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// result is one stream's measurements.
type result struct {
	status     int
	firstByte  time.Duration
	firstEvent time.Duration
	total      time.Duration
	events     int
	bytes      int64
	outcome    string
}

func main() {
	url := flag.String("url", "http://localhost:8080/gymbro", "the route to load")
	n := flag.Int("n", 1000, "streams in all")
	c := flag.Int("c", 16, "streams at once")
	body := flag.String("body", `{"model":"load","messages":[{"role":"user","content":"hi"}],"stream":true}`,
		"the request body, or @file")
	timeout := flag.Duration("timeout", 2*time.Minute, "bound on each stream")
	pid := flag.Int("pid", 0, "the Caddy process: report its CPU time per stream (Linux /proc)")
	admin := flag.String("admin", "", "Caddy's admin address (http://host:port): report its heap and goroutines while streams run")
	flag.Parse()

	payload := []byte(*body)
	if strings.HasPrefix(*body, "@") {
		b, err := os.ReadFile((*body)[1:])
		if err != nil {
			fmt.Fprintln(os.Stderr, "llmload:", err)
			os.Exit(2)
		}
		payload = b
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *c, DisableCompression: true}}

	results := make([]result, *n)
	var next atomic.Int64
	var wg sync.WaitGroup
	var cpuBefore time.Duration
	if *pid != 0 {
		var err error
		if cpuBefore, err = cpuTime(*pid); err != nil {
			fmt.Fprintln(os.Stderr, "llmload:", err)
			os.Exit(2)
		}
	}
	var mem *memSampler
	if *admin != "" {
		var err error
		if mem, err = startSampling(*admin); err != nil {
			fmt.Fprintln(os.Stderr, "llmload:", err)
			os.Exit(2)
		}
	}
	start := time.Now()
	for range *c {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= *n {
					return
				}
				results[i] = stream(client, *url, payload, *timeout)
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	report(os.Stdout, results, elapsed, *c)
	if *pid != 0 {
		after, err := cpuTime(*pid)
		if err != nil {
			fmt.Fprintln(os.Stderr, "llmload:", err)
			os.Exit(2)
		}
		used := after - cpuBefore
		fmt.Fprintf(os.Stdout, "caddy cpu %v in all, %.0f µs per stream, %.0f%% of one core\n",
			used.Round(time.Millisecond), float64(used.Microseconds())/float64(*n), 100*used.Seconds()/elapsed.Seconds())
	}
	if mem != nil {
		mem.stop(os.Stdout, *c)
	}
}

// cpuTime returns the user and system CPU time process pid used so far:
// fields 14 and 15 of /proc/<pid>/stat, in clock ticks (USER_HZ, 100 on
// Linux).
func cpuTime(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	// pid (comm) state ppid …: comm may hold spaces.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f))
	}
	var ticks int64
	for _, s := range f[11:13] { // utime, stime
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, err
		}
		ticks += v
	}
	return time.Duration(ticks) * (time.Second / 100), nil
}

// memSampler samples Caddy's heap in use and goroutines every 100ms
// through its admin API.
type memSampler struct {
	admin            string
	idleHeap, idleGo uint64
	peakHeap, peakGo uint64
	done             chan struct{}
	stopped          chan struct{}
}

func startSampling(admin string) (*memSampler, error) {
	m := &memSampler{admin: strings.TrimSuffix(admin, "/"), done: make(chan struct{}), stopped: make(chan struct{})}
	heap, gor, err := m.sample()
	if err != nil {
		return nil, err
	}
	m.idleHeap, m.idleGo, m.peakHeap, m.peakGo = heap, gor, heap, gor
	go func() {
		defer close(m.stopped)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-m.done:
				return
			case <-t.C:
			}
			if heap, gor, err := m.sample(); err == nil {
				m.peakHeap, m.peakGo = max(m.peakHeap, heap), max(m.peakGo, gor)
			}
		}
	}()
	return m, nil
}

// sample reads HeapInuse from /debug/vars and the goroutine count from
// /debug/pprof/goroutine?debug=1 ("goroutine profile: total N").
func (m *memSampler) sample() (heap, goroutines uint64, err error) {
	resp, err := http.Get(m.admin + "/debug/vars")
	if err != nil {
		return 0, 0, err
	}
	var vars struct {
		Memstats struct{ HeapInuse uint64 } `json:"memstats"`
	}
	err = json.NewDecoder(resp.Body).Decode(&vars)
	resp.Body.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("%s/debug/vars: %w", m.admin, err)
	}
	resp, err = http.Get(m.admin + "/debug/pprof/goroutine?debug=1")
	if err != nil {
		return 0, 0, err
	}
	line, err := bufio.NewReader(resp.Body).ReadString('\n')
	resp.Body.Close()
	if err != nil {
		return 0, 0, fmt.Errorf("%s/debug/pprof/goroutine: %w", m.admin, err)
	}
	goroutines, err = strconv.ParseUint(strings.TrimSpace(strings.TrimPrefix(line, "goroutine profile: total ")), 10, 64)
	return vars.Memstats.HeapInuse, goroutines, err
}

// stop ends the sampling and reports.
func (m *memSampler) stop(w io.Writer, c int) {
	close(m.done)
	<-m.stopped
	per := func(peak, idle uint64) float64 { return (float64(peak) - float64(idle)) / float64(c) }
	fmt.Fprintf(w, "caddy heap in use: idle %.1f MB, peak %.1f MB, %.1f KB per stream in flight (%d at once)\n",
		float64(m.idleHeap)/1e6, float64(m.peakHeap)/1e6, per(m.peakHeap, m.idleHeap)/1e3, c)
	fmt.Fprintf(w, "caddy goroutines: idle %d, peak %d, %.1f per stream in flight\n", m.idleGo, m.peakGo, per(m.peakGo, m.idleGo))
}

// stream sends one request and reads its events to the end.
func stream(client *http.Client, url string, body []byte, timeout time.Duration) result {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	start := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return result{outcome: "transport: " + trim(err)}
	}
	defer resp.Body.Close()
	r := result{status: resp.StatusCode}
	br := bufio.NewReaderSize(resp.Body, 64<<10)
	var last string // the last event's name, or the type of an aisdk chunk
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if r.bytes == 0 {
				r.firstByte = time.Since(start)
			}
			r.bytes += int64(len(line))
			switch {
			case bytes.HasPrefix(line, []byte("event:")):
				last = string(bytes.TrimSpace(line[len("event:"):]))
			case bytes.HasPrefix(line, []byte("data:")):
				if r.events == 0 {
					r.firstEvent = time.Since(start)
				}
				r.events++
				if bytes.Contains(line, []byte(`"type":"error"`)) || bytes.Contains(line, []byte(`{"error":`)) {
					last = "error"
				}
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err != nil {
			r.total = time.Since(start)
			switch {
			case err != io.EOF:
				r.outcome = "cut: " + trim(err)
			case resp.StatusCode != http.StatusOK:
				r.outcome = fmt.Sprintf("status %d", resp.StatusCode)
			case last == "error":
				r.outcome = "error event"
			default:
				r.outcome = "ok"
			}
			return r
		}
	}
}

func trim(err error) string {
	s := err.Error()
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}

// report prints the totals and percentiles.
func report(w io.Writer, results []result, elapsed time.Duration, c int) {
	outcomes := map[string]int{}
	var events int
	var size int64
	var fb, fe, tot []time.Duration
	for _, r := range results {
		outcomes[r.outcome]++
		events += r.events
		size += r.bytes
		if r.outcome == "ok" {
			fb, fe, tot = append(fb, r.firstByte), append(fe, r.firstEvent), append(tot, r.total)
		}
	}
	secs := elapsed.Seconds()
	fmt.Fprintf(w, "streams  %d in %.2fs at concurrency %d: %.0f streams/s\n", len(results), secs, c, float64(len(results))/secs)
	fmt.Fprintf(w, "events   %d: %.0f events/s, %.1f MB/s of client bytes\n", events, float64(events)/secs, float64(size)/secs/1e6)
	for _, k := range sortedKeys(outcomes) {
		fmt.Fprintf(w, "outcome  %-40s %d\n", k, outcomes[k])
	}
	for _, m := range []struct {
		name string
		d    []time.Duration
	}{{"first byte", fb}, {"first event", fe}, {"stream", tot}} {
		if len(m.d) == 0 {
			continue
		}
		slices.Sort(m.d)
		fmt.Fprintf(w, "%-12s p50 %-10v p90 %-10v p99 %-10v max %v\n", m.name,
			pct(m.d, 50), pct(m.d, 90), pct(m.d, 99), m.d[len(m.d)-1])
	}
}

func pct(d []time.Duration, p int) time.Duration {
	return d[(len(d)-1)*p/100].Round(10 * time.Microsecond)
}

func sortedKeys(m map[string]int) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
