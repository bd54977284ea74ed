package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"slices"
	"time"

	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// sample is one reading of the gateway's process, from Caddy's metrics
// (the Prometheus process and Go collectors).
type sample struct {
	at         time.Duration // since the baseline
	open       int           // streams the load had open then
	cpu        float64       // process_cpu_seconds_total
	rss        float64       // process_resident_memory_bytes
	heap       float64       // go_memstats_heap_inuse_bytes
	goroutines float64       // go_goroutines
	fds        float64       // process_open_fds
}

// monitor samples the gateway's metrics.
type monitor struct {
	url     string
	every   time.Duration
	w       io.Writer
	quiet   bool
	client  *http.Client
	t0      time.Time
	base    sample
	samples []sample
}

func newMonitor(url string, every time.Duration, w io.Writer, quiet bool) *monitor {
	return &monitor{url: url, every: every, w: w, quiet: quiet, client: &http.Client{Timeout: 10 * time.Second}}
}

// start takes the baseline, before any stream.
func (m *monitor) start(ctx context.Context) error {
	if m.url == "" {
		return nil
	}
	m.t0 = time.Now()
	s, err := m.read(ctx, 0)
	if err != nil {
		return fmt.Errorf("metrics: %w", err)
	}
	m.base = s
	if !m.quiet {
		fmt.Fprintf(m.w, "sample   %8s %7s %9s %9s %9s %10s %6s\n", "t", "open", "cpu s", "rss MiB", "heap MiB", "goroutines", "fds")
		m.print(s)
	}
	return nil
}

// watch samples every m.every until ctx ends.
func (m *monitor) watch(ctx context.Context, open func() int) error {
	if m.url == "" {
		<-ctx.Done()
		return nil
	}
	if m.t0.IsZero() {
		if err := m.start(ctx); err != nil {
			return err
		}
	}
	t := time.NewTicker(m.every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		s, err := m.read(ctx, open())
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			fmt.Fprintln(m.w, "metrics:", err)
			continue
		}
		m.samples = append(m.samples, s)
		if !m.quiet {
			m.print(s)
		}
	}
}

func (m *monitor) print(s sample) {
	const mib = 1 << 20
	fmt.Fprintf(m.w, "sample   %8v %7d %9.2f %9.1f %9.1f %10.0f %6.0f\n", s.at.Round(time.Second), s.open,
		s.cpu, s.rss/mib, s.heap/mib, s.goroutines, s.fds)
}

// read takes one sample.
func (m *monitor) read(ctx context.Context, open int) (sample, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, m.url, nil)
	if err != nil {
		return sample{}, err
	}
	resp, err := m.client.Do(req)
	if err != nil {
		return sample{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return sample{}, fmt.Errorf("%s: %s", m.url, resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		return sample{}, err
	}
	value := func(name string) float64 {
		f := fams[name]
		if f == nil || len(f.Metric) == 0 {
			return 0
		}
		mt := f.Metric[0]
		switch {
		case mt.Counter != nil:
			return mt.Counter.GetValue()
		case mt.Gauge != nil:
			return mt.Gauge.GetValue()
		case mt.Untyped != nil:
			return mt.Untyped.GetValue()
		}
		return 0
	}
	return sample{
		at: time.Since(m.t0), open: open,
		cpu: value("process_cpu_seconds_total"), rss: value("process_resident_memory_bytes"),
		heap: value("go_memstats_heap_inuse_bytes"), goroutines: value("go_goroutines"), fds: value("process_open_fds"),
	}, nil
}

// report prints the gateway's cost: CPU per stream over the run, and the
// RSS, heap, goroutines and open files per open stream at the sample with
// the most streams open (the median of the samples within 1% of it).
func (m *monitor) report(w io.Writer, streams, peak int64) {
	if m.url == "" || len(m.samples) == 0 {
		return
	}
	last := m.samples[len(m.samples)-1]
	if streams > 0 {
		fmt.Fprintf(w, "gateway  CPU %.0f µs per stream (%.2f s for %d streams)\n",
			(last.cpu-m.base.cpu)/float64(streams)*1e6, last.cpu-m.base.cpu, streams)
	}
	most := 0
	for _, s := range m.samples {
		most = max(most, s.open)
	}
	if most == 0 {
		return
	}
	var rss, heap, gor, fds []float64
	for _, s := range m.samples {
		if float64(s.open) >= 0.99*float64(most) {
			n := float64(s.open)
			rss = append(rss, (s.rss-m.base.rss)/n)
			heap = append(heap, (s.heap-m.base.heap)/n)
			gor = append(gor, (s.goroutines-m.base.goroutines)/n)
			fds = append(fds, (s.fds-m.base.fds)/n)
		}
	}
	fmt.Fprintf(w, "gateway  per open stream at %d open (%d samples): RSS %.1f KiB, heap %.1f KiB, %.2f goroutines, %.2f open files\n",
		most, len(rss), median(rss)/1024, median(heap)/1024, median(gor), median(fds))
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// settle waits up to d for the gateway to come back to its baseline after
// the load: goroutines and open files within slack of it. It returns what
// was left behind when they did not.
func (m *monitor) settle(ctx context.Context, d time.Duration, slack float64) (left string, err error) {
	deadline := time.Now().Add(d)
	for {
		s, err := m.read(ctx, 0)
		if err != nil {
			return "", err
		}
		extraG, extraF := s.goroutines-m.base.goroutines, s.fds-m.base.fds
		if extraG <= slack && extraF <= slack {
			fmt.Fprintf(m.w, "leftover none: %.0f goroutines (baseline %.0f), %.0f open files (baseline %.0f), after %v\n",
				s.goroutines, m.base.goroutines, s.fds, m.base.fds, time.Since(deadline.Add(-d)).Round(time.Second))
			return "", nil
		}
		if time.Now().After(deadline) {
			return fmt.Sprintf("%.0f goroutines (baseline %.0f), %.0f open files (baseline %.0f) after %v",
				s.goroutines, m.base.goroutines, s.fds, m.base.fds, d), nil
		}
		select {
		case <-time.After(time.Second):
		case <-ctx.Done():
			return "", ctx.Err()
		}
	}
}
