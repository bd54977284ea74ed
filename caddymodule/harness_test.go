package caddymodule

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2/caddytest"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/protocol"
	"github.com/llmstream/llmstream/transform/wiretest"
)

// Shared helpers of the failure, leak and log tests: a scripted upstream
// that misbehaves on cue, a strict SSE parser, and per-protocol readers of
// the client's response. The integration tests' chunk, finishChunks,
// sseEvent and freePort (integration_test.go) are reused.

// caddyGlobal is the global options block every test config starts with;
// extra holds more global options (a log block).
func caddyGlobal(extra string) string {
	return `{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
	servers {
		protocols h1 h2c
	}
	` + extra + `
}
`
}

// routeBlock is the site body of one llm_stream route in front of
// upstream (host:port).
func routeBlock(protocol, upstream string, options ...string) string {
	return "\t" + llmStreamBlock(protocol, options...) + "\n\treverse_proxy " + upstream + " {\n\t\tflush_interval -1\n\t}\n"
}

// llmStreamBlock is one llm_stream directive with its options. "format
// text" and "heartbeat 0" are added unless an option sets them, so that a
// test's reply is plain text and no keep-alive lands between the events it
// checks.
func llmStreamBlock(protocol string, options ...string) string {
	has := func(name string) bool {
		for _, o := range options {
			if strings.HasPrefix(strings.TrimSpace(o), name+" ") {
				return true
			}
		}
		return false
	}
	if !has("format") {
		options = append(options, "format text")
	}
	if !has("heartbeat") {
		options = append(options, "heartbeat 0")
	}
	return "llm_stream {\n\t\tprotocol " + protocol + "\n\t\t" + strings.Join(options, "\n\t\t") + "\n\t}"
}

// site is where one loaded config serves.
type site struct {
	addr string // localhost:port
}

// startSite loads a config whose one site has body into the
// process-global test Caddy. Every load serves on a fresh port: after a
// reload the old server may still accept a connection for a moment and
// then close it (its grace period is 1ns; caddyhttp App.Stop notes the
// window), which a test on the old port would see as a reset or EOF.
func startSite(t testing.TB, global, body string) site {
	t.Helper()
	_, port, _ := net.SplitHostPort(freePort(t))
	s := site{addr: "localhost:" + port}
	caddytest.NewTester(t).InitServer(caddyGlobal(global)+"\nhttp://"+s.addr+" {\n"+body+"}\n", "caddyfile")
	return s
}

// url is path on the site.
func (s site) url(path string) string { return "http://" + s.addr + path }

// chatURL is where the tests post chat requests.
func (s site) chatURL() string { return s.url("/v1/chat/completions") }

// newClient returns a client speaking proto ("h1" or "h2c") to Caddy, whose
// idle connections are closed when the test ends.
func newClient(t *testing.T, proto string) *http.Client {
	tr := &http.Transport{}
	if proto == "h2c" {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetUnencryptedHTTP2(true)
	}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// post sends body to Caddy with the given extra headers.
func post(ctx context.Context, client *http.Client, url, body string, header http.Header) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "client-req-1")
	for k, vs := range header {
		req.Header[k] = vs
	}
	return client.Do(req)
}

// scriptedUpstream is a fake OpenAI upstream whose every request runs the
// test's script. It counts requests and reports each request whose context
// ended while the script was waiting (the proxy cancelled it), so a test
// can prove the upstream was let go.
type scriptedUpstream struct {
	*httptest.Server
	requests  atomic.Int32
	cancelled chan struct{} // one value per request the script saw cancelled
	stop      chan struct{} // closed at cleanup: stalled scripts return
}

type script func(u *scriptedUpstream, w http.ResponseWriter, r *http.Request)

func newScriptedUpstream(t *testing.T, s script) *scriptedUpstream {
	u := &scriptedUpstream{cancelled: make(chan struct{}, 4096), stop: make(chan struct{})}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Read the whole body first: net/http notices a closed connection
		// (and cancels r.Context()) only once the body is consumed, and
		// a socket closed with unread data is reset rather than closed.
		_, _ = io.Copy(io.Discard, r.Body)
		u.requests.Add(1)
		s(u, w, r)
	}))
	t.Cleanup(func() {
		close(u.stop)
		u.Close()
	})
	return u
}

// hostPort is the upstream's address for reverse_proxy.
func (u *scriptedUpstream) hostPort() string { return strings.TrimPrefix(u.URL, "http://") }

// stall blocks until the request is cancelled (reported on u.cancelled) or
// the test ends. It reports whether the request was cancelled.
func (u *scriptedUpstream) stall(r *http.Request) bool {
	select {
	case <-r.Context().Done():
		u.cancelled <- struct{}{}
		return true
	case <-u.stop:
		return false
	}
}

// waitCancelled fails the test unless a request was cancelled within d.
func (u *scriptedUpstream) waitCancelled(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case <-u.cancelled:
	case <-time.After(d):
		t.Fatalf("the upstream request was not cancelled within %v", d)
	}
}

// sseHead answers 200 with an event stream and flushes the headers.
func sseHead(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("X-Request-Id", "up-42")
	w.WriteHeader(http.StatusOK)
	_ = http.NewResponseController(w).Flush()
}

// writeFlush writes each piece and flushes it, so that each reaches the
// proxy on its own.
func writeFlush(w http.ResponseWriter, pieces ...string) bool {
	rc := http.NewResponseController(w)
	for _, p := range pieces {
		if _, err := io.WriteString(w, p); err != nil {
			return false
		}
		if rc.Flush() != nil {
			return false
		}
	}
	return true
}

// hangUp cuts the TCP connection under a response that has begun: the
// chunked body is left unterminated, as when an upstream crashes.
func hangUp(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // cut it anyway (HTTP/2 cannot hijack)
	}
	_ = conn.Close()
}

// content is a chunk whose delta is the given content text.
func content(text string) string {
	b, _ := json.Marshal(text)
	return chunk(`{"content":` + string(b) + `}`)
}

// roleChunk opens every scripted reply, as OpenAI's first chunk does.
var roleChunk = chunk(`{"role":"assistant","content":""}`)

// parseSSE parses a whole event-stream body strictly: every event ends
// with a blank line (so a body that stops mid-event is an error), every
// line is a comment, event: or data:, an event has exactly one data line,
// and its data is JSON or [DONE]. Comment-only events are returned with
// the name ":comment".
func parseSSE(raw string) ([]sseEvent, error) {
	if raw == "" {
		return nil, nil
	}
	if !strings.HasSuffix(raw, "\n\n") {
		tail := raw[max(0, len(raw)-80):]
		return nil, fmt.Errorf("the stream ends with a half-written event: …%q", tail)
	}
	var events []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(raw, "\n\n"), "\n\n") {
		var ev sseEvent
		comment, data := false, 0
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, ":"):
				comment = true
			case strings.HasPrefix(line, "event:"):
				ev.Name = strings.TrimSpace(line[len("event:"):])
			case strings.HasPrefix(line, "data:"):
				data++
				ev.Data = strings.TrimPrefix(line[len("data:"):], " ")
			default:
				return nil, fmt.Errorf("not an SSE line: %q in event %q", line, block)
			}
		}
		switch {
		case data == 0 && comment && ev.Name == "":
			events = append(events, sseEvent{Name: ":comment"})
			continue
		case data != 1:
			return nil, fmt.Errorf("event with %d data lines: %q", data, block)
		case ev.Data != "[DONE]" && !json.Valid([]byte(ev.Data)):
			return nil, fmt.Errorf("event data is not JSON: %q", block)
		}
		events = append(events, ev)
	}
	return events, nil
}

// wire is the event as wiretest's readers see one.
func (e sseEvent) wire() encodertest.SSEEvent {
	if e.Name == ":comment" {
		return encodertest.SSEEvent{Comment: true}
	}
	return encodertest.SSEEvent{Name: e.Name, Data: e.Data}
}

// protoSpec is one client protocol as the failure tests drive it: its
// row's facts, and its client (wiretest), which says what to send and
// reads what came back.
type protoSpec struct {
	name     string // the subtest name
	protocol string // the llm_stream protocol
	// client is the protocol's client side; nil when wiretest has none,
	// which fails every test that reads the protocol (collect).
	client *wiretest.Client
	// options are the route options the client's request needs (its
	// request_format, and a model when the body names none).
	options []string
	request string
	// early: the stream opens before the upstream answers, so a refusal is
	// an error event (CONTRACT §6).
	early bool
	// stream: the client gets an event stream (not one JSON body).
	stream bool
	// variant: the spec shares its protocol's route with the one before
	// (an openai client that asked for one JSON body).
	variant bool
	// passes: the protocol passes an upstream's refusal through as it is
	// (the row's PassRefusals: openai, responses).
	passes bool
	// reshapes: it passes the refusal's status and headers, its body in
	// the protocol's own error shape (the row's ReshapeRefusal: anthropic).
	reshapes bool
}

// protoSpecs returns the protocol table's rows as the tests drive them,
// in table order; a protocol whose client may ask for one JSON body
// (ClientChoosesStream) is driven that way too, right after. A row without
// a wiretest client fails the test: nothing could read its responses.
func protoSpecs(t testing.TB) []protoSpec {
	t.Helper()
	for _, ps := range allSpecs {
		if ps.client == nil {
			t.Fatalf("protocol %s has no wiretest client: write one from its document", ps.protocol)
		}
	}
	return allSpecs
}

// allSpecs are the rows as protoSpecs returns them, clients or not.
var allSpecs = func() []protoSpec {
	var specs []protoSpec
	for _, row := range protocol.Protocols() {
		ps := protoSpec{name: row.Name, protocol: row.Name, early: row.EarlyStart, stream: true,
			passes: row.PassRefusals, reshapes: row.ReshapeRefusal != nil}
		if c, err := wiretest.For(row.Name); err == nil {
			ps.client, ps.request = c, c.Request
			if f, ok := protocol.LookupRequestFormat(c.RequestFormat); ok && c.RequestFormat != "" {
				ps.options = append(ps.options, "request_format "+f.Name)
				if f.NoModel {
					ps.options = append(ps.options, "model test-model")
				}
			}
		}
		specs = append(specs, ps)
		if row.ClientChoosesStream {
			ps.name, ps.stream, ps.early, ps.variant = row.Name+"_json", false, false, true
			ps.request = strings.Replace(ps.request, `"stream":true`, `"stream":false`, 1)
			specs = append(specs, ps)
		}
	}
	return specs
}()

// routeSpecs are protoSpecs without the variants: one per route.
func routeSpecs(t testing.TB) []protoSpec {
	var specs []protoSpec
	for _, ps := range protoSpecs(t) {
		if !ps.variant {
			specs = append(specs, ps)
		}
	}
	return specs
}

// TestEveryProtocolDriven checks that the failure tests can drive every
// row of the protocol table: a new protocol comes with its client.
func TestEveryProtocolDriven(t *testing.T) {
	for _, row := range protocol.Protocols() {
		if _, err := wiretest.For(row.Name); err != nil {
			t.Error(err)
		}
	}
}

// result is what the client got, read to the end.
type result struct {
	status int
	header http.Header
	body   string
	events []sseEvent // for an event stream
	answer string     // the answer text delivered
	all    string     // every text delivered: reasoning and answer
	end    outcome
	// recorded is the outcome the handler logged and counted the stream
	// with, and elapsed the time from sending the request to the end of
	// the response (exchange only).
	recorded string
	elapsed  time.Duration
}

// outcome is how a response ended.
type outcome struct {
	kind    string // "completed", "error", or "" when it did not end
	code    string // the error code, when the protocol names one
	message string
}

// collect reads resp to the end and decodes it for ps. Reading must end
// with a clean EOF: a cut connection or a truncated chunked body is an
// error, and so is a read that outlives the request's context (a hang).
func collect(t *testing.T, ps protoSpec, resp *http.Response) result {
	t.Helper()
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading the response: %v (after %d bytes: %q)", err, len(raw), raw)
	}
	res := result{status: resp.StatusCode, header: resp.Header, body: string(raw)}
	if res.isStream() {
		if res.events, err = parseSSE(res.body); err != nil {
			t.Fatalf("%v\nwhole body:\n%s", err, raw)
		}
	}
	read(t, ps, &res)
	return res
}

// isStream reports whether the response is an event stream.
func (res *result) isStream() bool {
	return strings.HasPrefix(res.header.Get("Content-Type"), "text/event-stream")
}

// reporter is what read needs of a *testing.T, so that the leak test's
// workers can collect its complaints instead.
type reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// errorList is a reporter that keeps the errors.
type errorList []string

func (*errorList) Helper() {}
func (e *errorList) Errorf(format string, args ...any) {
	*e = append(*e, fmt.Sprintf(format, args...))
}

// read reads res.body as ps's client does (wiretest): an event stream,
// which must keep every rule of the protocol, or one JSON body, the whole
// reply or an error in the protocol's shape. A JSON body in no shape of
// the protocol's is a refusal passed through as the upstream sent it: its
// case checks the body itself.
func read(t reporter, ps protoSpec, res *result) {
	t.Helper()
	if ps.client == nil {
		t.Errorf("protocol %s has no wiretest client to read its response", ps.protocol)
		return
	}
	// The response echoes the request's id (CONTRACT §5); a stream that
	// repeats it in its events must repeat that one.
	meta := transform.Meta{Stream: res.isStream(), RequestID: res.header.Get("X-Request-Id")}
	seen, err := ps.client.Read([]byte(res.body), meta)
	if err != nil {
		if meta.Stream {
			t.Errorf("the %s stream breaks its protocol's rules: %v\nwhole body:\n%s", ps.protocol, err, res.body)
		}
		return
	}
	res.answer, res.all = seen.Answer, seen.Reasoning+seen.Answer
	res.end = outcome{kind: "completed"}
	if seen.Failed {
		res.end = outcome{kind: "error", code: seen.Code, message: seen.Message}
	}
}

// wantEnd checks how the response ended: its status, and its terminal
// event (or JSON error) with the code, where the protocol carries one, and
// a message containing msg.
func wantEnd(t *testing.T, ps protoSpec, res result, status int, kind, code, msg string) {
	t.Helper()
	if res.status != status {
		t.Errorf("status %d, want %d; body %s", res.status, status, res.body)
	}
	if res.end.kind != kind {
		t.Errorf("ended with %+v, want %s; body:\n%s", res.end, kind, res.body)
	}
	inStream := strings.HasPrefix(res.header.Get("Content-Type"), "text/event-stream")
	if code != "" && (ps.client.Codes || !inStream) && res.end.code != code {
		t.Errorf("code %q, want %q; body:\n%s", res.end.code, code, res.body)
	}
	if !strings.Contains(res.end.message, msg) {
		t.Errorf("message %q does not contain %q", res.end.message, msg)
	}
}

// wantAnswer checks the answer text delivered, exactly.
func wantAnswer(t *testing.T, res result, answer string) {
	t.Helper()
	if res.answer != answer {
		t.Errorf("answer delivered %q, want %q; body:\n%s", res.answer, answer, res.body)
	}
}

// streamReader reads an event stream as it arrives, for tests that act on
// the events they see (release the upstream, hang up).
type streamReader struct {
	events chan sseEvent
	done   chan struct{}
	raw    bytes.Buffer // everything read; safe to use after done
	err    error        // how reading ended (io.EOF when cleanly)
}

func startReading(body io.Reader) *streamReader {
	sr := &streamReader{events: make(chan sseEvent, 1024), done: make(chan struct{})}
	go func() {
		defer close(sr.done)
		defer close(sr.events)
		buf := make([]byte, 4096)
		var pending []byte
		for {
			n, err := body.Read(buf)
			sr.raw.Write(buf[:n])
			pending = append(pending, buf[:n]...)
			for {
				i := bytes.Index(pending, []byte("\n\n"))
				if i < 0 {
					break
				}
				if evs, perr := parseSSE(string(pending[:i+2])); perr == nil && len(evs) == 1 {
					sr.events <- evs[0]
				}
				pending = pending[i+2:]
			}
			if err != nil {
				sr.err = err
				return
			}
		}
	}()
	return sr
}

// next returns the next event within d.
func (sr *streamReader) next(t *testing.T, d time.Duration) (sseEvent, bool) {
	t.Helper()
	select {
	case ev, ok := <-sr.events:
		return ev, ok
	case <-time.After(d):
		t.Fatalf("no event within %v", d)
		return sseEvent{}, false
	}
}

// until reads events until one satisfies match, within d.
func (sr *streamReader) until(t *testing.T, d time.Duration, what string, match func(sseEvent) bool) sseEvent {
	t.Helper()
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-sr.events:
			if !ok {
				t.Fatalf("the stream ended (%v) before %s; read:\n%s", sr.err, what, sr.raw.String())
			}
			if match(ev) {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %s within %v", what, d)
		}
	}
}

// wait waits for the end of the body and returns everything read.
func (sr *streamReader) wait(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case <-sr.done:
	case <-time.After(d):
		t.Fatalf("the stream did not end within %v", d)
	}
	if !errors.Is(sr.err, io.EOF) {
		t.Fatalf("the stream ended with %v, want a clean EOF; read:\n%s", sr.err, sr.raw.String())
	}
	return sr.raw.String()
}

// streamsEnded sums the llm_stream streams_total counter, by outcome: each
// handler invocation that got past request shaping adds one just before it
// returns, so a rise proves the handler returned.
func streamsEnded(t *testing.T) map[string]float64 {
	t.Helper()
	m, err := registerMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(m.streams); err != nil {
		t.Fatal(err)
	}
	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range families {
		for _, metric := range f.GetMetric() {
			for _, l := range metric.GetLabel() {
				if l.GetName() == "outcome" {
					out[l.GetValue()] += metric.GetCounter().GetValue()
					out[""] += metric.GetCounter().GetValue()
				}
			}
		}
	}
	return out
}

// waitEnded waits until n more streams than before ended with outcome
// ("" for any).
func waitEnded(t *testing.T, before map[string]float64, outcome string, n float64, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		now := streamsEnded(t)
		if now[outcome]-before[outcome] >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v streams ended with outcome %q within %v, want %v (all outcomes now %v, before %v)",
				now[outcome]-before[outcome], outcome, d, n, now, before)
		}
		time.Sleep(10 * time.Millisecond) // polling interval, not an assertion
	}
}

// dialRaw opens a plain TCP connection to the site.
func (s site) dialRaw(t *testing.T) net.Conn {
	t.Helper()
	c, err := net.DialTimeout("tcp", s.addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
