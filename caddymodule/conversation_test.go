package caddymodule

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/conversation"
)

// The whole @skillpet/chat flow against llm_mock (CONTRACT.md §9, issue
// 12): the mock's first reply asks with ask_user, its second answers.
const (
	convReply1 = "好的，先问你几个问题。"
	convReply2 = "开始写：玄幻短篇《星辰诀》。"
	convMock   = `reply_text "` + convReply1 + `"
			reply_text "` + convReply2 + `"
			tool_calls_file testdata/conversation/ask_user_call.json
			tool_calls_file testdata/conversation/no_calls.json
			chunk_size 5
			interval 0
			record`
)

func convMockSite(t *testing.T, options ...string) site {
	return startConvSite(t, func(addr string) string {
		return convRoute(addr, convMock, append([]string{"store file " + t.TempDir()}, options...)...)
	})
}

func TestConversationFlow(t *testing.T) {
	s := convMockSite(t, `agent_name "Test Agent"`, "agent_avatar https://example.com/a.png", "queued_send 3")
	alice := newChatClient(t, s.url("/skillpet"), "Bearer alice")

	// 1. init: the agent and capabilities from the Caddyfile, no history.
	d := alice.init("p1")
	if d.Agent.ID != "llmstream" || d.Agent.Name != "Test Agent" || d.Agent.AvatarURL != "https://example.com/a.png" {
		t.Errorf("agent %+v", d.Agent)
	}
	caps := d.Capabilities
	if !caps.Thinking.Enabled || !caps.Thinking.DefaultOn || caps.Search.Enabled || !caps.Reset.Enabled ||
		caps.Reset.ClearURL != "/skillpet/conversation/{projectId}" || caps.QueuedSend == nil || caps.QueuedSend.MaxQueueSize != 3 {
		t.Errorf("capabilities %+v", caps)
	}
	if len(d.Messages) != 0 {
		t.Fatalf("a new conversation has %d messages", len(d.Messages))
	}

	// 2. The first message: the model answers and asks with ask_user.
	evs := alice.stream("p1", "帮我写个故事")
	if got := tokens(t, evs); got != convReply1 {
		t.Errorf("turn 1 tokens %q", got)
	}
	var asked json.RawMessage
	for _, e := range evs {
		if e.Name == "ask_user" {
			var v struct{ Questions json.RawMessage }
			_ = json.Unmarshal([]byte(e.Data), &v)
			asked = v.Questions
		}
	}
	if asked == nil || lastEvent(evs) != "done" {
		t.Fatalf("turn 1: no ask_user or no done: %+v", evs)
	}

	// 3. The component sends the formatted answers as the next message
	// (specs/002 §3.4).
	answers := "你的故事是什么题材？：玄幻/修仙\n目标篇幅：短篇 5-10万字"
	evs = alice.stream("p1", answers)
	if got := tokens(t, evs); got != convReply2 || lastEvent(evs) != "done" {
		t.Errorf("turn 2: tokens %q, last %s", got, lastEvent(evs))
	}

	// The upstream saw the questions and the answers: the second request
	// holds the first turn, the ask_user call, and the answers as its tool
	// message.
	bodies := recorded(t, s)
	if len(bodies) != 2 {
		t.Fatalf("the upstream got %d requests", len(bodies))
	}
	first, second := bodies[0].Messages, bodies[1].Messages
	if roles(first) != "system,user" || first[1].text() != "帮我写个故事" {
		t.Errorf("turn 1 upstream messages %s: %+v", roles(first), first)
	}
	if roles(second) != "system,user,assistant,tool" {
		t.Fatalf("turn 2 upstream messages %s: %+v", roles(second), second)
	}
	call := second[2].ToolCalls
	if second[2].text() != convReply1 || len(call) != 1 || call[0].Function.Name != "ask_user" || call[0].ID == "" ||
		!strings.Contains(call[0].Function.Arguments, "你的故事是什么题材？") {
		t.Errorf("turn 2: the assistant message %+v", second[2])
	}
	if second[3].ToolCallID != call[0].ID || second[3].text() != answers {
		t.Errorf("turn 2: the tool message %+v does not answer %q with the answers", second[3], call[0].ID)
	}
	if second[0].Role != "system" || !strings.Contains(second[0].text(), "conversation test agent") || len(bodies[1].Tools) != 1 {
		t.Errorf("turn 2 lost the system prompt or the tools: %+v", bodies[1])
	}

	// 4. init returns both turns in the storage format of specs/002 §4.
	msgs := alice.init("p1").Messages
	if len(msgs) != 5 {
		t.Fatalf("init after two turns: %d messages: %+v", len(msgs), msgs)
	}
	if msgs[0].Role != "user" || msgs[0].Content != "帮我写个故事" || msgs[3].Role != "user" || msgs[3].Content != answers {
		t.Errorf("user messages %+v %+v", msgs[0], msgs[3])
	}
	a1 := decodeAssistant(t, msgs[1])
	if a1.Text != convReply1 || a1.Status != "" || len(a1.ToolCalls) != 1 || a1.ToolCalls[0].ID != call[0].ID || a1.ToolCalls[0].Function.Name != "ask_user" {
		t.Errorf("the first reply %+v", a1)
	}
	tool := decodeTool(t, msgs[2])
	if tool.ToolCallID != call[0].ID || tool.Body != conversation.AskUserPrefix+string(asked) {
		t.Errorf("the ask_user record %+v, want the questions %s", tool, asked)
	}
	if a2 := decodeAssistant(t, msgs[4]); a2.Text != convReply2 || len(a2.ToolCalls) != 0 {
		t.Errorf("the second reply %+v", a2)
	}
	ids := map[string]bool{}
	for _, m := range msgs {
		if m.ID == "" || ids[m.ID] {
			t.Errorf("message id %q missing or repeated", m.ID)
		}
		ids[m.ID] = true
	}

	// 5. clear at the clearUrl, then init is empty.
	clearURL := s.url(strings.ReplaceAll(caps.Reset.ClearURL, "{projectId}", "p1"))
	if status, body := alice.call(http.MethodDelete, clearURL, ""); status != http.StatusOK {
		t.Fatalf("clear: %d %s", status, body)
	}
	if n := len(alice.init("p1").Messages); n != 0 {
		t.Fatalf("init after clear: %d messages", n)
	}
}
