package caddymodule

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/llmstream/llmstream/conversation/storetest"
)

// TestConversationStoreDown: a store that is down is a clear error before
// any stream starts, and nothing reaches the upstream.
func TestConversationStoreDown(t *testing.T) {
	u := newRecordingUpstream(t, func(int, upstreamBody, http.ResponseWriter, *http.Request) {})
	down := freePort(t) // nothing listens there
	s := startConvSite(t, func(string) string {
		return convRoute(u.hostPort(), "", "store redis redis://"+down+"/0")
	})
	c := newChatClient(t, s.url("/skillpet"), "Bearer a")
	for _, tc := range []struct{ method, path, body, code string }{
		{http.MethodGet, "/skillpet/init/p", "", "STORE_UNAVAILABLE"},
		{http.MethodPost, "/skillpet/stream", `{"projectId":"p","message":"hi"}`, "CHAT_FAILED"},
		{http.MethodDelete, "/skillpet/conversation/p", "", "STORE_UNAVAILABLE"},
	} {
		status, body := c.call(tc.method, s.url(tc.path), tc.body)
		var v struct{ Error, Message string }
		if status != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &v) != nil || v.Error != tc.code ||
			v.Message != "the conversation store is unavailable" {
			t.Errorf("%s %s: %d %s", tc.method, tc.path, status, body)
		}
		if strings.Contains(body, down) {
			t.Errorf("the answer names the store's address: %s", body)
		}
	}
	if n := u.count(); n != 0 {
		t.Errorf("the upstream got %d requests", n)
	}
}

// TestConversationConcurrency: 200 conversations of 5 turns each, all at
// once. Every upstream request holds exactly its conversation's earlier
// turns, in order, and every conversation ends with its ten messages: no
// turn is lost, none lands in another conversation, none interleaves.
func TestConversationConcurrency(t *testing.T) {
	stores := map[string]func(t *testing.T) string{
		"file":  func(t *testing.T) string { return "store file " + t.TempDir() },
		"redis": func(t *testing.T) string { return "store redis " + storetest.StartRedis(t) },
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) { concurrentConversations(t, store(t)) })
	}
}

func concurrentConversations(t *testing.T, store string) {
	const convs, turns = 200, 5
	var mu sync.Mutex
	var upstreamErrs []error
	u := newRecordingUpstream(t, func(_ int, b upstreamBody, w http.ResponseWriter, _ *http.Request) {
		if err := checkHistory(b.Messages); err != nil {
			mu.Lock()
			upstreamErrs = append(upstreamErrs, err)
			mu.Unlock()
		}
		last := b.Messages[len(b.Messages)-1].text()
		sseHead(w)
		half := len(last) / 2
		writeFlush(w, roleChunk, content("echo "+last[:half]), content(last[half:]), finishChunks)
	})
	s := startConvSite(t, func(string) string { return convRoute(u.hostPort(), "", store) })
	tr := &http.Transport{MaxIdleConnsPerHost: convs, MaxConnsPerHost: 0}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: tr}

	var wg sync.WaitGroup
	errs := make(chan error, convs)
	for i := range convs {
		wg.Go(func() {
			for k := 1; k <= turns; k++ {
				if err := streamTurn(hc, s.url("/skillpet/stream"), i, k); err != nil {
					errs <- fmt.Errorf("conversation %d turn %d: %w", i, k, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for _, err := range upstreamErrs {
		t.Error(err)
	}
	if n := u.count(); n != convs*turns {
		t.Errorf("the upstream got %d requests, want %d", n, convs*turns)
	}
	for i := range convs {
		c := newChatClient(t, s.url("/skillpet"), convAuth(i))
		msgs := c.init("p").Messages
		if len(msgs) != 2*turns {
			t.Errorf("conversation %d has %d messages, want %d", i, len(msgs), 2*turns)
			continue
		}
		for k := 1; k <= turns; k++ {
			q, a := msgs[2*k-2], msgs[2*k-1]
			if q.Role != "user" || q.Content != convMessage(i, k) {
				t.Errorf("conversation %d message %d: %+v", i, 2*k-2, q)
			}
			if r := decodeAssistant(t, a); r.Text != "echo "+convMessage(i, k) || r.Status != "" {
				t.Errorf("conversation %d reply %d: %+v", i, k, r)
			}
		}
	}
}

func convAuth(i int) string       { return fmt.Sprintf("Bearer user-%d", i) }
func convMessage(i, k int) string { return fmt.Sprintf("c%d t%d", i, k) }

// streamTurn posts turn k of conversation i and reads its stream to done.
func streamTurn(hc *http.Client, url string, i, k int) error {
	b, _ := json.Marshal(map[string]string{"projectId": "p", "message": convMessage(i, k)})
	req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, url, strings.NewReader(string(b)))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", convAuth(i))
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("status %d: %s", resp.StatusCode, raw)
	}
	evs, err := parseSSE(string(raw))
	if err != nil {
		return err
	}
	var text strings.Builder
	for _, e := range evs {
		if e.Name == "token" {
			var v struct{ Content string }
			_ = json.Unmarshal([]byte(e.Data), &v)
			text.WriteString(v.Content)
		}
	}
	if lastEvent(evs) != "done" || text.String() != "echo "+convMessage(i, k) {
		return fmt.Errorf("stream %q ended with %q", text.String(), lastEvent(evs))
	}
	return nil
}

// checkHistory checks that an upstream request of conversation i's turn k
// holds the system prompt, then its turns 1 to k-1, then turn k's message.
func checkHistory(msgs []upstreamMsg) error {
	if len(msgs) < 2 || msgs[0].Role != "system" {
		return errors.New("no system prompt first")
	}
	var i, k int
	last := msgs[len(msgs)-1]
	if _, err := fmt.Sscanf(last.text(), "c%d t%d", &i, &k); err != nil || last.Role != "user" {
		return fmt.Errorf("the last message %+v is not a turn", last)
	}
	if len(msgs) != 2*k {
		return fmt.Errorf("turn %d of conversation %d: %d messages, want %d", k, i, len(msgs), 2*k)
	}
	for j := 1; j < k; j++ {
		q, a := msgs[2*j-1], msgs[2*j]
		if q.Role != "user" || q.text() != convMessage(i, j) || a.Role != "assistant" || a.text() != "echo "+convMessage(i, j) {
			return fmt.Errorf("turn %d of conversation %d: history turn %d is %+v %+v", k, i, j, q, a)
		}
	}
	return nil
}
