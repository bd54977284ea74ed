package caddymodule

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// toolCallChunks is a native call of name with args, and its finish.
func toolCallChunks(id, name, args string) string {
	a, _ := json.Marshal(args)
	return chunk(`{"tool_calls":[{"index":0,"id":"`+id+`","type":"function","function":{"name":"`+name+`","arguments":`+string(a)+`}}]}`) +
		`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
		"data: [DONE]\n\n"
}

// TestSubAgent: the model consults a sub-agent the route declares; the
// agent's own loop runs against the same upstream with its prompt and its
// tool, and its stream reaches the skillpet client nested in the call
// (agent_thinking, agent_tool_start, agent_tool_result, agent_round,
// agent_token); tool_start names the agent; its answer is the call's
// result, which the model reads and the conversation stores; init lists
// the agent; the agent's requests, and only they, carry X-Llmstream-Agent
// (CONTRACT.md §13, specs/002 §3.5).
func TestSubAgent(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	u := newRecordingUpstream(t, func(_ int, b upstreamBody, w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		tools := 0
		for _, m := range b.Messages {
			if m.Role == "tool" {
				tools++
			}
		}
		isAgent := b.Messages[0].Role == "system" && strings.Contains(b.Messages[0].text(), "You are the analyst")
		if got := r.Header.Get(AgentHeader); got != map[bool]string{true: "analyst", false: ""}[isAgent] {
			t.Errorf("agent request %v: %s %q", isAgent, AgentHeader, got)
		}
		if isAgent {
			if tools == 0 {
				writeFlush(w, roleChunk, chunk(`{"reasoning_content":"想一想。"}`), toolCallChunks("call_a1", "make_report", `{"topic":"dragons"}`))
				return
			}
			writeFlush(w, roleChunk, content("分析结论：龙很好。"), finishChunks)
			return
		}
		if tools == 0 {
			writeFlush(w, roleChunk, content("我问问分析师。"), toolCallChunks("call_c", "consult_agent", `{"agent":"analyst","question":"龙的故事好吗？"}`))
			return
		}
		writeFlush(w, roleChunk, content("最终："+b.Messages[len(b.Messages)-1].text()), finishChunks)
	})
	dir := t.TempDir()
	s := startSite(t, "", `	handle /conv/* {
		llm_stream {
			format text
			model m
			protocol skillpet
			request_format skillpet
			conversation {
				store file `+dir+`
			}
			tools {
				mcp demo {
					builtin demo
					label make_report 生成报告
				}
				agent analyst {
					name 分析师
					label 委托分析师
					avatar /avatars/analyst.png
					system_prompt_text "You are the analyst."
					tools make_report
				}
			}
		}
		rewrite * /v1/chat/completions
		reverse_proxy `+u.hostPort()+` {
			flush_interval -1
		}
	}
`)
	c := newChatClient(t, s.url("/conv"), "Bearer u1")
	evs := c.stream("p1", "写个龙的故事")
	names := eventNames(evs)
	want := "token tool_start agent_thinking agent_tool_start agent_tool_result agent_round agent_token tool_result round_start token done"
	if names != want {
		t.Fatalf("events:\n got %s\nwant %s", names, want)
	}
	start := gjson.Parse(eventNamed(evs, "tool_start"))
	if start.Get("agentId").String() != "analyst" || start.Get("agentAvatarUrl").String() != "/avatars/analyst.png" || start.Get("label").String() != "委托分析师" {
		t.Errorf("tool_start: %s", start.Raw)
	}
	if tok := gjson.Parse(eventNamed(evs, "agent_token")); tok.Get("id").String() != "call_c" || tok.Get("agentName").String() != "分析师" {
		t.Errorf("agent_token: %s", tok.Raw)
	}
	if ts := gjson.Parse(eventNamed(evs, "agent_tool_start")); ts.Get("parentId").String() != "call_c" || ts.Get("label").String() != "生成报告" {
		t.Errorf("agent_tool_start: %s", ts.Raw)
	}
	if r := gjson.Parse(eventNamed(evs, "tool_result")); r.Get("message").String() != "分析结论：龙很好。" {
		t.Errorf("the consulting call's result: %s", r.Raw)
	}
	if got := tokens(t, evs); got != "我问问分析师。最终：分析结论：龙很好。" {
		t.Errorf("the model's answer: %q", got)
	}
	if u.count() != 4 {
		t.Errorf("%d upstream requests, want 4 (the turn's two rounds, the agent's two)", u.count())
	}
	init := c.init("p1")
	var roles []string
	for _, m := range init.Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "user assistant tool assistant" ||
		gjson.Get(init.Messages[2].Content, "body").String() != "分析结论：龙很好。" {
		t.Errorf("init: %+v", init.Messages)
	}
	status, body := c.call(http.MethodGet, c.base+"/init/p1", "")
	if status != http.StatusOK || gjson.Get(body, "subAgents.0.id").String() != "analyst" || gjson.Get(body, "subAgents.0.name").String() != "分析师" {
		t.Errorf("init's subAgents: %s", body)
	}
}
