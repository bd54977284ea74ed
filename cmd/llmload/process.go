package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// What -pid and -admin read of the Caddy process: its CPU time from
// /proc, and its heap and goroutines from the admin API, for runs that
// have no metrics endpoint (-metrics reads the same from Prometheus).

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
