package caddymodule

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform/protocol"
)

// The failure suite (CONTRACT §6): every way an upstream or a client can
// fail, for every protocol, through the real reverse_proxy. Each case
// asserts the exact terminal event or HTTP answer, that the text decoded
// before the failure reached the client whole, that the body parses as
// complete events and ends with a clean EOF, and that nothing hangs: every
// request runs under a deadline.

// failureCase is one failure; run drives it for one protocol.
type failureCase struct {
	name string
	// only, if set, picks the protocols the case applies to.
	only func(ps protoSpec) bool
	run  func(t *testing.T, ps protoSpec)
}

func TestFailureBehaviour(t *testing.T) {
	if testing.Short() {
		t.Skip("caddytest integration test")
	}
	for _, fc := range failureCases() {
		for _, ps := range protoSpecs(t) {
			if fc.only != nil && !fc.only(ps) {
				continue
			}
			t.Run(fc.name+"/"+ps.name, func(t *testing.T) { fc.run(t, ps) })
		}
	}
}

// requestTimeout bounds every request of the suite: a handler that hangs
// fails the read instead of the whole test binary.
const requestTimeout = 15 * time.Second

// exchange loads a route for ps in front of upstream, sends ps's request
// (or body, if set) and reads the whole response.
func exchange(t *testing.T, ps protoSpec, upstream, body, clientProto string, options ...string) result {
	t.Helper()
	srv := startSite(t, "", routeBlock(ps.protocol, upstream, append(append([]string{}, ps.options...), options...)...))
	if body == "" {
		body = ps.request
	}
	before := streamsEnded(t)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	start := time.Now()
	resp, err := post(ctx, newClient(t, clientProto), srv.chatURL(), body, nil)
	if err != nil {
		t.Fatal(err)
	}
	res := collect(t, ps, resp)
	res.elapsed = time.Since(start)
	// A one-body response can be read before the handler has recorded
	// the stream (it does so on its way out).
	waitEnded(t, before, "", 1, 2*time.Second)
	for k, v := range streamsEnded(t) {
		if k != "" && v > before[k] {
			res.recorded = k
		}
	}
	return res
}

// wantRecorded checks the outcome the stream was logged and counted with.
func wantRecorded(t *testing.T, res result, outcome string) {
	t.Helper()
	if res.recorded != outcome {
		t.Errorf("the stream was recorded as %q, want %q", res.recorded, outcome)
	}
}

// stallAfter is a script that streams pieces, then waits to be cancelled.
// It waits even when a write failed: the proxy may cancel (and close the
// connection) while the pieces are still going out, and the request's
// context then ends at once.
func stallAfter(pieces ...string) script {
	return func(u *scriptedUpstream, w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		writeFlush(w, pieces...)
		u.stall(r)
	}
}

// refusal is a script that answers status with body before streaming.
func refusal(status int, contentType, body string) script {
	return func(_ *scriptedUpstream, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Retry-After", "7")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, body)
	}
}

const rateLimitBody = `{"error":{"message":"Rate limit reached for requests","type":"requests","param":null,"code":"rate_limit_exceeded"}}`

// wantRefused checks a refusal before streaming (CONTRACT §6):
// gymbro/jsonseq/aisdk end their stream with provider_error and the
// upstream's message, skillpet answers 502 CHAT_FAILED, openai passes the
// upstream's status, headers and body through.
func wantRefused(t *testing.T, ps protoSpec, res result, status int, body, msg string) {
	t.Helper()
	switch {
	case ps.early:
		wantEnd(t, ps, res, http.StatusOK, "error", "provider_error", msg)
		if !strings.Contains(res.end.message, fmt.Sprint(status)) {
			t.Errorf("message %q does not name the upstream's status %d", res.end.message, status)
		}
	case !ps.passes: // skillpet
		wantEnd(t, ps, res, http.StatusBadGateway, "error", ps.client.RefusalCode("provider_error"), msg)
	case ps.reshapes: // anthropic: the status and headers, its own shape
		wantEnd(t, ps, res, status, "error", "provider_error", msg)
		if res.header.Get("Retry-After") != "7" {
			t.Errorf("the upstream's Retry-After was not passed through: %v", res.header)
		}
	default: // openai, responses: passed through
		if res.status != status || res.body != body {
			t.Errorf("got %d %q, want the upstream's %d %q", res.status, res.body, status, body)
		}
		if res.header.Get("Retry-After") != "7" {
			t.Errorf("the upstream's Retry-After was not passed through: %v", res.header)
		}
	}
	wantAnswer(t, res, "")
}

func failureCases() []failureCase {
	streaming := func(ps protoSpec) bool { return ps.stream }
	return []failureCase{
		{name: "refused_429", run: func(t *testing.T, ps protoSpec) {
			u := newScriptedUpstream(t, refusal(http.StatusTooManyRequests, "application/json", rateLimitBody))
			res := exchange(t, ps, u.hostPort(), "", "h1")
			wantRefused(t, ps, res, http.StatusTooManyRequests, rateLimitBody, "Rate limit reached for requests")
			wantRecorded(t, res, "provider_error")
		}},
		{name: "refused_500_text", run: func(t *testing.T, ps protoSpec) {
			u := newScriptedUpstream(t, refusal(http.StatusInternalServerError, "text/plain", "internal kaboom"))
			res := exchange(t, ps, u.hostPort(), "", "h1")
			wantRefused(t, ps, res, http.StatusInternalServerError, "internal kaboom", "internal kaboom")
			wantRecorded(t, res, "provider_error")
		}},
		{name: "refused_body_cut", run: refusedBodyCut},
		{name: "refused_body_stalls", run: refusedBodyStalls},
		{name: "holds_connection_after_done", run: func(t *testing.T, ps protoSpec) {
			// The reply completes at [DONE] but the upstream keeps its
			// connection open: the client's response still ends, within
			// doneGrace, and the upstream is let go.
			u := newScriptedUpstream(t, stallAfter(roleChunk, content("Hello world"), finishChunks))
			res := exchange(t, ps, u.hostPort(), "", "h1", "idle_timeout 0")
			if res.elapsed > doneGrace+2*time.Second {
				t.Errorf("the response ended after %v, want about %v", res.elapsed, doneGrace)
			}
			wantEnd(t, ps, res, http.StatusOK, "completed", "", "")
			wantAnswer(t, res, "Hello world")
			wantRecorded(t, res, "completed")
			u.waitCancelled(t, 2*time.Second)
		}},
		{name: "compressed_2xx", run: func(t *testing.T, ps protoSpec) {
			// A 2xx body compressed despite Accept-Encoding: identity has no
			// text to parse; the client learns why.
			u := newScriptedUpstream(t, func(_ *scriptedUpstream, w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				w.Header().Set("Content-Encoding", "gzip")
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write([]byte("\x1f\x8b\x08\x00 not really gzip"))
			})
			res := exchange(t, ps, u.hostPort(), "", "h1")
			const msg = "upstream answered 200 with a compressed body (Content-Encoding: gzip)"
			if ps.early {
				wantEnd(t, ps, res, http.StatusOK, "error", "provider_error", msg)
			} else {
				wantEnd(t, ps, res, http.StatusBadGateway, "error", ps.client.RefusalCode("provider_error"), msg)
			}
			wantRecorded(t, res, "provider_error")
		}},
		{name: "unreachable", run: func(t *testing.T, ps protoSpec) {
			addr := freePort(t)
			res := exchange(t, ps, addr, "", "h1")
			// The client learns the upstream could not be reached, not the
			// proxy's internals (the address, Caddy's source lines): those
			// go to the log.
			const msg = "the upstream could not be reached (HTTP 502)"
			if ps.early {
				wantEnd(t, ps, res, http.StatusOK, "error", "provider_error", msg)
			} else {
				wantEnd(t, ps, res, http.StatusBadGateway, "error", ps.client.RefusalCode("provider_error"), msg)
			}
			if strings.Contains(res.body, addr) {
				t.Errorf("the response names the upstream's address %s: %s", addr, res.body)
			}
			wantAnswer(t, res, "")
			wantRecorded(t, res, "provider_error")
		}},
		{name: "dropped_mid_stream", run: func(t *testing.T, ps protoSpec) { droppedMidStream(t, ps, "h1") }},
		{name: "dropped_mid_stream_h2c", run: func(t *testing.T, ps protoSpec) { droppedMidStream(t, ps, "h2c") }},
		{name: "malformed_chunk", run: func(t *testing.T, ps protoSpec) {
			u := newScriptedUpstream(t, stallAfter(roleChunk, content("Hello "), content("world"), "data: {not json\n\n"))
			res := exchange(t, ps, u.hostPort(), "", "h1")
			wantFailed(t, ps, res, "upstream_error", "malformed", "Hello world")
			u.waitCancelled(t, 5*time.Second)
		}},
		{name: "in_stream_error", run: func(t *testing.T, ps protoSpec) {
			u := newScriptedUpstream(t, stallAfter(roleChunk, content("Hello "),
				`data: {"error":{"message":"overloaded","type":"server_error"}}`+"\n\n"))
			res := exchange(t, ps, u.hostPort(), "", "h1")
			wantFailed(t, ps, res, "upstream_error", "overloaded", "Hello ")
			u.waitCancelled(t, 5*time.Second)
		}},
		{name: "idle_timeout_mid_stream", run: func(t *testing.T, ps protoSpec) {
			u := newScriptedUpstream(t, stallAfter(roleChunk, content("Hello ")))
			res := exchange(t, ps, u.hostPort(), "", "h1", "idle_timeout 300ms")
			// The upstream's bytes come at once, so the timeout fires 300ms
			// into the request; the upper bound leaves room for a loaded
			// machine (-race).
			if res.elapsed < 300*time.Millisecond || res.elapsed > 3*time.Second {
				t.Errorf("the stream ended after %v, want 300ms and a little", res.elapsed)
			}
			wantFailed(t, ps, res, "upstream_timeout", "no upstream byte for 300ms", "Hello ")
			u.waitCancelled(t, 2*time.Second)
		}},
		{name: "idle_timeout_before_headers", run: func(t *testing.T, ps protoSpec) {
			u := newScriptedUpstream(t, func(u *scriptedUpstream, _ http.ResponseWriter, r *http.Request) { u.stall(r) })
			res := exchange(t, ps, u.hostPort(), "", "h1", "idle_timeout 300ms")
			if ps.early {
				wantEnd(t, ps, res, http.StatusOK, "error", "upstream_timeout", "no upstream byte for 300ms")
			} else {
				wantEnd(t, ps, res, http.StatusGatewayTimeout, "error", ps.client.RefusalCode("upstream_timeout"), "no upstream byte for 300ms")
			}
			wantAnswer(t, res, "")
			wantRecorded(t, res, "upstream_timeout")
			u.waitCancelled(t, 2*time.Second)
		}},
		{name: "client_disconnect", run: func(t *testing.T, ps protoSpec) { clientDisconnect(t, ps, true) }},
		{name: "client_disconnect_before_headers", run: func(t *testing.T, ps protoSpec) { clientDisconnect(t, ps, false) }},
		{name: "rejected_too_large", run: func(t *testing.T, ps protoSpec) {
			rejected(t, ps, strings.Replace(ps.request, `"hi"`, `"`+strings.Repeat("x", 2000)+`"`, 1), false,
				http.StatusRequestEntityTooLarge, ps.client.ErrorCode("request_too_large"), "1000 bytes (max_request_body)")
		}},
		{name: "rejected_too_large_chunked", run: func(t *testing.T, ps protoSpec) {
			// No Content-Length: the limit is found while reading.
			rejected(t, ps, strings.Replace(ps.request, `"hi"`, `"`+strings.Repeat("x", 2000)+`"`, 1), true,
				http.StatusRequestEntityTooLarge, ps.client.ErrorCode("request_too_large"), "1000 bytes (max_request_body)")
		}},
		{name: "rejected_not_json", run: func(t *testing.T, ps protoSpec) {
			rejected(t, ps, `this is {not JSON`, false, http.StatusBadRequest, ps.client.ErrorCode("invalid_json"), "")
		}},
		{name: "rejected_missing_member", run: func(t *testing.T, ps protoSpec) {
			// messages for an OpenAI body, input for responses, projectId
			// for skillpet's.
			m := ps.client.Missing
			rejected(t, ps, m[0], false, http.StatusBadRequest, m[1], m[2])
		}},
		{name: "limit_max_reply", run: func(t *testing.T, ps protoSpec) {
			pieces := []string{roleChunk}
			var want strings.Builder
			for i, size := 0, len(roleChunk); i < 30; i++ {
				c := content(fmt.Sprintf("word%02d ", i))
				pieces = append(pieces, c)
				// Only chunks wholly within the limit are decoded: the
				// one the limit cuts is not an event.
				if size += len(c); size <= 1000 {
					want.WriteString(fmt.Sprintf("word%02d ", i))
				}
			}
			u := newScriptedUpstream(t, stallAfter(pieces...))
			res := exchange(t, ps, u.hostPort(), "", "h1", "max_reply 1KB")
			wantFailed(t, ps, res, "reply_too_large", "max_reply", want.String())
			u.waitCancelled(t, 5*time.Second)
		}},
		{name: "limit_max_sse_line", run: func(t *testing.T, ps protoSpec) {
			u := newScriptedUpstream(t, stallAfter(roleChunk, content("Hello "), content(strings.Repeat("x", 2000))))
			res := exchange(t, ps, u.hostPort(), "", "h1", "max_sse_line 1KB")
			wantFailed(t, ps, res, "sse_line_too_long", "", "Hello ")
			u.waitCancelled(t, 5*time.Second)
		}},
		{name: "limit_max_tool_calls", run: func(t *testing.T, ps protoSpec) {
			call := func(i int) string {
				return chunk(fmt.Sprintf(`{"tool_calls":[{"index":%d,"id":"call_%d","type":"function","function":{"name":"lookup","arguments":"{}"}}]}`, i, i))
			}
			u := newScriptedUpstream(t, stallAfter(roleChunk, content("Hello "), call(0), call(1)))
			res := exchange(t, ps, u.hostPort(), "", "h1", "max_tool_calls 1")
			wantFailed(t, ps, res, "too_many_tool_calls", "", "Hello ")
			u.waitCancelled(t, 5*time.Second)
		}},
		{name: "limit_max_tag", run: func(t *testing.T, ps protoSpec) {
			// A <phase …> tag longer than max_tag is no tag: it is released
			// as the text it is, with a violation, and the stream goes on
			// (CONTRACT §7: only max_reply, max_sse_line and max_block end
			// one).
			reply := `<thinking><phase id="1"><title>Plan</title>step one</phase>` +
				`<phase id="2" ` + strings.Repeat("x", 64) + `></thinking><final>Done.</final>`
			u := newScriptedUpstream(t, stallAfter(roleChunk, content(reply[:58]), content(reply[58:140]),
				content(reply[140:]), finishChunks))
			res := exchange(t, ps, u.hostPort(), "", "h1", "format thinkingml", "max_tag 32")
			wantEnd(t, ps, res, http.StatusOK, "completed", "", "")
			wantRecorded(t, res, "completed")
			if ps.client.RawAnswer {
				wantAnswer(t, res, reply)
			} else {
				wantAnswer(t, res, "Done.")
			}
			// The reasoning before the tag and the tag itself reached the
			// client, as reasoning.
			if !strings.Contains(res.all, "step one") || !strings.Contains(res.all, strings.Repeat("x", 64)) {
				t.Errorf("the reasoning or the long tag was lost: %q", res.all)
			}
		}},
		// max_key and max_depth bound the reading of the model's JSON, not
		// the stream (CONTRACT §7: only max_reply, max_sse_line and
		// max_block end one): the reply from the key, or from the bracket
		// one level too deep, is answer text, with a violation.
		{name: "limit_max_depth", run: func(t *testing.T, ps protoSpec) {
			jsonLimit(t, ps, `{"status":"answer_ready","message":"Done. ","extra":[[[1]]]}`, "max_depth 3", "Done. [1]]]}")
		}},
		{name: "limit_max_key", run: func(t *testing.T, ps protoSpec) {
			jsonLimit(t, ps, `{"status":"answer_ready","message":"Done. ","a_key_longer_than_16":1}`, "max_key 16", `Done. "a_key_longer_than_16":1}`)
		}},
		{name: "heartbeat", only: streaming, run: heartbeats},
	}
}

// jsonLimit streams a final_result reply that outgrows a JSON limit and
// checks that the stream completes with answer, the model's text from where
// the limit tripped (a raw-answer protocol's, gymbro's: the raw reply).
func jsonLimit(t *testing.T, ps protoSpec, reply, limit, answer string) {
	t.Helper()
	u := newScriptedUpstream(t, stallAfter(roleChunk, content(reply[:30]), content(reply[30:]), finishChunks))
	res := exchange(t, ps, u.hostPort(), "", "h1", "format final_result", limit)
	wantEnd(t, ps, res, http.StatusOK, "completed", "", "")
	wantRecorded(t, res, "completed")
	if ps.client.RawAnswer {
		answer = reply
	}
	wantAnswer(t, res, answer)
}

// wantFailed checks a stream that failed after it started: the error event
// with code (a 502 JSON error, or 504 for a timeout, for a client that
// asked for one JSON body) after the answer text delivered before it.
func wantFailed(t *testing.T, ps protoSpec, res result, code, msg, answer string) {
	t.Helper()
	wantRecorded(t, res, code)
	if ps.stream {
		wantEnd(t, ps, res, http.StatusOK, "error", code, msg)
		wantAnswer(t, res, answer)
		return
	}
	status := http.StatusBadGateway
	if code == "upstream_timeout" {
		status = http.StatusGatewayTimeout
	}
	wantEnd(t, ps, res, status, "error", code, msg)
	wantAnswer(t, res, "")
}

// refusedBodyCut: the upstream refuses with 503 and its error body breaks
// off. It is still a refusal: gymbro/jsonseq/aisdk end with
// provider_error, skillpet answers 502 CHAT_FAILED; openai passes the
// refusal through, so its client sees the body cut short (a read error,
// not a clean end that would pass the fragment off as the whole body).
func refusedBodyCut(t *testing.T, ps protoSpec) {
	u := newScriptedUpstream(t, func(_ *scriptedUpstream, w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		if writeFlush(w, `{"error":{"message":"overloaded, try`) {
			hangUp(w)
		}
	})
	if !ps.passes {
		res := exchange(t, ps, u.hostPort(), "", "h1")
		if ps.early {
			wantEnd(t, ps, res, http.StatusOK, "error", "provider_error", "overloaded, try")
		} else {
			wantEnd(t, ps, res, http.StatusBadGateway, "error", ps.client.RefusalCode("provider_error"), "overloaded, try")
		}
		wantRecorded(t, res, "provider_error")
		return
	}
	if ps.reshapes {
		// Reshaped, the refusal is whole: its status, and the protocol's
		// error around what came of the upstream's message.
		res := exchange(t, ps, u.hostPort(), "", "h1")
		wantEnd(t, ps, res, http.StatusServiceUnavailable, "error", "provider_error", "overloaded, try")
		return
	}
	wantPassedThroughCut(t, ps, u)
}

// wantPassedThroughCut checks what an openai client gets when the
// upstream's refusal, passed through as is, breaks off or stalls: the 503,
// the fragment, and a read error, not a clean end that would pass the
// fragment off as the whole body.
func wantPassedThroughCut(t *testing.T, ps protoSpec, u *scriptedUpstream, options ...string) {
	t.Helper()
	srv := startSite(t, "", routeBlock(ps.protocol, u.hostPort(), append(append([]string{}, ps.options...), options...)...))
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := post(ctx, newClient(t, "h1"), srv.chatURL(), ps.request, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusServiceUnavailable || err == nil || ctx.Err() != nil {
		t.Errorf("got %d %q, read error %v; want 503, the fragment, and a read error", resp.StatusCode, body, err)
	}
}

// refusedBodyStalls: the upstream refuses with 503 and its error body
// stalls midway. idle_timeout still applies: the refusal is answered with
// what came of the body (an openai client's passed-through response is cut
// short), and the upstream is cancelled, instead of hanging until the
// upstream gives up.
func refusedBodyStalls(t *testing.T, ps protoSpec) {
	u := newScriptedUpstream(t, func(u *scriptedUpstream, w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		writeFlush(w, `{"error":{"message":"overloaded, try`)
		u.stall(r)
	})
	if !ps.passes {
		res := exchange(t, ps, u.hostPort(), "", "h1", "idle_timeout 300ms")
		if ps.early {
			wantEnd(t, ps, res, http.StatusOK, "error", "provider_error", "upstream answered 503")
		} else {
			wantEnd(t, ps, res, http.StatusBadGateway, "error", ps.client.RefusalCode("provider_error"), "upstream answered 503")
		}
		if res.elapsed > 3*time.Second {
			t.Errorf("the refusal was answered after %v, want about 300ms", res.elapsed)
		}
		u.waitCancelled(t, 2*time.Second)
		return
	}
	if ps.reshapes {
		res := exchange(t, ps, u.hostPort(), "", "h1", "idle_timeout 300ms")
		wantEnd(t, ps, res, http.StatusServiceUnavailable, "error", "provider_error", "overloaded, try")
		u.waitCancelled(t, 2*time.Second)
		return
	}
	wantPassedThroughCut(t, ps, u, "idle_timeout 300ms")
	u.waitCancelled(t, 2*time.Second)
}

// droppedMidStream: the upstream's TCP connection is cut after three
// answer chunks, with no finish and an unterminated chunked body.
func droppedMidStream(t *testing.T, ps protoSpec, clientProto string) {
	u := newScriptedUpstream(t, func(_ *scriptedUpstream, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		if writeFlush(w, roleChunk, content("Hello "), content("brave "), content("world")) {
			hangUp(w)
		}
	})
	res := exchange(t, ps, u.hostPort(), "", clientProto)
	wantFailed(t, ps, res, "upstream_error", "", "Hello brave world")
}

// rejected sends a body the route refuses (max_request_body 1KB) and checks
// the 4xx JSON answer and that the upstream never saw a request.
func rejected(t *testing.T, ps protoSpec, body string, chunked bool, status int, code, msg string) {
	u := newScriptedUpstream(t, stallAfter(roleChunk, finishChunks))
	opts := append(append([]string{}, ps.options...), "max_request_body 1KB")
	srv := startSite(t, "", routeBlock(ps.protocol, u.hostPort(), opts...))
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	var r io.Reader = strings.NewReader(body)
	if chunked {
		r = io.MultiReader(r) // hides the length: the request goes chunked
	}
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.chatURL(), r)
	req.Header.Set("Content-Type", "application/json")
	resp, err := newClient(t, "h1").Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if chunked && req.ContentLength != 0 {
		t.Fatalf("the request has a length (%d): not the chunked path", req.ContentLength)
	}
	res := collect(t, ps, resp)
	wantEnd(t, ps, res, status, "error", code, msg)
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("Content-Type %q", ct)
	}
	if n := u.requests.Load(); n != 0 {
		t.Errorf("the upstream received %d requests", n)
	}
}

// clientDisconnect: the client hangs up, after the first answer text
// (midStream) or while the upstream has not answered; the upstream request
// must be cancelled at once, and the handler return and record the stream
// as client_gone (not as an upstream failure).
func clientDisconnect(t *testing.T, ps protoSpec, midStream bool) {
	sent := make(chan struct{}, 1)
	u := newScriptedUpstream(t, func(u *scriptedUpstream, w http.ResponseWriter, r *http.Request) {
		if midStream {
			sseHead(w)
			writeFlush(w, roleChunk, content("Hello "))
		}
		sent <- struct{}{}
		u.stall(r)
	})
	srv := startSite(t, "", routeBlock(ps.protocol, u.hostPort(), ps.options...))
	before := streamsEnded(t)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	respc := make(chan *http.Response, 1)
	go func() {
		// Headers come only once the upstream answered, except for the
		// protocols that open their stream early: Do may return only when
		// the request is cancelled.
		resp, err := post(ctx, newClient(t, "h1"), srv.chatURL(), ps.request, nil)
		if err == nil {
			respc <- resp
		}
		close(respc)
	}()
	select {
	case <-sent:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream was never called")
	}
	if ps.stream && (midStream || ps.early) {
		resp := <-respc
		if resp == nil {
			t.Fatal("no response")
		}
		defer resp.Body.Close()
		sr := startReading(resp.Body)
		if midStream {
			sr.until(t, 10*time.Second, "the first answer text", func(ev sseEvent) bool { return strings.Contains(ev.Data, "Hello") })
		} else {
			sr.next(t, 10*time.Second) // the stream's opening
		}
	}
	hungUp := time.Now()
	cancel()
	u.waitCancelled(t, 2*time.Second)
	t.Logf("upstream cancelled %v after the client left", time.Since(hungUp))
	// The handler records the stream just before it returns.
	waitEnded(t, before, "", 1, 2*time.Second)
	if after := streamsEnded(t); after["client_gone"]-before["client_gone"] != 1 {
		t.Errorf("the stream was recorded as %v, want client_gone (before %v)", after, before)
	}
}

// heartbeats: with heartbeat 200ms and an upstream silent before its
// headers (for protocols that open the stream early), before its first
// body byte and between chunks, keep-alives arrive in each silence, and
// none after the terminal event. The exchange runs on a raw keep-alive
// connection so that a timer firing after the request would show up as
// stray bytes on it.
func heartbeats(t *testing.T, ps protoSpec) {
	gate := make(chan struct{})
	reached := make(chan string, 4)
	wait := func(u *scriptedUpstream, r *http.Request, stage string) bool {
		reached <- stage
		select {
		case <-gate:
			return true
		case <-r.Context().Done():
		case <-u.stop:
		}
		return false
	}
	u := newScriptedUpstream(t, func(u *scriptedUpstream, w http.ResponseWriter, r *http.Request) {
		if ps.early && !wait(u, r, "before the headers") {
			return
		}
		sseHead(w)
		if !wait(u, r, "before the first byte") {
			return
		}
		if !writeFlush(w, roleChunk, content("Hello ")) || !wait(u, r, "between chunks") {
			return
		}
		writeFlush(w, content("world"), finishChunks)
	})
	const interval = 200 * time.Millisecond
	srv := startSite(t, "", routeBlock(ps.protocol, u.hostPort(), append(append([]string{}, ps.options...), "heartbeat 200ms")...))

	conn := srv.dialRaw(t)
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	br := bufio.NewReader(conn)
	req, _ := http.NewRequest(http.MethodPost, srv.chatURL(), strings.NewReader(ps.request))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Request-Id", "client-req-1")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	isBeat := func(ev sseEvent) bool { return ps.client.Heartbeat(ev.wire()) }
	sr := startReading(resp.Body)
	stages := 2
	if ps.early {
		stages = 3
	}
	for range stages {
		var stage string
		select {
		case stage = <-reached:
		case <-time.After(10 * time.Second):
			t.Fatal("the upstream did not reach its next silence")
		}
		sr.until(t, 10*interval, "a heartbeat "+stage, isBeat)
		gate <- struct{}{}
	}
	raw := sr.wait(t, 10*time.Second)
	resp.Body.Close()

	events, err := parseSSE(raw)
	if err != nil {
		t.Fatal(err)
	}
	res := result{status: resp.StatusCode, header: resp.Header, body: raw, events: events}
	// The client reads the heartbeats by its protocol's rules (gymbro's
	// and jsonseq's carry ts and the stream's ids), and none after the
	// terminal event.
	read(t, ps, &res)
	wantEnd(t, ps, res, http.StatusOK, "completed", "", "")
	wantAnswer(t, res, "Hello world")
	if id := res.header.Get("X-Request-Id"); id != "client-req-1" {
		t.Errorf("X-Request-Id %q, want the client's", id)
	}
	// Heartbeats came before the first answer text and between the
	// chunks.
	first, between := -1, false
	for i, ev := range events {
		switch {
		case first < 0 && strings.Contains(ev.Data, "Hello"):
			first = i
		case first >= 0 && isBeat(ev):
			between = true
		}
	}
	if first < 0 || !between || !slicesContainsBefore(events, first, isBeat) {
		t.Errorf("heartbeats missing before the first text or between chunks:\n%s", raw)
	}

	// The timers are stopped with the request: for a few intervals after
	// the end nothing more arrives on the kept-alive connection, and the
	// next request on it gets a clean answer.
	_ = conn.SetReadDeadline(time.Now().Add(3 * interval))
	if b, err := br.Peek(1); err == nil {
		t.Fatalf("bytes after the end of the response: %q", b)
	} else if ne, ok := err.(net.Error); !ok || !ne.Timeout() {
		t.Fatalf("connection after the response: %v", err)
	}
	_ = conn.SetDeadline(time.Now().Add(requestTimeout))
	req2, _ := http.NewRequest(http.MethodPost, srv.chatURL(), strings.NewReader(`not JSON`))
	if err := req2.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp2, err := http.ReadResponse(br, req2)
	if err != nil {
		t.Fatalf("the next request on the connection: %v", err)
	}
	body2, err := io.ReadAll(resp2.Body)
	resp2.Body.Close()
	if err != nil || resp2.StatusCode != http.StatusBadRequest {
		t.Errorf("the next request on the connection: %d %q %v", resp2.StatusCode, body2, err)
	}
}

// slicesContainsBefore reports whether an event before index end matches.
func slicesContainsBefore(events []sseEvent, end int, match func(sseEvent) bool) bool {
	for _, ev := range events[:end] {
		if match(ev) {
			return true
		}
	}
	return false
}

// TestIdleTimeoutBeforeTheAnswer drives the handler directly with a next
// that does what reverse_proxy does when its request is cancelled before
// the upstream answered: it records 499 (reverseproxy.go, caddy#7396).
// The idle timeout caused that cancellation, so the client must get the
// timeout, not the 499: an error event, or 504 where the stream has not
// opened (skillpet, openai).
func TestIdleTimeoutBeforeTheAnswer(t *testing.T) {
	for _, ps := range protoSpecs(t) {
		t.Run(ps.name, func(t *testing.T) {
			h := unitHandler(t, ps, 0, 20*time.Millisecond)
			w := httptest.NewRecorder()
			r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(ps.request))
			if err := h.ServeHTTP(w, r, scriptedNext(2)); err != nil {
				t.Fatal(err)
			}
			res := collect(t, ps, w.Result())
			if ps.early {
				wantEnd(t, ps, res, http.StatusOK, "error", "upstream_timeout", "no upstream byte")
			} else {
				wantEnd(t, ps, res, http.StatusGatewayTimeout, "error", ps.client.RefusalCode("upstream_timeout"), "no upstream byte")
			}
		})
	}
}

// spec returns the protoSpec named n.
func spec(t *testing.T, n string) protoSpec {
	t.Helper()
	for _, ps := range protoSpecs(t) {
		if ps.name == n {
			return ps
		}
	}
	t.Fatalf("no protoSpec %q", n)
	return protoSpec{}
}

// TestSlowClientIsNoUpstreamTimeout: a healthy upstream streams a long
// reply at once while the client pauses reading longer than idle_timeout.
// The writes to the client block on its backpressure, but the upstream was
// never silent: the stream must complete, not end in upstream_timeout.
func TestSlowClientIsNoUpstreamTimeout(t *testing.T) {
	if testing.Short() {
		t.Skip("caddytest integration test")
	}
	ps := spec(t, "gymbro")
	piece := strings.Repeat("x", 4000)
	// The reply is built before the upstream answers: built after its
	// headers, it took longer than idle_timeout on a loaded machine (-race),
	// a real upstream silence that the stream rightly timed out on.
	pieces := []string{roleChunk}
	for range 4000 {
		pieces = append(pieces, content(piece))
	}
	u := newScriptedUpstream(t, func(_ *scriptedUpstream, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		writeFlush(w, append(pieces, finishChunks)...)
	})
	srv := startSite(t, "", routeBlock(ps.protocol, u.hostPort(), "idle_timeout 500ms", "max_reply 100MB"))
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	resp, err := post(ctx, newClient(t, "h1"), srv.chatURL(), ps.request, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	first := make([]byte, 1)
	if _, err := resp.Body.Read(first); err != nil {
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second) // the client stops reading: the scenario, not an assertion
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	res := result{status: resp.StatusCode, header: resp.Header, body: string(first) + string(body)}
	read(t, ps, &res)
	if res.end.kind != "completed" {
		t.Errorf("the stream did not complete: it ended with %+v", res.end)
	}
}

// TestAbortFromAnotherHandler: an `abort` after llm_stream panics with
// http.ErrAbortHandler before any upstream answered. That is not the
// proxy's mid-body abort, so the connection is dropped as abort means,
// not turned into a stream with an upstream error.
func TestAbortFromAnotherHandler(t *testing.T) {
	if testing.Short() {
		t.Skip("caddytest integration test")
	}
	for _, n := range []string{"gymbro", "skillpet", "openai", "openai_json"} {
		t.Run(n, func(t *testing.T) {
			ps := spec(t, n)
			srv := startSite(t, "", "\t"+llmStreamBlock(ps.protocol, ps.options...)+"\n\tabort\n")
			ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
			defer cancel()
			resp, err := post(ctx, newClient(t, "h1"), srv.chatURL(), ps.request, nil)
			if err != nil {
				return // the connection was dropped before a response: abort's meaning
			}
			defer resp.Body.Close()
			body, err := io.ReadAll(resp.Body)
			if err == nil || strings.Contains(string(body), protocol.MsgBrokeOff) {
				t.Errorf("got %d %q (read error %v); want the connection dropped", resp.StatusCode, body, err)
			}
		})
	}
}
