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
	"github.com/llmstream/llmstream/transform/pipeline"
	"github.com/prometheus/client_golang/prometheus"
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

// protoSpec is one client protocol as the failure tests drive it: the
// route options and request it needs, and how to read what it delivered.
type protoSpec struct {
	name     string // the subtest name
	protocol string // the llm_stream protocol
	options  []string
	request  string
	// codes reports whether its in-stream error names the code (skillpet's
	// error event and aisdk's error part carry only a message).
	codes bool
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
	// missing is a body the request format refuses for a missing member,
	// with the 400's code and a word of its message.
	missing [3]string
}

const streamRequest = `{"model":"client-model","messages":[{"role":"user","content":"hi"}],"stream":true}`

// protoDrivers say how the tests drive each protocol of the table, beyond
// what its row says: the route options and request, and whether its error
// event names the code. TestEveryProtocolDriven keeps it complete.
var protoDrivers = map[string]struct {
	options []string
	request string
	codes   bool
	// missing overrides the missing-member case: body, code, message
	// word (default: an OpenAI body without messages).
	missing [3]string
}{
	"gymbro":  {request: streamRequest, codes: true},
	"jsonseq": {request: streamRequest, codes: true},
	"skillpet": {options: []string{"request_format skillpet", "model test-model"},
		request: `{"projectId":"p1","message":"hi"}`},
	"aisdk":  {request: streamRequest},
	"openai": {request: streamRequest, codes: true},
	"responses": {options: []string{"request_format responses"},
		request: `{"model":"client-model","input":"hi","tools":[{"type":"web_search"}],"stream":true}`, codes: true,
		missing: [3]string{`{"model":"m","stream":true}`, "missing_input", "input"}},
	"anthropic": {
		options: []string{"request_format anthropic"},
		request: `{"model":"client-model","max_tokens":64,"thinking":{"type":"enabled","budget_tokens":32},"messages":[{"role":"user","content":"hi"}],"stream":true}`,
		codes:   true,
	},
}

// protoSpecs are the protocol table's rows as the tests drive them, in
// table order; a protocol whose client may ask for one JSON body
// (ClientChoosesStream) is driven that way too, right after.
var protoSpecs = func() []protoSpec {
	var specs []protoSpec
	for _, row := range pipeline.Protocols() {
		d := protoDrivers[row.Name]
		ps := protoSpec{name: row.Name, protocol: row.Name, options: d.options, request: d.request,
			codes: d.codes, early: row.EarlyStart, stream: true, passes: row.PassRefusals,
			reshapes: row.ReshapeRefusal != nil, missing: d.missing}
		if ps.missing[0] == "" {
			ps.missing = [3]string{`{"model":"m","stream":true}`, "missing_messages", "messages"}
		}
		specs = append(specs, ps)
		if row.ClientChoosesStream {
			ps.name, ps.stream, ps.early, ps.variant = row.Name+"_json", false, false, true
			ps.request = strings.Replace(d.request, `"stream":true`, `"stream":false`, 1)
			specs = append(specs, ps)
		}
	}
	return specs
}()

// routeSpecs are protoSpecs without the variants: one per route.
func routeSpecs() []protoSpec {
	var specs []protoSpec
	for _, ps := range protoSpecs {
		if !ps.variant {
			specs = append(specs, ps)
		}
	}
	return specs
}

// TestEveryProtocolDriven checks that the failure tests drive every row of
// the protocol table: a new protocol must say how.
func TestEveryProtocolDriven(t *testing.T) {
	for _, row := range pipeline.Protocols() {
		if d, ok := protoDrivers[row.Name]; !ok || d.request == "" {
			t.Errorf("protocol %q has no entry in protoDrivers", row.Name)
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
	all    string     // every text delivered: answer and reasoning
	end    outcome
	last   int // index of the terminal event in events, -1 if none
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
	res := result{status: resp.StatusCode, header: resp.Header, body: string(raw), last: -1}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		if res.events, err = parseSSE(res.body); err != nil {
			t.Fatalf("%v\nwhole body:\n%s", err, raw)
		}
		readStream(t, ps, &res)
		return res
	}
	readJSON(t, &res)
	return res
}

// readJSON decodes a body that is one JSON value: an error object (the
// OpenAI shape {"error":{"message","code"}}, skillpet's
// {"error":"CODE","message"} or Anthropic's {"type":"error","error":
// {"type","message","details":{"error_code"}}}), a chat.completion or an
// Anthropic Message.
func readJSON(t *testing.T, res *result) {
	t.Helper()
	var v struct {
		Type    string          `json:"type"`
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Object  string          `json:"object"`
		Choices []struct {
			Message struct {
				Content          string `json:"content"`
				ReasoningContent string `json:"reasoning_content"`
			} `json:"message"`
		} `json:"choices"`
		Status  string           `json:"status"`
		Output  []responseOutput `json:"output"`
		Content []struct {
			Type, Text, Thinking string
		} `json:"content"`
	}
	if err := json.Unmarshal([]byte(res.body), &v); err != nil {
		return // not JSON (a refusal passed through): the case checks the body
	}
	var code string
	var obj struct{ Message, Code string }
	var anthropicErr struct {
		Message string
		Details struct {
			ErrorCode string `json:"error_code"`
		}
	}
	switch {
	case v.Object == "response":
		// A Response (responses, stream: false) has "error": null.
		if v.Status == "completed" || v.Status == "incomplete" {
			res.end = outcome{kind: "completed"}
		}
		for _, o := range v.Output {
			res.answer += o.text("message")
			res.all += o.text("")
		}
	case v.Type == "error" && json.Unmarshal(v.Error, &anthropicErr) == nil:
		res.end = outcome{kind: "error", code: anthropicErr.Details.ErrorCode, message: anthropicErr.Message}
	case v.Type == "message":
		res.end = outcome{kind: "completed"}
		var all strings.Builder
		for _, b := range v.Content {
			res.answer += b.Text
			all.WriteString(b.Thinking + b.Text)
		}
		res.all = all.String()
	case json.Unmarshal(v.Error, &code) == nil:
		res.end = outcome{kind: "error", code: code, message: v.Message}
	case json.Unmarshal(v.Error, &obj) == nil && len(v.Error) > 0 && v.Error[0] == '{':
		res.end = outcome{kind: "error", code: obj.Code, message: obj.Message}
	case v.Object == "chat.completion" && len(v.Choices) > 0:
		res.end = outcome{kind: "completed"}
		res.answer = v.Choices[0].Message.Content
		res.all = v.Choices[0].Message.ReasoningContent + res.answer
	}
}

// responseOutput is an output item of a Responses API Response.
type responseOutput struct {
	Type    string `json:"type"`
	Content []struct {
		Text string `json:"text"`
	} `json:"content"`
	Summary []struct {
		Text string `json:"text"`
	} `json:"summary"`
}

// text returns the item's texts if it is of type typ ("" for any).
func (o responseOutput) text(typ string) string {
	if typ != "" && o.Type != typ {
		return ""
	}
	var b strings.Builder
	for _, p := range o.Summary {
		b.WriteString(p.Text)
	}
	for _, p := range o.Content {
		b.WriteString(p.Text)
	}
	return b.String()
}

// reporter is what readStream needs of a *testing.T, so that the leak
// test's workers can collect its complaints instead.
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

// readStream finds the answer text and the terminal event of an event
// stream in ps's protocol.
func readStream(t reporter, ps protoSpec, res *result) {
	t.Helper()
	var answer, all strings.Builder
	end := func(i int, o outcome) {
		if res.last >= 0 {
			t.Errorf("a second terminal event (%d, after %d): %+v", i, res.last, res.events[i])
		}
		res.last, res.end = i, o
	}
	seq := 0.0
	for i, ev := range res.events {
		if ev.Name == ":comment" || ev.Data == "[DONE]" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(ev.Data), &m); err != nil {
			t.Errorf("event %s: data is not a JSON object: %v: %s", ev.Name, err, ev.Data)
			continue
		}
		str := func(k string) string { s, _ := m[k].(string); return s }
		switch ps.protocol {
		case "gymbro", "jsonseq":
			switch ev.Name {
			case "content_delta":
				answer.WriteString(str("delta"))
				all.WriteString(str("delta"))
			case "final_delta":
				answer.WriteString(str("text"))
				all.WriteString(str("text"))
			case "phase_delta":
				all.WriteString(str("text"))
			case "completed":
				end(i, outcome{kind: "completed"})
			case "error":
				end(i, outcome{kind: "error", code: str("code"), message: str("message")})
			}
		case "skillpet":
			switch ev.Name {
			case "token":
				answer.WriteString(str("content"))
				all.WriteString(str("content"))
			case "thinking":
				all.WriteString(str("content"))
			case "done":
				end(i, outcome{kind: "completed"})
			case "error":
				end(i, outcome{kind: "error", message: str("message")})
			}
		case "aisdk":
			switch str("type") {
			case "text-delta":
				answer.WriteString(str("delta"))
				all.WriteString(str("delta"))
			case "reasoning-delta":
				all.WriteString(str("delta"))
			case "finish":
				end(i, outcome{kind: "completed"})
			case "error":
				end(i, outcome{kind: "error", message: str("errorText")})
			}
		case "responses":
			// Every event is named like its type and numbered from 0; a
			// failure is response.failed, then the error event, last.
			if ev.Name != str("type") || m["sequence_number"] != seq {
				t.Errorf("event %s: type %v, sequence_number %v, want %v", ev.Name, m["type"], m["sequence_number"], seq)
			}
			seq++
			switch ev.Name {
			case "response.output_text.delta":
				answer.WriteString(str("delta"))
				all.WriteString(str("delta"))
			case "response.reasoning_text.delta", "response.reasoning_summary_text.delta":
				all.WriteString(str("delta"))
			case "response.completed", "response.incomplete":
				end(i, outcome{kind: "completed"})
			case "error":
				if i == 0 || res.events[i-1].Name != "response.failed" {
					t.Errorf("the error event does not follow response.failed")
				}
				end(i, outcome{kind: "error", code: str("code"), message: str("message")})
			}
		case "anthropic":
			switch ev.Name {
			case "content_block_delta":
				d, _ := m["delta"].(map[string]any)
				s, _ := d["text"].(string)
				answer.WriteString(s)
				all.WriteString(s)
				s, _ = d["thinking"].(string)
				all.WriteString(s)
			case "message_stop":
				end(i, outcome{kind: "completed"})
			case "error":
				e, _ := m["error"].(map[string]any)
				details, _ := e["details"].(map[string]any)
				c, _ := details["error_code"].(string)
				msg, _ := e["message"].(string)
				end(i, outcome{kind: "error", code: c, message: msg})
			}
		case "openai":
			if e, ok := m["error"].(map[string]any); ok {
				c, _ := e["code"].(string)
				msg, _ := e["message"].(string)
				end(i, outcome{kind: "error", code: c, message: msg})
				continue
			}
			choices, _ := m["choices"].([]any)
			if len(choices) == 0 {
				continue
			}
			c, _ := choices[0].(map[string]any)
			d, _ := c["delta"].(map[string]any)
			if s, ok := d["content"].(string); ok {
				answer.WriteString(s)
				all.WriteString(s)
			}
			if s, ok := d["reasoning_content"].(string); ok {
				all.WriteString(s)
			}
		}
	}
	res.answer, res.all = answer.String(), all.String()
	// The terminal event is the last one, but for aisdk's and responses'
	// data: [DONE] after it (the Open Responses spec's last data); an
	// openai stream that completed ends with [DONE] itself.
	n := len(res.events)
	if ps.protocol == "openai" && res.last < 0 && n > 0 && res.events[n-1].Data == "[DONE]" {
		res.last, res.end = n-1, outcome{kind: "completed"}
	}
	want := n - 1
	if ps.protocol == "aisdk" || ps.protocol == "responses" && res.last >= 0 {
		want = n - 2
		if n == 0 || res.events[n-1].Data != "[DONE]" {
			t.Errorf("the %s stream does not end with data: [DONE]", ps.protocol)
		}
	}
	if res.last >= 0 && res.last != want {
		t.Errorf("events after the terminal one: %+v", res.events[res.last+1:])
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
	if code != "" && (ps.codes || !inStream) && res.end.code != code {
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
