package caddymodule

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"

	"github.com/llmstream/llmstream/config"
)

// streamKind is one outcome the leak test mixes.
type streamKind int

const (
	kindCompleted  streamKind = iota // a whole reply
	kindBroken                       // the upstream hangs up mid-stream
	kindClientGone                   // the client hangs up mid-stream
	kindTimeout                      // the upstream stalls past idle_timeout
	kindRefused                      // the upstream answers 429
	kindRejected                     // the body is not JSON: no upstream call
	numKinds
)

var kindNames = [...]string{"completed", "broken", "client_gone", "timeout", "refused", "rejected"}

// TestNoLeaksAfterManyStreams runs 1,000 streams of mixed outcomes over
// every protocol, 16 at a time, with heartbeats firing every 5ms, and then
// checks that the goroutine count returns to where it was and that every
// handler returned. Run it with -race: a heartbeat or idle callback that
// touched a pipeline after it went back to the pool would be a data race
// with the next request that took it.
func TestNoLeaksAfterManyStreams(t *testing.T) {
	if testing.Short() {
		t.Skip("caddytest integration test")
	}
	const (
		streams     = 1000
		concurrency = 16
		idle        = 500 * time.Millisecond
	)
	u := newScriptedUpstream(t, func(u *scriptedUpstream, w http.ResponseWriter, r *http.Request) {
		switch r.URL.Query().Get("kind") {
		case "completed":
			sseHead(w)
			writeFlush(w, roleChunk, content("Hello "), content("world"), finishChunks)
		case "broken":
			sseHead(w)
			if writeFlush(w, roleChunk, content("Hello ")) {
				hangUp(w)
			}
		case "refused":
			refusal(http.StatusTooManyRequests, "application/json", rateLimitBody)(u, w, r)
		default: // client_gone, timeout
			sseHead(w)
			writeFlush(w, roleChunk, content("Hello "))
			u.stall(r)
		}
	})
	specs := protoSpecs(t)
	var routes strings.Builder
	for _, ps := range routeSpecs(t) {
		opts := append(append([]string{}, ps.options...), "heartbeat 5ms", "idle_timeout "+idle.String())
		fmt.Fprintf(&routes, "\thandle /%s/* {\n\t\t%s\n\t\treverse_proxy %s {\n\t\t\tflush_interval -1\n\t\t}\n\t}\n",
			ps.protocol, llmStreamBlock(ps.protocol, opts...), u.hostPort())
	}
	srv := startSite(t, "", routes.String())
	client := newClient(t, "h1")

	run := func(i int) (rejected bool, err error) {
		kind := streamKind(i % int(numKinds))
		ps := specs[(i/int(numKinds))%len(specs)]
		return kind == kindRejected, oneStream(client, srv, ps, kind)
	}
	settle := func() {
		client.CloseIdleConnections()
		u.CloseClientConnections() // Caddy's pooled upstream connections
	}

	// Warm up every path once, so that lazily started goroutines (pools,
	// the proxy's transport) are part of the baseline.
	for i := range 2 * int(numKinds) * len(specs) {
		if _, err := run(i); err != nil {
			t.Fatalf("warm-up stream %d: %v", i, err)
		}
	}
	settle()
	base := stableGoroutines(t)
	before := streamsEnded(t)

	start := time.Now()
	var (
		next     atomic.Int64
		rejected atomic.Int64
		wg       sync.WaitGroup
		errMu    sync.Mutex
		errs     []string
	)
	for range concurrency {
		wg.Go(func() {
			for i := int(next.Add(1)) - 1; i < streams; i = int(next.Add(1)) - 1 {
				rej, err := run(i)
				if rej {
					rejected.Add(1)
				}
				if err != nil {
					errMu.Lock()
					errs = append(errs, fmt.Sprintf("stream %d (%s): %v", i, kindNames[i%int(numKinds)], err))
					errMu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	t.Logf("%d streams in %v", streams, time.Since(start))
	for _, e := range errs[:min(len(errs), 20)] {
		t.Error(e)
	}

	// Every handler that got past request shaping returned.
	waitEnded(t, before, "", float64(streams-rejected.Load()), 10*time.Second)
	after := streamsEnded(t)
	for k, v := range after {
		if d := v - before[k]; d > 0 && k != "" {
			t.Logf("outcome %s: %v", k, d)
		}
	}

	// Goroutines: back to the baseline, give or take a few that the
	// runtime and net/http start and stop on their own.
	settle()
	const slack = 5
	deadline := time.Now().Add(10 * time.Second)
	for n := runtime.NumGoroutine(); n > base+slack; n = runtime.NumGoroutine() {
		if time.Now().After(deadline) {
			var buf bytes.Buffer
			_ = pprof.Lookup("goroutine").WriteTo(&buf, 1)
			t.Fatalf("%d goroutines, baseline %d:\n%s", n, base, buf.String())
		}
		settle()
		time.Sleep(20 * time.Millisecond) // polling interval, not an assertion
	}
}

// stableGoroutines waits until the goroutine count stops changing and
// returns it.
func stableGoroutines(t *testing.T) int {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	prev := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond) // polling interval
		n := runtime.NumGoroutine()
		if n == prev {
			return n
		}
		prev = n
	}
	return prev
}

// oneStream runs one stream of the given kind and checks its outcome.
func oneStream(client *http.Client, srv site, ps protoSpec, kind streamKind) error {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	body := ps.request
	if kind == kindRejected {
		body = "not JSON"
	}
	if kind == kindClientGone && !ps.stream {
		// No event to wait for: the client gives up after a moment.
		var stop context.CancelFunc
		ctx, stop = context.WithTimeout(ctx, 50*time.Millisecond)
		defer stop()
	}
	url := srv.url("/" + ps.protocol + "/v1/chat/completions?kind=" + kindNames[kind])
	resp, err := post(ctx, client, url, body, nil)
	if err != nil {
		if kind == kindClientGone {
			return nil
		}
		return err
	}
	defer resp.Body.Close()
	if kind == kindClientGone {
		// Hang up once the first answer text arrived.
		buf := make([]byte, 4096)
		var got []byte
		for !bytes.Contains(got, []byte("Hello")) {
			n, err := resp.Body.Read(buf)
			got = append(got, buf[:n]...)
			if err != nil {
				return nil // the 50ms client gave up
			}
		}
		cancel()
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("reading: %v", err)
	}
	status, wantKind := http.StatusOK, "error"
	switch {
	case kind == kindRejected:
		status = http.StatusBadRequest
	case kind == kindCompleted:
		wantKind = "completed"
	case kind == kindRefused && ps.passes:
		status = http.StatusTooManyRequests
	case kind == kindRefused && !ps.early, kind == kindBroken && !ps.stream: // skillpet, a one-body client
		status = http.StatusBadGateway
	case kind == kindTimeout && !ps.stream:
		status = http.StatusGatewayTimeout
	}
	if resp.StatusCode != status {
		return fmt.Errorf("status %d, want %d: %s", resp.StatusCode, status, raw)
	}
	if ct := resp.Header.Get("Content-Type"); strings.HasPrefix(ct, "text/event-stream") {
		events, err := parseSSE(string(raw))
		if err != nil {
			return err
		}
		var problems errorList
		res := result{status: resp.StatusCode, header: resp.Header, body: string(raw), events: events}
		read(&problems, ps, &res)
		if len(problems) > 0 || res.end.kind != wantKind {
			return fmt.Errorf("ended with %+v, want %s (%v): %s", res.end, wantKind, problems, raw)
		}
	}
	return nil
}

// lateWriter is a ResponseWriter that notes any use after its request
// ended: a heartbeat or idle timer that outlived the request.
type lateWriter struct {
	*httptest.ResponseRecorder
	mu   sync.Mutex
	done bool
	late int
}

func (w *lateWriter) touch() {
	w.mu.Lock()
	if w.done {
		w.late++
	}
	w.mu.Unlock()
}

func (w *lateWriter) Write(p []byte) (int, error) { w.touch(); return w.ResponseRecorder.Write(p) }
func (w *lateWriter) WriteHeader(s int)           { w.touch(); w.ResponseRecorder.WriteHeader(s) }
func (w *lateWriter) Flush()                      { w.touch(); w.ResponseRecorder.Flush() }

func (w *lateWriter) end() {
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// TestTimersStopWithTheRequest drives the handler directly (no server)
// with a 1ms heartbeat and a 2ms idle timeout, over requests that end
// every way the timers care about: completed, timed out mid-stream, timed
// out before the upstream answered, refused. After each ServeHTTP returns,
// its writer must never be touched again, however long the timers had
// left. With -race, a callback that reached the pooled pipeline after
// that would also be reported as a race with the next request.
func TestTimersStopWithTheRequest(t *testing.T) {
	for _, ps := range protoSpecs(t) {
		t.Run(ps.name, func(t *testing.T) {
			h := unitHandler(t, ps, time.Millisecond, 2*time.Millisecond)
			var writers []*lateWriter
			for i := range 200 {
				next := scriptedNext(i % 4)
				w := &lateWriter{ResponseRecorder: httptest.NewRecorder()}
				r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(ps.request))
				if err := h.ServeHTTP(w, r, next); err != nil {
					t.Fatal(err)
				}
				w.end()
				writers = append(writers, w)
			}
			// Give any timer that survived its request several of its
			// intervals to fire.
			<-time.After(20 * time.Millisecond)
			for i, w := range writers {
				w.mu.Lock()
				if w.late > 0 {
					t.Errorf("request %d: its writer was used %d times after ServeHTTP returned", i, w.late)
				}
				w.mu.Unlock()
			}
		})
	}
}

// unitHandler provisions an llm_stream handler for ps outside any server,
// with the given heartbeat and idle timeout.
func unitHandler(t *testing.T, ps protoSpec, heartbeat, idle time.Duration) *Handler {
	t.Helper()
	hb, it := config.Duration(heartbeat), config.Duration(idle)
	h := &Handler{Route: config.Route{Protocol: ps.protocol, Format: "text", Heartbeat: &hb, IdleTimeout: &it}}
	for _, o := range ps.options {
		switch name, value, _ := strings.Cut(o, " "); name {
		case "request_format":
			h.RequestFormat = value
		case "model":
			h.Model = value
		}
	}
	ctx, cancel := caddy.NewContext(caddy.Context{Context: context.Background()})
	t.Cleanup(cancel)
	if err := h.Provision(ctx); err != nil {
		t.Fatal(err)
	}
	return h
}

// scriptedNext stands in for reverse_proxy: 0 streams a whole reply, 1
// stalls mid-stream until cancelled, 2 stalls before answering until
// cancelled (as the proxy does, it then records 499), 3 refuses.
func scriptedNext(mode int) caddyhttp.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		switch mode {
		case 0, 1:
			w.Header().Set("Content-Type", "text/event-stream")
			w.WriteHeader(http.StatusOK)
			_, _ = io.WriteString(w, roleChunk+content("Hello "))
			if mode == 0 {
				_, _ = io.WriteString(w, finishChunks)
				return nil
			}
			<-r.Context().Done()
		case 2:
			<-r.Context().Done()
			w.WriteHeader(499)
		case 3:
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusTooManyRequests)
			_, _ = io.WriteString(w, rateLimitBody)
		}
		return nil
	}
}
