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
package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
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
	report(os.Stdout, results, time.Since(start), *c)
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
