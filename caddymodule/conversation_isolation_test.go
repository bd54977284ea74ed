package caddymodule

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/conversation"
)

// TestConversationIsolation: conversations are keyed by scope (the
// Authorization header) and projectId; one scope never reads, continues or
// clears another's, and a request without a scope reaches nothing.
func TestConversationIsolation(t *testing.T) {
	s := convMockSite(t)
	alice := newChatClient(t, s.url("/skillpet"), "Bearer alice")
	bob := newChatClient(t, s.url("/skillpet"), "Bearer bob")
	nobody := newChatClient(t, s.url("/skillpet"), "")

	alice.stream("p1", "alice's secret plan")
	if n := len(alice.init("p1").Messages); n != 3 {
		t.Fatalf("alice has %d messages", n)
	}
	// Bob does not read it…
	if n := len(bob.init("p1").Messages); n != 0 {
		t.Fatalf("bob reads %d of alice's messages", n)
	}
	// …does not clear it…
	if status, _ := bob.call(http.MethodDelete, s.url("/skillpet/conversation/p1"), ""); status != http.StatusOK {
		t.Fatalf("bob's clear: %d", status)
	}
	if n := len(alice.init("p1").Messages); n != 3 {
		t.Fatalf("bob's clear left alice %d messages", n)
	}
	// …and does not continue it: his turn goes upstream alone.
	bob.stream("p1", "bob's question")
	bodies := recorded(t, s)
	last := bodies[len(bodies)-1].Messages
	if roles(last) != "system,user" || last[1].text() != "bob's question" {
		t.Fatalf("bob's upstream request %s: %+v", roles(last), last)
	}
	for _, m := range last {
		if strings.Contains(string(m.Content), "alice") {
			t.Fatalf("bob's request holds alice's text: %s", m.Content)
		}
	}
	if n := len(alice.init("p1").Messages); n != 3 {
		t.Fatalf("alice has %d messages after bob's turn", n)
	}
	// Another project of alice's is another conversation.
	if n := len(alice.init("p2").Messages); n != 0 {
		t.Fatalf("p2 has %d messages", n)
	}

	// No scope: 403 everywhere, and nothing goes upstream.
	before := len(recorded(t, s))
	for _, tc := range []struct{ method, path, body string }{
		{http.MethodGet, "/skillpet/init/p1", ""},
		{http.MethodPost, "/skillpet/stream", `{"projectId":"p1","message":"hi"}`},
		{http.MethodDelete, "/skillpet/conversation/p1", ""},
	} {
		status, body := nobody.call(tc.method, s.url(tc.path), tc.body)
		if status != http.StatusForbidden || !strings.Contains(body, `"error":"FORBIDDEN"`) {
			t.Errorf("%s %s without Authorization: %d %s", tc.method, tc.path, status, body)
		}
		if strings.Contains(body, "alice") {
			t.Errorf("the refusal leaks a scope: %s", body)
		}
	}
	if after := len(recorded(t, s)); after != before {
		t.Errorf("a request without a scope reached the upstream")
	}
	if n := len(alice.init("p1").Messages); n != 3 {
		t.Fatalf("alice has %d messages at the end", n)
	}
}

// TestConversationEndpoints: what else the route answers.
func TestConversationEndpoints(t *testing.T) {
	s := convMockSite(t)
	c := newChatClient(t, s.url("/skillpet"), "Bearer x")
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		// specs/002 §2.4: a route without tools has no call waiting for a
		// choice (CONTRACT.md §13).
		{http.MethodPost, "/skillpet/tool-response", `{"projectId":"p","toolCallId":"c","toolName":"t","optionId":"o"}`, http.StatusNotFound, "NOT_WAITING"},
		{http.MethodPost, "/skillpet/tool-response", `{"projectId":"p","toolCallId":"c"}`, http.StatusBadRequest, "MISSING_PARAMS"},
		{http.MethodGet, "/skillpet/stream", "", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{http.MethodPost, "/skillpet/init/p1", "{}", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{http.MethodGet, "/skillpet/conversation/p1", "", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{http.MethodGet, "/skillpet/image-select/p1", "", http.StatusMethodNotAllowed, "METHOD_NOT_ALLOWED"},
		{http.MethodGet, "/skillpet/init/", "", http.StatusBadRequest, "MISSING_PARAMS"},
		{http.MethodGet, "/skillpet/init/" + strings.Repeat("x", 257), "", http.StatusBadRequest, "MISSING_PARAMS"},
		{http.MethodPost, "/skillpet/stream", `{"message":"no project"}`, http.StatusBadRequest, "MISSING_PARAMS"},
		{http.MethodPost, "/skillpet/stream", `{"projectId":"` + strings.Repeat("x", 257) + `","message":"m"}`, http.StatusBadRequest, "MISSING_PARAMS"},
	} {
		t.Run(tc.method+" "+tc.path[:min(len(tc.path), 40)], func(t *testing.T) {
			status, body := c.call(tc.method, s.url(tc.path), tc.body)
			var v struct{ Error, Message string }
			if status != tc.status || json.Unmarshal([]byte(body), &v) != nil || v.Error != tc.code || v.Message == "" {
				t.Errorf("%d %s, want %d %s", status, body, tc.status, tc.code)
			}
		})
	}
	// OPTIONS (a CORS preflight) goes on to the next handler: here the
	// mock, which refuses it in its own words.
	if status, body := c.call(http.MethodOptions, s.url("/skillpet/init/p1"), ""); status != http.StatusMethodNotAllowed ||
		strings.Contains(body, "METHOD_NOT_ALLOWED") || !strings.Contains(body, "method_not_allowed") {
		t.Errorf("OPTIONS: %d %s", status, body)
	}
	// A project named like an endpoint is read by the method.
	c.stream("stream", "hi")
	if n := len(c.init("stream").Messages); n != 3 {
		t.Errorf("the init of project \"stream\": %d messages", n)
	}
	if status, _ := c.call(http.MethodDelete, s.url("/skillpet/conversation/stream"), ""); status != http.StatusOK {
		t.Errorf("the clear of project \"stream\": %d", status)
	}
	// A projectId with a slash or spaces, escaped in the path.
	c.stream("a/b c", "hi") // the mock's second reply: no ask_user
	if n := len(c.init("a%2Fb%20c").Messages); n != 2 {
		t.Errorf("an escaped projectId: %d messages", n)
	}
	if len(recorded(t, s)) != 2 {
		t.Errorf("a refused request reached the upstream")
	}
}

// TestConversationBusy: a second stream on a conversation whose reply is
// still streaming is refused with 409 before it reaches the upstream, and
// so is a clear; other conversations are not held up; once the reply is
// stored the conversation continues.
func TestConversationBusy(t *testing.T) {
	u := newGatedUpstream(t, roleChunk, content("first reply"), finishChunks)
	s := startConvSite(t, func(string) string {
		return convRoute(strings.TrimPrefix(u.URL, "http://"), "", "store file "+t.TempDir())
	})
	c := newChatClient(t, s.url("/skillpet"), "Bearer a")

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp := c.do(ctx, http.MethodPost, s.url("/skillpet/stream"), `{"projectId":"p","message":"one"}`)
	defer resp.Body.Close()
	er := readEvents(resp.Body, false)
	u.release <- struct{}{} // the first content chunk
	if ev, ok := er.next(t, 1); !ok || ev.Name != "token" {
		t.Fatalf("the first stream: %+v", ev)
	}

	evs := c.stream("p", "two", http.StatusConflict)
	if !strings.Contains(evs[0].Data, `"error":"CONVERSATION_BUSY"`) {
		t.Errorf("the second stream: %s", evs[0].Data)
	}
	if status, body := c.call(http.MethodDelete, s.url("/skillpet/conversation/p"), ""); status != http.StatusConflict {
		t.Errorf("clear while streaming: %d %s", status, body)
	}
	// Reading is allowed: the user's message is stored, the reply not yet.
	if msgs := c.init("p").Messages; len(msgs) != 1 || msgs[0].Content != "one" {
		t.Errorf("init while streaming: %+v", msgs)
	}
	u.mu.Lock()
	requests := len(u.bodies)
	u.mu.Unlock()
	if requests != 1 {
		t.Errorf("the upstream got %d requests, want only the first stream's", requests)
	}

	u.release <- struct{}{} // the finish
	for {
		ev, ok := er.next(t, 2)
		if !ok {
			t.Fatal("the first stream ended without done")
		}
		if ev.Name == "done" {
			break
		}
	}
	// done is written after the reply is stored: the next message, sent
	// at once, finds the conversation free and the reply in it. (The
	// gated upstream waits for a release after every chunk, the last too,
	// where the first stream may still be: three releases let the third
	// stream's chunks through.)
	for range 3 {
		u.release <- struct{}{}
	}
	if evs := c.stream("p", "three"); tokens(t, evs) != "first reply" || lastEvent(evs) != "done" {
		t.Errorf("the third stream: %+v", evs)
	}
	msgs := c.init("p").Messages
	if len(msgs) != 4 || msgs[0].Content != "one" || msgs[2].Content != "three" {
		t.Fatalf("history %+v", msgs)
	}
	if a := decodeAssistant(t, msgs[1]); a.Text != "first reply" || a.Status != "" {
		t.Errorf("the first reply %+v", a)
	}
}

// TestConversationClientLeaves: a client that leaves mid-reply keeps what
// it saw, marked, and the next turn's upstream request says it was cut off.
func TestConversationClientLeaves(t *testing.T) {
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		if n == 1 {
			writeFlush(w, roleChunk, content("半句"))
			<-r.Context().Done()
			return
		}
		writeFlush(w, roleChunk, content("next reply"), finishChunks)
	})
	s := startConvSite(t, func(string) string { return convRoute(u.hostPort(), "", "store file "+t.TempDir()) })
	c := newChatClient(t, s.url("/skillpet"), "Bearer a")
	ctx, cancel := context.WithCancel(context.Background())
	resp := c.do(ctx, http.MethodPost, s.url("/skillpet/stream"), `{"projectId":"p","message":"tell me"}`)
	er := readEvents(resp.Body, false)
	if ev, ok := er.next(t, 1); !ok || ev.Name != "token" {
		t.Fatalf("first event %+v", ev)
	}
	cancel()
	resp.Body.Close()
	select {
	case <-u.cancelled:
	case <-time.After(10 * time.Second):
		t.Fatal("the upstream request was not cancelled")
	}

	// The reply is stored when the request ends, soon after.
	var msgs []conversation.HistoryMessage
	deadline := time.Now().Add(10 * time.Second)
	for len(msgs) < 2 && time.Now().Before(deadline) {
		msgs = c.init("p").Messages
		time.Sleep(20 * time.Millisecond)
	}
	if len(msgs) != 2 {
		t.Fatalf("the interrupted turn was not stored: %+v", msgs)
	}
	if a := decodeAssistant(t, msgs[1]); a.Text != "半句" || a.Status != "interrupted" {
		t.Errorf("the interrupted reply %+v", a)
	}
	c.stream("p", "go on")
	up := u.last(t)
	if roles(up.Messages) != "system,user,assistant,user" || up.Messages[2].text() != "半句\n\n"+conversation.NoteCutOff {
		t.Errorf("the next request %s: %+v", roles(up.Messages), up.Messages)
	}
}
