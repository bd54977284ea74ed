// Package llmmock is the llm_mock Caddy module: a fake OpenAI-compatible
// upstream that streams configured replies as chat.completion.chunk SSE (or
// answers one chat.completion), for the default Caddyfile, the examples, the
// tests and the benchmarks. It has no part in serving real traffic.
package llmmock

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/tidwall/gjson"
)

func init() {
	caddy.RegisterModule(Mock{})
}

// Mock is llm_mock, a fake OpenAI-compatible upstream for the default
// Caddyfile, the examples, the tests and the benchmarks (CONTRACT §3). It
// answers POST …/chat/completions with the configured reply: streamed as
// chat.completion.chunk SSE when the request streams, as one
// chat.completion otherwise. Other paths get 404 and other methods 405,
// with OpenAI-style JSON errors.
type Mock struct {
	// ReplyFiles are files holding the text the fake model writes. With
	// several replies (files, then ReplyTexts), requests rotate through them.
	ReplyFiles []string `json:"reply_file,omitempty"`
	// ReplyTexts are inline replies.
	ReplyTexts []string `json:"reply_text,omitempty"`
	// ReasoningFile, if set, is streamed first as reasoning_content.
	ReasoningFile string `json:"reasoning_file,omitempty"`
	// ToolCallsFiles hold JSON arrays of {"name", "arguments"} tool calls,
	// streamed as native tool_calls deltas after the reply; the finish
	// reason is then "tool_calls". With several files, requests rotate
	// through them as they do through the replies (request n takes reply
	// n and tool calls n, each modulo its count), so that a scripted
	// conversation can call a tool and then answer: a file holding []
	// means no call on that turn.
	ToolCallsFiles []string `json:"tool_calls_file,omitempty"`
	// ReplayFiles are recorded upstream bodies served as they are, byte for
	// byte, in pieces of ChunkSize bytes cut anywhere (the network may cut
	// SSE mid-line and mid-rune): a .json file as one chat.completion, any
	// other as an SSE stream. Requests rotate through them. They replace
	// the reply options, so that real providers' streams, quirks and all,
	// can be played to llm_stream and its clients.
	ReplayFiles []string `json:"replay_file,omitempty"`
	// Record keeps the bodies of the last RecordLimit chat requests, served
	// as a JSON array at GET …/llm_mock/requests (DELETE clears them), so
	// that tests see exactly what llm_stream sent upstream.
	Record bool `json:"record,omitempty"`
	// ChunkSize is the bytes per delta, cut on UTF-8 boundaries. Default 8.
	ChunkSize int `json:"chunk_size,omitempty"`
	// RandomChunks makes each delta between 1 and ChunkSize bytes, drawn
	// from a generator seeded with the request's number: every request is
	// cut differently, and the same run cuts the same way again.
	RandomChunks bool `json:"random_chunks,omitempty"`
	// Interval is the pause between deltas. Default 20ms; 0 for benchmarks.
	Interval *caddy.Duration `json:"interval,omitempty"`
	// Model is the model the replies report. Default "llm-mock".
	Model string `json:"model,omitempty"`
	// TruncateAfter, if positive, cuts the connection after that many reply
	// bytes, before any finish_reason: a broken upstream, for failure tests.
	TruncateAfter int `json:"truncate_after,omitempty"`
	// CallOfferedTool makes a request that offers tools, and whose last
	// message is not a tool result, answered with a call of its first tool
	// (arguments "{}") instead of the reply: a model that uses the tool it
	// is given, then answers once it has the result, whatever order
	// concurrent requests come in (the Open Responses compliance tests).
	CallOfferedTool bool `json:"call_offered_tool,omitempty"`
	// ByRound picks the reply (and tool calls) by the request's round of
	// an agent loop instead of rotating: a request whose messages after
	// the last user message hold k assistant messages is round k+1 and
	// takes reply k+1 (the last one when there are fewer). Reading the
	// request instead of counting requests lets concurrent conversations
	// each get their own script (CONTRACT.md §12's demo). In a reply,
	// {{tool_result}} stands for the content of the request's last tool
	// message (at most 400 bytes: a longer one is its start, " … " and its
	// end), so that the scripted answer shows what the tool really
	// returned, and where the gateway cut a result, its marker.
	ByRound bool `json:"by_round,omitempty"`

	replies   [][]byte
	replays   [][]byte
	reasoning []byte
	toolCalls [][]mockCall // per ToolCallsFiles entry
	interval  time.Duration
	requests  *atomic.Uint64 // a pointer: CaddyModule copies the value
	recorded  *recorder
}

type mockCall struct {
	name, args string
}

// CaddyModule returns the Caddy module information.
func (Mock) CaddyModule() caddy.ModuleInfo {
	return caddy.ModuleInfo{
		ID:  "http.handlers.llm_mock",
		New: func() caddy.Module { return new(Mock) },
	}
}

// Provision reads the reply files.
func (m *Mock) Provision(caddy.Context) error {
	m.requests = new(atomic.Uint64)
	if m.ChunkSize == 0 {
		m.ChunkSize = 8
	}
	if m.ChunkSize < 0 {
		return fmt.Errorf("chunk_size: must be positive, got %d", m.ChunkSize)
	}
	m.interval = 20 * time.Millisecond
	if m.Interval != nil {
		m.interval = time.Duration(*m.Interval)
	}
	if m.Model == "" {
		m.Model = "llm-mock"
	}
	m.replies = m.replies[:0]
	for _, f := range m.ReplyFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("reply_file: %w", err)
		}
		m.replies = append(m.replies, b)
	}
	for _, t := range m.ReplyTexts {
		m.replies = append(m.replies, []byte(t))
	}
	m.replays = m.replays[:0]
	for _, f := range m.ReplayFiles {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("replay_file: %w", err)
		}
		m.replays = append(m.replays, b)
	}
	switch {
	case len(m.replays) > 0 && (len(m.replies) > 0 || len(m.ToolCallsFiles) > 0 || m.ReasoningFile != ""):
		return errors.New("llm_mock: replay_file replaces reply_file, reply_text, reasoning_file and tool_calls_file")
	case len(m.replays) == 0 && len(m.replies) == 0 && len(m.ToolCallsFiles) == 0:
		return errors.New("llm_mock: reply_file, reply_text or replay_file is required")
	}
	if m.ReasoningFile != "" {
		b, err := os.ReadFile(m.ReasoningFile)
		if err != nil {
			return fmt.Errorf("reasoning_file: %w", err)
		}
		m.reasoning = b
	}
	m.toolCalls = m.toolCalls[:0]
	for _, f := range m.ToolCallsFiles {
		calls, err := readToolCalls(f)
		if err != nil {
			return fmt.Errorf("tool_calls_file: %w", err)
		}
		m.toolCalls = append(m.toolCalls, calls)
	}
	if m.Record {
		m.recorded = new(recorder)
	}
	return nil
}

// readToolCalls reads a tool_calls_file: a JSON array of {"name",
// "arguments"}, arguments an object or a string.
func readToolCalls(file string) ([]mockCall, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	calls := gjson.ParseBytes(b)
	if !json.Valid(b) || !calls.IsArray() {
		return nil, fmt.Errorf("%s: want a JSON array of {\"name\", \"arguments\"}", file)
	}
	out := []mockCall{}
	for _, c := range calls.Array() {
		name, args := c.Get("name").String(), c.Get("arguments")
		if name == "" {
			return nil, fmt.Errorf("%s: a tool call without a name", file)
		}
		a := args.Raw // an object is sent as its JSON text, a string as its value
		if args.Type == gjson.String {
			a = args.Str
		}
		out = append(out, mockCall{name: name, args: a})
	}
	return out, nil
}

// ServeHTTP answers like an OpenAI chat-completions endpoint.
func (m *Mock) ServeHTTP(w http.ResponseWriter, r *http.Request, _ caddyhttp.Handler) error {
	if m.recorded != nil && strings.HasSuffix(r.URL.Path, recordPath) {
		return m.recorded.serve(w, r)
	}
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		return mockError(w, http.StatusNotFound, "not_found", "no such endpoint: "+r.URL.Path)
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		return mockError(w, http.StatusMethodNotAllowed, "method_not_allowed", "use POST")
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, 8<<20))
	if err != nil {
		return mockError(w, http.StatusBadRequest, "invalid_body", "reading the body: "+err.Error())
	}
	// json.Valid first: it does not recurse, so a deeply nested body cannot
	// exhaust the stack before gjson looks at it.
	if !json.Valid(body) || !gjson.GetBytes(body, "messages").IsArray() {
		return mockError(w, http.StatusBadRequest, "invalid_request", "the body must be a JSON object with a messages array")
	}
	n := m.requests.Add(1)
	if m.recorded != nil {
		m.recorded.add(body)
	}
	reply, calls := m.script(n, body)
	if m.CallOfferedTool {
		msgs := gjson.GetBytes(body, "messages").Array()
		name := gjson.GetBytes(body, "tools.0.function.name").String()
		if name != "" && len(msgs) > 0 && msgs[len(msgs)-1].Get("role").String() != "tool" {
			reply, calls = nil, []mockCall{{name: name, args: "{}"}}
		}
	}
	t := mockTurn{
		m: m, w: w, r: r, reply: reply, calls: calls,
		id:      "chatcmpl-mock-" + strconv.FormatUint(n, 10),
		created: time.Now().Unix(),
		prompt:  len(body) / 4,
	}
	if m.RandomChunks {
		t.rng = rand.New(rand.NewPCG(n, 0x6c6c6d73))
	}
	w.Header().Set("X-Request-Id", "mockreq_"+strconv.FormatUint(n, 10))
	if len(m.replays) > 0 {
		f := (n - 1) % uint64(len(m.replays))
		return t.replay(m.replays[f], strings.HasSuffix(m.ReplayFiles[f], ".json"))
	}
	if !gjson.GetBytes(body, "stream").Bool() {
		return t.completion()
	}
	return t.stream(gjson.GetBytes(body, "stream_options.include_usage").Bool())
}

// script returns the reply and tool calls of request n with body: the
// n-th of each in rotation, or with ByRound the request's round's.
func (m *Mock) script(n uint64, body []byte) ([]byte, []mockCall) {
	i := n - 1
	if m.ByRound {
		i = uint64(roundOf(body) - 1)
	}
	pick := func(count int) uint64 {
		if m.ByRound {
			return min(i, uint64(count-1))
		}
		return i % uint64(count)
	}
	var reply []byte
	if len(m.replies) > 0 {
		reply = m.replies[pick(len(m.replies))]
		if m.ByRound && bytes.Contains(reply, toolResultMark) {
			reply = bytes.ReplaceAll(reply, toolResultMark, lastToolResult(body))
		}
	}
	var calls []mockCall
	if len(m.toolCalls) > 0 {
		calls = m.toolCalls[pick(len(m.toolCalls))]
	}
	return reply, calls
}

// toolResultMark stands for the request's last tool result in a reply
// (ByRound).
var toolResultMark = []byte("{{tool_result}}")

// roundOf returns the round of an agent loop a chat request is: 1 plus the
// assistant messages after its last user message.
func roundOf(body []byte) int {
	msgs := gjson.GetBytes(body, "messages").Array()
	round := 1
	for i := len(msgs) - 1; i >= 0; i-- {
		switch msgs[i].Get("role").String() {
		case "user":
			return round
		case "assistant":
			round++
		}
	}
	return round
}

// lastToolResult returns the content of the request's last tool message:
// at most 400 bytes of it, its first 280 bytes and its last 115 around an
// ellipsis, cut on character boundaries (the end of a result cut by the
// gateway holds the marker a test looks for).
func lastToolResult(body []byte) []byte {
	const head, tail = 280, 115
	msgs := gjson.GetBytes(body, "messages").Array()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Get("role").String() == "tool" {
			s := msgs[i].Get("content").String()
			if len(s) > head+tail+len(" … ") {
				h := head
				for h > 0 && !utf8.RuneStart(s[h]) {
					h--
				}
				t := len(s) - tail
				for t < len(s) && !utf8.RuneStart(s[t]) {
					t++
				}
				s = s[:h] + " … " + s[t:]
			}
			return []byte(s)
		}
	}
	return nil
}

// mockTurn is one fake reply being written.
type mockTurn struct {
	m       *Mock
	w       http.ResponseWriter
	r       *http.Request
	reply   []byte
	calls   []mockCall
	id      string
	created int64
	prompt  int
	sent    int // reply bytes sent, for TruncateAfter
	buf     []byte
	rng     *rand.Rand // delta sizes, with RandomChunks
}

// callID is the id of the turn's call i: unique per request, so that the
// rounds of a loop have distinct ids, as a real model's have.
func (t *mockTurn) callID(i int) string {
	return "call_" + strings.TrimPrefix(t.id, "chatcmpl-mock-") + "_" + strconv.Itoa(i)
}

// stream writes the reply as SSE chunks.
func (t *mockTurn) stream(usage bool) error {
	t.w.Header().Set("Content-Type", "text/event-stream")
	t.w.Header().Set("Cache-Control", "no-cache")
	t.w.WriteHeader(http.StatusOK)
	if err := t.chunk(`{"role":"assistant","content":""}`, "null"); err != nil {
		return err
	}
	for _, piece := range t.pieces(t.m.reasoning) {
		if err := t.delta("reasoning_content", piece); err != nil {
			return err
		}
	}
	for _, piece := range t.pieces(t.reply) {
		if t.m.TruncateAfter > 0 && t.sent >= t.m.TruncateAfter {
			// Cut the connection without a finish: net/http aborts the
			// response quietly for this panic value.
			panic(http.ErrAbortHandler)
		}
		t.sent += len(piece)
		if err := t.delta("content", piece); err != nil {
			return err
		}
	}
	finish := `"stop"`
	for i, c := range t.calls {
		finish = `"tool_calls"`
		head := `{"tool_calls":[{"index":` + strconv.Itoa(i) + `,"id":"` + t.callID(i) +
			`","type":"function","function":{"name":` + string(jsonout.AppendStringS(nil, c.name)) + `,"arguments":""}}]}`
		if err := t.chunk(head, "null"); err != nil {
			return err
		}
		for _, piece := range t.pieces([]byte(c.args)) {
			d := append([]byte(`{"tool_calls":[{"index":`+strconv.Itoa(i)+`,"function":{"arguments":`), jsonout.AppendString(nil, piece)...)
			if err := t.chunk(string(d)+`}}]}`, "null"); err != nil {
				return err
			}
		}
	}
	if err := t.chunk(`{}`, finish); err != nil {
		return err
	}
	if usage {
		t.buf = append(t.buf[:0], `data: {"id":"`+t.id+`","object":"chat.completion.chunk","created":`+strconv.FormatInt(t.created, 10)+
			`,"model":`...)
		t.buf = jsonout.AppendStringS(t.buf, t.m.Model)
		t.buf = append(t.buf, `,"choices":[],"usage":`+t.usage()+"}\n\n"...)
		if err := t.write(t.buf); err != nil {
			return err
		}
	}
	return t.write([]byte("data: [DONE]\n\n"))
}

// replay writes a recorded body as it is, in pieces of ChunkSize bytes
// (random sizes with RandomChunks) cut anywhere, with the pause between.
func (t *mockTurn) replay(body []byte, whole bool) error {
	if whole {
		t.w.Header().Set("Content-Type", "application/json")
	} else {
		t.w.Header().Set("Content-Type", "text/event-stream")
		t.w.Header().Set("Cache-Control", "no-cache")
	}
	t.w.WriteHeader(http.StatusOK)
	for len(body) > 0 {
		size := t.m.ChunkSize
		if t.rng != nil {
			size = 1 + t.rng.IntN(size)
		}
		n := min(size, len(body))
		if err := t.pause(); err != nil || t.r.Context().Err() != nil {
			return nil // the client left
		}
		if err := t.write(body[:n]); err != nil {
			return err
		}
		body = body[n:]
	}
	return nil
}

// pause waits the interval between deltas; it ends early, with the
// context's error, when the client leaves.
func (t *mockTurn) pause() error {
	if t.m.interval <= 0 {
		return nil
	}
	timer := time.NewTimer(t.m.interval)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-t.r.Context().Done():
		return t.r.Context().Err()
	}
}

// delta writes one content or reasoning delta, after the pause.
func (t *mockTurn) delta(field string, piece []byte) error {
	if t.pause() != nil {
		return nil // the client left: stop quietly
	}
	d := append([]byte(`{"`+field+`":`), jsonout.AppendString(nil, piece)...)
	return t.chunk(string(append(d, '}')), "null")
}

// chunk writes one chat.completion.chunk with the given delta object.
func (t *mockTurn) chunk(delta, finish string) error {
	t.buf = append(t.buf[:0], `data: {"id":"`+t.id+`","object":"chat.completion.chunk","created":`+strconv.FormatInt(t.created, 10)+`,"model":`...)
	t.buf = jsonout.AppendStringS(t.buf, t.m.Model)
	t.buf = append(t.buf, `,"choices":[{"index":0,"delta":`+delta+`,"logprobs":null,"finish_reason":`+finish+"}]}\n\n"...)
	return t.write(t.buf)
}

func (t *mockTurn) write(b []byte) error {
	if t.r.Context().Err() != nil {
		return nil
	}
	if _, err := t.w.Write(b); err != nil {
		return nil // the client left
	}
	//nolint:bodyclose // not a response body
	_ = http.NewResponseController(t.w).Flush()
	return nil
}

// completion writes the whole reply as one chat.completion.
func (t *mockTurn) completion() error {
	b := []byte(`{"id":"` + t.id + `","object":"chat.completion","created":` + strconv.FormatInt(t.created, 10) + `,"model":`)
	b = jsonout.AppendStringS(b, t.m.Model)
	b = append(b, `,"choices":[{"index":0,"message":{"role":"assistant","content":`...)
	b = jsonout.AppendString(b, t.reply)
	if len(t.m.reasoning) > 0 {
		b = append(b, `,"reasoning_content":`...)
		b = jsonout.AppendString(b, t.m.reasoning)
	}
	finish := "stop"
	if len(t.calls) > 0 {
		finish = "tool_calls"
		b = append(b, `,"tool_calls":[`...)
		for i, c := range t.calls {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"id":"`+t.callID(i)+`","type":"function","function":{"name":`...)
			b = jsonout.AppendStringS(b, c.name)
			b = append(b, `,"arguments":`...)
			b = jsonout.AppendStringS(b, c.args)
			b = append(b, "}}"...)
		}
		b = append(b, ']')
	}
	b = append(b, `},"logprobs":null,"finish_reason":"`+finish+`"}],"usage":`+t.usage()+"}"...)
	t.w.Header().Set("Content-Type", "application/json")
	t.w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	_, err := t.w.Write(b)
	if err != nil {
		return nil // the client left
	}
	return nil
}

// usage estimates token counts at four bytes a token: a fake model's
// accounting only has to be plausible and consistent.
func (t *mockTurn) usage() string {
	completion := (len(t.reply) + len(t.m.reasoning)) / 4
	return `{"prompt_tokens":` + strconv.Itoa(t.prompt) + `,"completion_tokens":` + strconv.Itoa(completion) +
		`,"total_tokens":` + strconv.Itoa(t.prompt+completion) + `}`
}

// pieces cuts b into the turn's deltas: ChunkSize bytes, or with
// RandomChunks 1 to ChunkSize, never inside a UTF-8 sequence (a rune longer
// than the size is one piece).
func (t *mockTurn) pieces(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		size := t.m.ChunkSize
		if t.rng != nil {
			size = 1 + t.rng.IntN(size)
		}
		n := min(size, len(b))
		for n < len(b) && !utf8.RuneStart(b[n]) {
			n++
		}
		out = append(out, b[:n])
		b = b[n:]
	}
	return out
}

// mockError writes an OpenAI-style error.
func mockError(w http.ResponseWriter, status int, code, msg string) error {
	b := append([]byte(`{"error":{"message":`), jsonout.AppendStringS(nil, msg)...)
	b = append(b, `,"type":"invalid_request_error","code":"`+code+`"}}`...)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	_, _ = w.Write(b)
	return nil
}

// Interface guards.
var (
	_ caddy.Provisioner           = (*Mock)(nil)
	_ caddyhttp.MiddlewareHandler = (*Mock)(nil)
)
