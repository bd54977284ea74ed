package caddymodule

import (
	"net/http"
	"strings"
	"testing"
)

// unknownToolChunks is a native call of a tool the route does not offer,
// and its finish: a hard validation failure (unknown_tool).
var unknownToolChunks = chunk(`{"tool_calls":[{"index":0,"id":"call_web","type":"function","function":{"name":"web_search","arguments":"{\"q\":\"x\"}"}}]}`) +
	`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
	"data: [DONE]\n\n"

// TestConversationShowRetries: on a conversation route whose validate
// block has show_retries, the client sees the refused reply, round_start
// and the retry; the conversation keeps only the accepted reply, and the
// next turn builds on it.
func TestConversationShowRetries(t *testing.T) {
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		if n == 1 {
			writeFlush(w, roleChunk, content("先查一下。"), unknownToolChunks)
			return
		}
		writeFlush(w, roleChunk, content("答案。"), finishChunks)
	})
	route := strings.Replace(convRoute(u.hostPort(), "", "store file "+t.TempDir()), "tool ask_user", "tool ask_user\n\t\t\tvalidate {\n\t\t\t\tshow_retries\n\t\t\t}", 1)
	s := startConvSite(t, func(string) string { return route })
	c := newChatClient(t, s.url("/skillpet"), "Bearer retry")

	evs := c.stream("p", "问题")
	var names []string
	for _, e := range evs {
		names = append(names, e.Name)
	}
	if got := tokens(t, evs); got != "先查一下。答案。" || !strings.Contains(strings.Join(names, ","), "round_start") || lastEvent(evs) != "done" {
		t.Fatalf("the client got tokens %q, events %v", got, names)
	}
	if u.count() != 2 {
		t.Fatalf("the upstream got %d requests, want the reply and its retry", u.count())
	}

	msgs := c.init("p").Messages
	if len(msgs) != 2 || msgs[0].Content != "问题" {
		t.Fatalf("init: %+v", msgs)
	}
	if a := decodeAssistant(t, msgs[1]); a.Text != "答案。" || len(a.ToolCalls) != 0 {
		t.Errorf("stored %+v, want only the accepted reply", a)
	}

	c.stream("p", "再问")
	if up := u.last(t); roles(up.Messages) != "system,user,assistant,user" || up.Messages[2].text() != "答案。" {
		t.Errorf("the next turn's upstream request %s: %+v", roles(up.Messages), up.Messages)
	}
}
