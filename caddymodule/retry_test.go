package caddymodule

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/zap/zaptest/observer"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/validate"
)

// The retry inside the proxy (CONTRACT.md §10, specs/004 §7.3.2), for
// every row of the protocol table, with a scripted next that answers
// differently on each call and keeps what each call was sent: the client
// is shown only the validated reply, the upstream is called at most
// retries + 1 times, and the retry request is the first one with the
// failed turn appended, byte for byte.

// retryCase is one request whose upstream answers each call with the
// next of replies.
type retryCase struct {
	name string
	// format and validate configure the route; tools adds a tools file.
	format   string
	validate *config.Validate
	tools    bool
	// request is the client's chat request; header its extra headers.
	request string
	header  http.Header
	// idle and beat are the route's idle_timeout and heartbeat (0: off).
	idle, beat time.Duration
	replies    []func(px *proxyPlay) error

	// calls is how many times the upstream is called.
	calls int
	// code is the error that ends the stream, "" for a completed one;
	// answer the answer text the encoder was given (only the validated
	// reply's); hidden must appear nowhere in what the client got.
	code, answer, hidden string
	// toolCalls is the number of tool calls the client was given.
	toolCalls int
	// reasons are the logged retry reasons.
	reasons []string
	// gone: the client left, nothing ends the stream.
	gone bool
}

// sseReply is a scripted call that answers the SSE pieces.
func sseReply(pieces ...string) func(px *proxyPlay) error {
	return func(px *proxyPlay) error {
		px.sse()
		px.body(pieces...)
		return nil
	}
}

// frReply is a FinalResult reply, its content cut in two.
func frReply(object string) func(px *proxyPlay) error {
	half := len(object) / 2
	return sseReply(roleChunk, content(object[:half]), content(object[half:]), finishChunks)
}

// nativeCallReply is a reply of one native tool call.
func nativeCallReply(id, name, args string) func(px *proxyPlay) error {
	a, _ := json.Marshal(args)
	return sseReply(roleChunk,
		chunk(`{"tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":""}}]}`),
		chunk(`{"tool_calls":[{"index":0,"function":{"arguments":`+string(a)+`}}]}`),
		`data: {"id":"c","object":"chat.completion.chunk","model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\ndata: [DONE]\n\n")
}

const (
	chatRequest  = `{"model":"m","messages":[{"role":"system","content":"s"},{"role":"user","content":"make slides"}],"stream":true}`
	artifactLoop = `{"model":"m","messages":[{"role":"user","content":"make slides"},` +
		`{"role":"assistant","content":null,"tool_calls":[{"id":"t1","type":"function","function":{"name":"generate_pptx","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"t1","content":"Error: template missing"}],"stream":true}`
	badResult  = `{"status":"artifact_ready","message":"Your deck is ready SAID-NOT-DONE"}`
	goodResult = `{"status":"answer_ready","message":"I could not make the deck yet."}`
)

func retries(n int) *int { return &n }

func retryCases() []retryCase {
	fr := func(name string, v *config.Validate, request string, replies []func(*proxyPlay) error) retryCase {
		return retryCase{name: name, format: "final_result", validate: v, request: request, replies: replies}
	}
	art := []string{"generate_pptx"}
	cases := []retryCase{
		func() retryCase {
			c := fr("pass", &config.Validate{ArtifactTools: art}, chatRequest, []func(*proxyPlay) error{frReply(goodResult)})
			c.calls, c.answer = 1, "I could not make the deck yet."
			return c
		}(),
		func() retryCase {
			c := fr("rule1_retry_then_pass", &config.Validate{ArtifactTools: art}, chatRequest,
				[]func(*proxyPlay) error{frReply(badResult), frReply(goodResult)})
			c.calls, c.answer, c.hidden, c.reasons = 2, "I could not make the deck yet.", "SAID-NOT-DONE", []string{validate.CodeArtifactWithoutEvidence}
			return c
		}(),
		func() retryCase {
			c := fr("rule1_tool_failed_retry_then_fail_hard", &config.Validate{ArtifactTools: art}, artifactLoop,
				[]func(*proxyPlay) error{frReply(badResult), frReply(`{"status":"artifact_ready","message":"Ready now SAID-NOT-DONE"}`)})
			c.calls, c.code, c.hidden, c.reasons = 2, validate.CodeValidationFailed, "SAID-NOT-DONE", []string{validate.CodeArtifactToolFailed}
			return c
		}(),
		func() retryCase {
			c := fr("rule3_soft_retry_then_accept", &config.Validate{ExpectedMode: "{http.request.header.X-Expected-Mode}"}, chatRequest,
				[]func(*proxyPlay) error{frReply(`{"status":"answer_ready","message":"FIRST-TRY"}`), frReply(`{"status":"answer_ready","message":"Slides are a format."}`)})
			c.header = http.Header{"X-Expected-Mode": {"artifact"}}
			c.calls, c.answer, c.hidden, c.reasons = 2, "Slides are a format.", "FIRST-TRY", []string{validate.CodeExpectedArtifact}
			return c
		}(),
		func() retryCase {
			c := fr("budget_two_retries_all_fail", &config.Validate{Retries: retries(2)}, chatRequest,
				[]func(*proxyPlay) error{frReply(`{"status":"clarify_needed","message":"ASK-1"}`), frReply(`{"status":"clarify_needed","message":"ASK-2"}`),
					frReply(`{"status":"clarify_needed","message":"ASK-3"}`), frReply(goodResult)})
			c.calls, c.code, c.hidden = 3, validate.CodeValidationFailed, "ASK-"
			c.reasons = []string{validate.CodeClarifyWithoutQuestion, validate.CodeClarifyWithoutQuestion}
			return c
		}(),
		func() retryCase {
			c := fr("no_retries", &config.Validate{Retries: retries(0)}, chatRequest,
				[]func(*proxyPlay) error{frReply(`{"status":"clarify_needed","message":"ASK-1"}`), frReply(goodResult)})
			c.calls, c.code, c.hidden = 1, validate.CodeValidationFailed, "ASK-1"
			return c
		}(),
		{
			name: "native_tool_args_invalid_retry_then_pass", format: "text", validate: &config.Validate{}, tools: true, request: chatRequest,
			replies: []func(*proxyPlay) error{nativeCallReply("call_a", "search_knowledge", `{"query":42}`),
				nativeCallReply("call_b", "search_knowledge", `{"query":"ppt"}`)},
			calls: 2, toolCalls: 1, hidden: `"call_a"`, reasons: []string{validate.CodeToolArgsInvalid},
		},
		{
			name: "idle_timeout_applies_per_reply", format: "final_result", validate: &config.Validate{}, request: chatRequest, idle: tableIdle,
			replies: []func(*proxyPlay) error{
				func(px *proxyPlay) error {
					px.sse()
					px.silence(tableIdle - time.Millisecond)
					px.body(roleChunk, content(`{"status":"clarify_needed","message":"ASK-1"}`), finishChunks)
					return nil
				},
				func(px *proxyPlay) error {
					px.silence(tableIdle - time.Millisecond)
					px.wantLive()
					px.silence(time.Millisecond)
					return px.stall()
				},
			},
			calls: 2, code: transform.CodeUpstreamTimeout, hidden: "ASK-1", reasons: []string{validate.CodeClarifyWithoutQuestion},
		},
		{
			// With idle_timeout off, the grace timer armed when the first
			// reply completed must not time the retry out.
			name: "no_idle_timeout_retry_slow", format: "final_result", validate: &config.Validate{}, request: chatRequest,
			replies: []func(*proxyPlay) error{
				frReply(`{"status":"clarify_needed","message":"ASK-1"}`),
				func(px *proxyPlay) error {
					px.sse()
					px.silence(3 * doneGrace)
					px.wantLive()
					px.body(roleChunk, content(goodResult), finishChunks)
					return nil
				},
			},
			calls: 2, answer: "I could not make the deck yet.", hidden: "ASK-1", reasons: []string{validate.CodeClarifyWithoutQuestion},
		},
		{
			// The reply is held, and the client's stream kept alive.
			name: "heartbeats_while_held", format: "final_result", validate: &config.Validate{}, request: chatRequest, beat: tableBeat,
			replies: []func(*proxyPlay) error{
				func(px *proxyPlay) error {
					px.sse()
					px.body(roleChunk, content(`{"status":"answer_ready","message":"I could not `))
					px.silence(2 * tableBeat)
					px.body(content(`make the deck yet."}`), finishChunks)
					return nil
				},
			},
			calls: 1, answer: "I could not make the deck yet.",
		},
		{
			name: "client_leaves_during_the_hold", format: "final_result", validate: &config.Validate{}, request: chatRequest,
			replies: []func(*proxyPlay) error{
				func(px *proxyPlay) error {
					px.sse()
					px.body(roleChunk, content(`{"status":"answer_ready","message":"HELD`))
					px.leave()
					return px.stall()
				},
				frReply(goodResult),
			},
			calls: 1, gone: true, hidden: "HELD",
		},
		{
			name: "client_leaves_before_the_retry", format: "final_result", validate: &config.Validate{}, request: chatRequest,
			replies: []func(*proxyPlay) error{
				func(px *proxyPlay) error {
					px.sse()
					px.body(roleChunk, content(`{"status":"clarify_needed","message":"ASK-1"}`), finishChunks)
					px.leave()
					return nil
				},
				frReply(goodResult),
			},
			calls: 1, gone: true, hidden: "ASK-1",
		},
		{
			name: "retry_refused_by_the_upstream", format: "final_result", validate: &config.Validate{}, request: chatRequest,
			replies: []func(*proxyPlay) error{
				frReply(`{"status":"clarify_needed","message":"ASK-1"}`),
				func(px *proxyPlay) error {
					px.head(http.StatusTooManyRequests, rateLimitHead...)
					px.body(rateLimitBody)
					return nil
				},
			},
			calls: 2, code: transform.CodeProviderError, hidden: "ASK-1", reasons: []string{validate.CodeClarifyWithoutQuestion},
		},
	}
	return cases
}

// retryResult is what came of one retry case.
type retryResult struct {
	writerResult
	bodies []string // what each upstream call was sent
	logs   *observer.ObservedLogs
}

func serveRetryCase(t *testing.T, v writerVariant, c retryCase) retryResult {
	t.Helper()
	hb, it := config.Duration(c.beat), config.Duration(c.idle)
	route := config.Route{Protocol: v.proto.Name, Format: c.format, Heartbeat: &hb, IdleTimeout: &it, Validate: c.validate}
	if c.tools {
		route.Tools = []string{"../examples/tools/search.json"}
	}
	h, logs, clock, tap := tappedHandler(t, route)

	request := c.request
	if !v.stream {
		request = strings.Replace(request, `"stream":true`, `"stream":false`, 1)
	}
	rec := httptest.NewRecorder()
	clientCtx, leave := context.WithCancel(t.Context())
	defer leave()
	r := httptest.NewRequestWithContext(clientCtx, http.MethodPost, "/v1/chat/completions", strings.NewReader(request))
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set("X-Request-Id", "client-req-1")
	for k, vs := range c.header {
		r.Header[k] = vs
	}
	caddyhttp.NewTestReplacer(r) // the header placeholders, as Caddy's server sets them

	res := retryResult{logs: logs}
	next := caddyhttp.HandlerFunc(func(w http.ResponseWriter, r *http.Request) error {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the upstream request: %v", err)
		}
		res.bodies = append(res.bodies, string(body))
		n := len(res.bodies)
		if n > len(c.replies) {
			t.Fatalf("upstream call %d, the script has %d", n, len(c.replies))
		}
		px := &proxyPlay{t: t, clock: clock, leave: leave, header: make(http.Header), w: w, r: r}
		res.play = px
		return c.replies[n-1](px)
	})
	func() {
		defer func() {
			if rv := recover(); rv != nil {
				if rv != http.ErrAbortHandler {
					panic(rv)
				}
				res.cut = true
			}
		}()
		if err := h.ServeHTTP(rec, r, next); err != nil {
			t.Errorf("ServeHTTP: %v", err)
		}
	}()
	res.tap = tap
	res.resp = rec.Result()
	res.body = rec.Body.String()
	ended := logs.FilterMessage("stream ended").All()
	if len(ended) != 1 {
		t.Fatalf("%d stream ended logs, want 1", len(ended))
	}
	res.outcome, _ = ended[0].ContextMap()["outcome"].(string)
	return res
}

func TestRetry(t *testing.T) {
	for _, c := range retryCases() {
		for _, v := range writerVariants() {
			t.Run(c.name+"/"+v.name, func(t *testing.T) {
				res := serveRetryCase(t, v, c)
				if len(res.bodies) != c.calls {
					t.Errorf("the upstream was called %d times, want %d", len(res.bodies), c.calls)
				}
				outcome := c.code
				switch {
				case c.gone:
					outcome = "client_gone"
				case outcome == "":
					outcome = "completed"
				}
				if res.outcome != outcome {
					t.Errorf("recorded as %q, want %q", res.outcome, outcome)
				}
				if c.hidden != "" && (strings.Contains(res.body, c.hidden) || strings.Contains(string(res.tap.out), c.hidden)) {
					t.Errorf("the client was shown the refused reply (%q):\n%s", c.hidden, res.body)
				}
				if got := res.tap.answer.String(); !c.gone && got != c.answer {
					t.Errorf("answer %q, want %q", got, c.answer)
				}
				if !c.gone {
					if n := len(res.tap.terminal); n != 1 {
						t.Fatalf("%d terminal events, want 1", n)
					}
					end := res.tap.terminal[0]
					if c.code == "" && end.Kind != transform.KindFinish || c.code != "" && end.Code != c.code {
						t.Errorf("ended with %v %q %q, want %q", end.Kind, end.Code, end.Text, c.code)
					}
				}
				if c.beat > 0 && v.stream && res.tap.beats == 0 {
					t.Errorf("no heartbeat while the reply was held")
				}
				if n := strings.Count(string(res.tap.out), "search_knowledge"); c.toolCalls > 0 && n == 0 {
					t.Errorf("the valid tool call did not reach the client")
				}
				wantRetryLog(t, res, c)
			})
		}
	}
}

// wantRetryLog checks the retry's log fields, which carry codes only.
func wantRetryLog(t *testing.T, res retryResult, c retryCase) {
	t.Helper()
	fields := res.logs.FilterMessage("stream ended").All()[0].ContextMap()
	got, _ := fields["retry_reasons"].([]any)
	var reasons []string
	for _, r := range got {
		reasons = append(reasons, r.(string))
	}
	if strings.Join(reasons, " ") != strings.Join(c.reasons, " ") {
		t.Errorf("retry_reasons %q, want %q", reasons, c.reasons)
	}
	if n := res.logs.FilterMessage("reply retried").Len(); n != len(c.reasons) && !c.gone {
		t.Errorf("%d reply retried logs, want %d", n, len(c.reasons))
	}
	for _, e := range res.logs.All() {
		for _, f := range e.Context {
			if strings.Contains(f.String, "SAID-NOT-DONE") || strings.Contains(f.String, "make slides") {
				t.Errorf("a log field holds reply or prompt text: %s=%q", f.Key, f.String)
			}
		}
	}
}

// TestRetryRequestBytes checks the retry request byte for byte: the
// first request up to its last message, the failed reply as an assistant
// message, the correction as a user message, then the rest of the first
// request; nothing else changes (specs/004 §7.3.2).
func TestRetryRequestBytes(t *testing.T) {
	v := writerVariants()[0]
	for _, c := range retryCases() {
		if c.name != "rule1_retry_then_pass" && c.name != "native_tool_args_invalid_retry_then_pass" && c.name != "budget_two_retries_all_fail" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			res := serveRetryCase(t, v, c)
			for i := 1; i < len(res.bodies); i++ {
				prev, next := res.bodies[i-1], res.bodies[i]
				at := messagesEnd(t, prev) // the messages array's ']'
				if !strings.HasPrefix(next, prev[:at]+",") || !strings.HasSuffix(next, prev[at:]) {
					t.Fatalf("retry %d does not extend the request in place:\n%s\n%s", i, prev, next)
				}
				added := next[at+1 : len(next)-len(prev[at:])]
				var msgs []map[string]any
				if err := json.Unmarshal([]byte("["+added+"]"), &msgs); err != nil {
					t.Fatalf("the appended messages %q: %v", added, err)
				}
				checkTurn(t, c, i, msgs)
			}
		})
	}
}

// messagesEnd returns the offset of the closing bracket of body's
// top-level "messages" array.
func messagesEnd(t *testing.T, body string) int {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(body))
	depth, inMessages := 0, false
	for {
		tok, err := dec.Token()
		if err != nil {
			t.Fatalf("no messages array in %s: %v", body, err)
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			depth++
		case json.Delim('}'), json.Delim(']'):
			depth--
			if inMessages && depth == 1 {
				return int(dec.InputOffset()) - 1
			}
		case "messages":
			inMessages = inMessages || depth == 1
		}
	}
}

// checkTurn checks the messages a retry appended.
func checkTurn(t *testing.T, c retryCase, i int, msgs []map[string]any) {
	t.Helper()
	switch c.name {
	case "native_tool_args_invalid_retry_then_pass":
		if len(msgs) != 2 || msgs[0]["role"] != "assistant" || msgs[0]["content"] != nil || msgs[1]["role"] != "tool" || msgs[1]["tool_call_id"] != "call_a" {
			t.Fatalf("appended %v, want the assistant's call and its tool message", msgs)
		}
		calls, _ := msgs[0]["tool_calls"].([]any)
		call, _ := calls[0].(map[string]any)
		fn, _ := call["function"].(map[string]any)
		if len(calls) != 1 || call["id"] != "call_a" || fn["name"] != "search_knowledge" || fn["arguments"] != `{"query":42}` {
			t.Errorf("tool_calls %v", calls)
		}
		if s, _ := msgs[1]["content"].(string); !strings.Contains(s, "at /query: got number, want string") {
			t.Errorf("the tool message %q does not name the failing path", s)
		}
	default:
		want := badResult
		if c.name == "budget_two_retries_all_fail" {
			want = `{"status":"clarify_needed","message":"ASK-` + string(rune('0'+i)) + `"}`
		}
		if len(msgs) != 2 || msgs[0]["role"] != "assistant" || msgs[0]["content"] != want || msgs[1]["role"] != "user" {
			t.Fatalf("appended %v, want the failed reply %s and a correction", msgs, want)
		}
		if s, _ := msgs[1]["content"].(string); !strings.HasPrefix(s, "Your previous reply was not accepted") {
			t.Errorf("correction %q", s)
		}
	}
}

// TestRetryMetric checks that each retry is counted by its reason.
func TestRetryMetric(t *testing.T) {
	m, err := registerMetrics(nil)
	if err != nil {
		t.Fatal(err)
	}
	before := testutil.ToFloat64(m.retries.WithLabelValues(validate.CodeArtifactWithoutEvidence))
	for _, c := range retryCases() {
		if c.name == "rule1_retry_then_pass" {
			serveRetryCase(t, writerVariants()[0], c)
		}
	}
	if got := testutil.ToFloat64(m.retries.WithLabelValues(validate.CodeArtifactWithoutEvidence)) - before; got != 1 {
		t.Errorf("caddy_llm_stream_retries_total{reason=artifact_without_evidence} grew by %v, want 1", got)
	}
}

// TestExpectedModeRefused: an expected_mode placeholder that gives no mode
// is a 400 naming it, and the upstream is never called.
func TestExpectedModeRefused(t *testing.T) {
	c := retryCase{name: "bad_mode", format: "final_result", request: chatRequest,
		validate: &config.Validate{ExpectedMode: "{http.request.header.X-Expected-Mode}"},
		header:   http.Header{"X-Expected-Mode": {"sometimes"}}}
	for _, v := range writerVariants() {
		t.Run(v.name, func(t *testing.T) {
			hb, it := config.Duration(0), config.Duration(0)
			h := &Handler{Route: config.Route{Protocol: v.proto.Name, Format: c.format, Heartbeat: &hb, IdleTimeout: &it, Validate: c.validate}}
			ctx, cancel := caddy.NewContext(caddy.Context{Context: t.Context()})
			t.Cleanup(cancel)
			if err := h.Provision(ctx); err != nil {
				t.Fatal(err)
			}
			rec := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(c.request))
			r.Header.Set("X-Expected-Mode", "sometimes")
			caddyhttp.NewTestReplacer(r)
			called := false
			next := caddyhttp.HandlerFunc(func(http.ResponseWriter, *http.Request) error { called = true; return nil })
			if err := h.ServeHTTP(rec, r, next); err != nil {
				t.Fatal(err)
			}
			if called || rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), `expected_mode: \"sometimes\" is not answer, artifact or clarify`) {
				t.Errorf("upstream called %v, status %d, body %s", called, rec.Code, rec.Body.String())
			}
		})
	}
}
