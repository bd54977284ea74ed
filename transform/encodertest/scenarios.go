package encodertest

import (
	"slices"

	"github.com/llmstream/llmstream/transform"
)

// Scenario is a named event sequence, as the pipeline delivers it.
type Scenario struct {
	// Name names the scenario's subtest and golden file.
	Name   string
	Events []transform.Event
}

// Scenarios returns the replies every encoder is tested with: one per
// shape of reply and failure the pipeline promises. Each call builds them
// anew, so a test that changes its copy changes no other test's.
func Scenarios() []Scenario {
	return []Scenario{
		{"thinkingml", []transform.Event{
			Routed("vendor-model-1", "up-123"),
			Raw("<think>draft</think><serp>wants a plan</serp><thinking><phase id=\"1\"><title>Scope</title>"),
			Event(transform.KindReasoningStart), Reasoning("draft"), Event(transform.KindReasoningEnd),
			Text(transform.KindSerpSummary, "wants a plan"),
			Event(transform.KindThinkingStart), Phase(1, "Scope"),
			Raw("Do X</phase><phase id=\"2\"><title>Plan</title>Then Y</phase></thinking><final>"),
			PhaseDelta(1, "Do X"), PhaseEnd(1),
			Phase(2, "Plan"), PhaseDelta(2, "Then Y"), PhaseEnd(2),
			Event(transform.KindThinkingEnd), Event(transform.KindAnswerStart),
			Raw("# Plan\n- Day 1\n<!-- <serp_queries>\n[\"q1\",\"q2\"]\n</serp_queries> --></final>"),
			Answer("# Plan\n"), Answer("- Day 1"),
			{Kind: transform.KindSerpQueries, List: []string{"q1", "q2"}},
			Event(transform.KindAnswerEnd),
			Text(transform.KindUsage, `{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}`),
			Finish("stop"),
		}},
		{"native_reasoning", []transform.Event{
			Routed("deepseek-r", ""),
			Event(transform.KindReasoningStart), Reasoning("first "), Reasoning("thought"), Event(transform.KindReasoningEnd),
			Event(transform.KindAnswerStart), Raw("Hello"), Answer("Hello"),
			Event(transform.KindReasoningStart), Reasoning("second thought"), Event(transform.KindReasoningEnd),
			Raw(" world"), Answer(" world"), Event(transform.KindAnswerEnd),
			Finish("stop"),
		}},
		{"tool_calls", []transform.Event{
			Routed("gpt-tools", "up-9"),
			Event(transform.KindAnswerStart), Raw("Checking."), Answer("Checking."), Event(transform.KindAnswerEnd),
			ToolStart(0, "call_1", "get_weather"),
			ToolArgs(0, "call_1", "get_weather", `{"city":`), ToolArgs(0, "call_1", "get_weather", `"Paris"}`),
			ToolEnd(0, "call_1", "get_weather", `{"city":"Paris"}`),
			ToolStart(1, "call_2", "ask_user"),
			ToolArgs(1, "call_2", "ask_user", `{"questions":[{"question":"Which genre?","choices":["Fantasy","Sci-fi"]}]}`),
			ToolEnd(1, "call_2", "ask_user", `{"questions":[{"question":"Which genre?","choices":["Fantasy","Sci-fi"]}]}`),
			ToolStart(2, "call_3", "broken"),
			ToolArgs(2, "call_3", "broken", `{"a": 1,`),
			ToolEnd(2, "call_3", "broken", `{"a": 1,`),
			ToolStart(3, "call_4", "no_args"),
			ToolEnd(3, "call_4", "no_args", `{}`),
			ToolStart(4, "call_5", "pretty"),
			ToolArgs(4, "call_5", "pretty", "{\n  \"x\": [1, 2]\n}"),
			ToolEnd(4, "call_5", "pretty", "{\n  \"x\": [1, 2]\n}"),
			Finish("tool_calls"),
		}},
		{"aiplan_tool_calls", []transform.Event{
			Routed("gpt-plan", "up-10"),
			Event(transform.KindThinkingStart), Phase(1, "Thought"), PhaseDelta(1, "Need the weather."), PhaseEnd(1),
			Event(transform.KindThinkingEnd),
			ToolStart(0, "call_a", "get_weather"),
			ToolArgs(0, "call_a", "get_weather", `{"city":"Oslo"}`),
			ToolEnd(0, "call_a", "get_weather", `{"city":"Oslo"}`),
			Finish("stop"),
		}},
		{"clarify_artifacts", []transform.Event{
			Routed("gpt-final", "up-11"),
			Event(transform.KindAnswerStart), Raw("Which class?"), Answer("Which class?"), Event(transform.KindAnswerEnd),
			{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Which class?", Options: []string{"7A", "7B"}, Hint: "needClassId"}},
			Text(transform.KindArtifacts, "[\n  \"file-ready:pptx\",\n  \"quiz:42\"\n]"),
			Finish("stop"),
		}},
		{"violations", []transform.Event{
			Routed("vendor-model-1", "up-12"),
			Raw("<thinking><note>x</note></thinking><final>ok</final>"),
			Event(transform.KindThinkingStart), Violation("unknown_tag", 10, "note"), Event(transform.KindThinkingEnd),
			Event(transform.KindAnswerStart), Answer("ok"), Event(transform.KindAnswerEnd),
			Violation("phase_order", 40, ""),
			Finish("stop"),
		}},
		{"error_after_begin", []transform.Event{
			Failure(transform.CodeProviderError, "upstream answered 401: invalid api key"),
		}},
		{"error_mid_tool", []transform.Event{
			Routed("gpt-tools", "up-13"),
			Event(transform.KindAnswerStart), Raw("Searching"), Answer("Searching"), Event(transform.KindAnswerEnd),
			ToolStart(0, "call_x", "search"),
			ToolArgs(0, "call_x", "search", `{"q":"par`),
			Failure(transform.CodeUpstreamError, "upstream broke off"),
		}},
		{"heartbeats", []transform.Event{
			Heartbeat(),
			Routed("gpt-test", "up-14"),
			Heartbeat(),
			Event(transform.KindAnswerStart), Raw("a"), Answer("a"), Heartbeat(), Raw("b"), Answer("b"), Event(transform.KindAnswerEnd),
			Heartbeat(),
			Finish("stop"),
		}},
		{"timeout", []transform.Event{
			Routed("gpt-test", ""),
			Event(transform.KindReasoningStart), Reasoning("hmm"), Event(transform.KindReasoningEnd),
			Failure(transform.CodeUpstreamTimeout, ""),
		}},
		{"chinese", []transform.Event{
			Routed("qwen", "up-15"),
			Event(transform.KindThinkingStart), Phase(1, "理解需求"), PhaseDelta(1, "用户想要"), PhaseDelta(1, "训练计划"), PhaseEnd(1),
			Event(transform.KindThinkingEnd),
			Event(transform.KindAnswerStart), Raw("你好，"), Answer("你好，"), Raw("世界🌍"), Answer("世界🌍"), Event(transform.KindAnswerEnd),
			{Kind: transform.KindSerpQueries, List: []string{"三分化训练怎么安排"}},
			Finish("length"),
		}},
		{"escapes", []transform.Event{
			Routed("m\"odel", "id\n1"),
			Event(transform.KindReasoningStart), Reasoning("say \"hi\"\\\n\ttab"), Event(transform.KindReasoningEnd),
			Event(transform.KindAnswerStart),
			Raw("line1\nline2 \"q\" \\ \u2028 \u2029 </script> <final>"), Answer("line1\nline2 \"q\" \\ \u2028 \u2029 </script> <final>"),
			Raw("bad \xff\xfe utf8 \x01\x1f"), Answer("bad \xff\xfe utf8 \x01\x1f"),
			Event(transform.KindAnswerEnd),
			Text(transform.KindUsage, "{\n  \"total_tokens\": 3\n}"),
			Violation("trailing_text", 99, "x\"y\nz"),
			Finish("content_filter"),
		}},
		{"empty_reply", []transform.Event{
			Routed("", ""),
			Event(transform.KindAnswerStart), Event(transform.KindAnswerEnd),
			Finish(""),
		}},
		// The agent loop (CONTRACT.md §12): the sequences the pipeline
		// delivers when the gateway runs tools itself.
		//
		// server_tools: a round whose reply calls two server tools (in
		// parallel: their progress and results interleave), then the
		// answer in round 2, usage summed over the rounds.
		{"server_tools", []transform.Event{
			Routed("gpt-tools", "up-1"),
			Event(transform.KindReasoningStart), Reasoning("Need data."), Event(transform.KindReasoningEnd),
			Event(transform.KindAnswerStart), Raw("Let me look."), Answer("Let me look."), Event(transform.KindAnswerEnd),
			ServerToolStart(0, "call_1", "search_knowledge", "知识检索", "demo", 1),
			ServerToolArgs(0, "call_1", "search_knowledge", `{"query":`), ServerToolArgs(0, "call_1", "search_knowledge", `"caddy"}`),
			ServerToolEnd(0, "call_1", "search_knowledge", `{"query":"caddy"}`),
			ServerToolStart(1, "call_2", "get_weather", "get_weather", "demo", 1),
			ServerToolArgs(1, "call_2", "get_weather", `{"city":"Paris"}`),
			ServerToolEnd(1, "call_2", "get_weather", `{"city":"Paris"}`),
			ToolRun(0, "call_1", "search_knowledge", `{"query":"caddy"}`, "知识检索", "demo", 1),
			ToolRun(1, "call_2", "get_weather", `{"city":"Paris"}`, "get_weather", "demo", 1),
			ToolProgress(0, "call_1", "search_knowledge", 1, 3, "searching"),
			ToolResult(1, "call_2", "get_weather", transform.ToolCompleted, "18°C, sunny"),
			ToolProgress(0, "call_1", "search_knowledge", 2, 3, "reading"),
			ToolResult(0, "call_1", "search_knowledge", transform.ToolCompleted, "Caddy is a web server."),
			RoundStart(2),
			Event(transform.KindReasoningStart), Reasoning("Got it."), Event(transform.KindReasoningEnd),
			Event(transform.KindAnswerStart), Raw("Caddy is a web server."), Answer("Caddy is a web server."), Event(transform.KindAnswerEnd),
			Text(transform.KindUsage, `{"prompt_tokens":30,"completion_tokens":12,"total_tokens":42}`),
			Finish("stop"),
		}},
		// mixed_turn: one reply calls a server tool and a client tool; the
		// server call runs (and fails), then the turn ends with the
		// client's call for the client to run. Both share one index space.
		{"mixed_turn", []transform.Event{
			Routed("gpt-tools", "up-2"),
			Event(transform.KindAnswerStart), Raw("Both."), Answer("Both."), Event(transform.KindAnswerEnd),
			ServerToolStart(0, "call_s", "get_weather", "天气", "demo", 1),
			ServerToolArgs(0, "call_s", "get_weather", `{"city":"Oslo"}`),
			ServerToolEnd(0, "call_s", "get_weather", `{"city":"Oslo"}`),
			ToolStart(1, "call_c", "client_fn"),
			ToolArgs(1, "call_c", "client_fn", `{"x":1}`),
			ToolEnd(1, "call_c", "client_fn", `{"x":1}`),
			ToolRun(0, "call_s", "get_weather", `{"city":"Oslo"}`, "天气", "demo", 1),
			ToolResult(0, "call_s", "get_weather", transform.ToolFailed, "get_weather timed out after 30s"),
			Text(transform.KindUsage, `{"prompt_tokens":11,"completion_tokens":7,"total_tokens":18}`),
			Finish("tool_calls"),
		}},
		// tool_error_in_round_2: round 2 breaks off mid-answer.
		{"tool_error_in_round_2", []transform.Event{
			Routed("gpt-tools", "up-3"),
			ServerToolStart(0, "call_1", "search_knowledge", "知识检索", "demo", 1),
			ServerToolArgs(0, "call_1", "search_knowledge", `{"query":"caddy"}`),
			ServerToolEnd(0, "call_1", "search_knowledge", `{"query":"caddy"}`),
			ToolRun(0, "call_1", "search_knowledge", `{"query":"caddy"}`, "知识检索", "demo", 1),
			ToolResult(0, "call_1", "search_knowledge", transform.ToolCompleted, "Caddy is a web server."),
			RoundStart(2),
			Event(transform.KindAnswerStart), Raw("par"), Answer("par"),
			Failure(transform.CodeUpstreamError, "upstream broke off"),
		}},
		// max_rounds: the route's max_rounds (2 here) was reached; the
		// last round is asked with tools disabled, which is reported.
		{"max_rounds", []transform.Event{
			Routed("gpt-tools", "up-4"),
			Event(transform.KindAnswerStart), Raw("Searching."), Answer("Searching."), Event(transform.KindAnswerEnd),
			ServerToolStart(0, "call_1", "search_knowledge", "知识检索", "demo", 1),
			ServerToolEnd(0, "call_1", "search_knowledge", `{"query":"a"}`),
			ToolRun(0, "call_1", "search_knowledge", `{"query":"a"}`, "知识检索", "demo", 1),
			ToolResult(0, "call_1", "search_knowledge", transform.ToolCompleted, "A."),
			RoundStart(2),
			Event(transform.KindThinkingStart), Phase(1, "Again"), PhaseDelta(1, "One more search."), PhaseEnd(1),
			Event(transform.KindThinkingEnd),
			ServerToolStart(1, "call_2", "search_knowledge", "知识检索", "demo", 2),
			ServerToolEnd(1, "call_2", "search_knowledge", `{"query":"b"}`),
			ToolRun(1, "call_2", "search_knowledge", `{"query":"b"}`, "知识检索", "demo", 2),
			ToolResult(1, "call_2", "search_knowledge", transform.ToolCompleted, "B."),
			RoundStart(3),
			Violation("max_rounds", 0, "2 rounds of tool calls: the last round answers without tools"),
			Event(transform.KindAnswerStart), Raw("Enough."), Answer("Enough."), Event(transform.KindAnswerEnd),
			Text(transform.KindUsage, `{"prompt_tokens":50,"completion_tokens":9,"total_tokens":59}`),
			Finish("stop"),
		}},
		// error_while_tool_runs: the stream ends (the client left, the
		// upstream failed) while a call runs: what the encoder opened for
		// it is closed the protocol's own way.
		{"error_while_tool_runs", []transform.Event{
			Routed("gpt-tools", "up-5"),
			Event(transform.KindReasoningStart), Reasoning("Search first."), Event(transform.KindReasoningEnd),
			ServerToolStart(0, "call_1", "search_knowledge", "知识检索", "demo", 1),
			ServerToolArgs(0, "call_1", "search_knowledge", `{"query":"caddy"}`),
			ServerToolEnd(0, "call_1", "search_knowledge", `{"query":"caddy"}`),
			ToolRun(0, "call_1", "search_knowledge", `{"query":"caddy"}`, "知识检索", "demo", 1),
			ToolProgress(0, "call_1", "search_knowledge", 1, 0, ""),
			Failure(transform.CodeUpstreamError, "the tool call was cancelled"),
		}},
	}
}

// ScenarioEvents returns the events of the scenario named name, for a test
// that feeds one scenario in its own way. It panics for an unknown name:
// that is a mistake in the test.
func ScenarioEvents(name string) []transform.Event {
	all := Scenarios()
	i := slices.IndexFunc(all, func(s Scenario) bool { return s.Name == name })
	if i < 0 {
		panic("encodertest: no scenario " + name)
	}
	return all[i].Events
}
