package e2e

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"
)

// What each fake upstream of e2e/Caddyfile makes the model write, and so
// what a client must assemble: derived from the fixtures in e2e/testdata/
// by the rules of CONTRACT.md §4 (the Go twin of e2e/test/expected.mjs).

// toolCall is a tool call as a client sees it: a name and its arguments.
type toolCall struct {
	Name  string
	Input any
}

// want is what a mock's reply must become.
type want struct {
	Format    string
	Answer    *string // nil: the model wrote no answer
	Reasoning string  // reasoning_content, phases as "**title**\n\ntext"
	Tools     []toolCall
	Finish    string // the OpenAI finish reason the client gets
}

// cut is a mock that breaks the connection after After reply bytes.
type cut struct {
	Full  string
	After int
}

var (
	// chunks are the delta sizes every route is run at: one byte, 13, and
	// randomChunks (1 to 24 bytes, different per request).
	chunks = []int{1, 13, randomChunks}
	// cutChunks are those of the broken upstreams, whose cut point the
	// tests compute from a fixed size.
	cutChunks = []int{1, 13}
	mocks     map[string]want
	cuts      = map[string]cut{
		"thinkingml_cut": {"thinkingml", 600},
		"aiplan_cut":     {"aiplan", 260},
		"text_cut":       {"text", 30},
	}
	raws = map[string]string{}
)

func readTestdata(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

var (
	reThink  = regexp.MustCompile(`(?s)<think>(.*?)</think>`)
	rePhase  = regexp.MustCompile(`(?s)<phase id="(\d+)"><title>(.*?)</title>(.*?)</phase>`)
	reSerpQ  = regexp.MustCompile(`(?s)\s*<!--\s*<serp_queries>(.*?)</serp_queries>\s*-->\s*$`)
	reFence  = regexp.MustCompile("(?s)^\\s*```(?:json)?\\s*\n(.*?)\n```\\s*$")
	reDirect = regexp.MustCompile(`"direct_response":\s*"((?:[^"\\]|\\.)*)`)
)

// thinkingml returns the answer and the reasoning text of a ThinkingML reply.
func thinkingml(raw string) (answer, reasoning string) {
	var parts []string
	if m := reThink.FindStringSubmatch(raw); m != nil {
		parts = append(parts, m[1])
	}
	for _, m := range rePhase.FindAllStringSubmatch(raw, -1) {
		parts = append(parts, "**"+m[2]+"**\n\n"+m[3])
	}
	return finalText(raw), strings.Join(parts, "\n\n")
}

// finalText is the <final> text after </thinking> without the serp block.
func finalText(raw string) string {
	body := raw[strings.Index(raw, "</thinking>"):]
	at := strings.Index(body, "<final>")
	if at < 0 {
		return ""
	}
	final := body[at+len("<final>"):]
	if end := strings.LastIndex(final, "</final>"); end >= 0 {
		final = final[:end]
	}
	if loc := reSerpQ.FindStringIndex(final); loc != nil {
		final = final[:loc[0]]
	}
	return final
}

func unfence(s string) string {
	if m := reFence.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}

func decodeJSON(t testing.TB, s string, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(s), v); err != nil {
		t.Fatalf("%v: %s", err, s)
	}
}

// fixtureCalls reads a tool_calls_file: arguments as an object or a string.
func fixtureCalls(t testing.TB, name string) []toolCall {
	var list []struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	decodeJSON(t, readTestdata(t, name), &list)
	out := []toolCall{}
	for _, c := range list {
		args := string(c.Arguments)
		var s string
		if json.Unmarshal(c.Arguments, &s) == nil {
			args = s
		}
		var in any
		decodeJSON(t, args, &in)
		out = append(out, toolCall{c.Name, in})
	}
	return out
}

func ptr(s string) *string { return &s }

// loadMocks fills mocks from the fixtures, once.
func loadMocks(t testing.TB) {
	t.Helper()
	if mocks != nil {
		return
	}
	reasoning := readTestdata(t, "reasoning.txt")
	tm := readTestdata(t, "thinkingml.txt")
	tmAnswer, tmReasoning := thinkingml(tm)
	bad := readTestdata(t, "thinkingml_violation.txt")
	badAnswer, badReasoning := thinkingml(bad)

	var jl struct{ answer, reasoning []string }
	for _, line := range strings.Split(readTestdata(t, "jsonl.txt"), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		var e struct {
			Event, Text, Title string
		}
		decodeJSON(t, line, &e)
		switch e.Event {
		case "phase_start":
			jl.reasoning = append(jl.reasoning, "**"+e.Title+"**\n\n")
		case "phase_delta":
			jl.reasoning[len(jl.reasoning)-1] += e.Text
		case "final_delta":
			jl.answer = append(jl.answer, e.Text)
		}
	}

	type plan struct {
		Thought        string  `json:"thought"`
		DirectResponse *string `json:"direct_response"`
		ToolCalls      []struct {
			Name string `json:"name"`
			Args any    `json:"args"`
		} `json:"tool_calls"`
	}
	var p, pt plan
	decodeJSON(t, unfence(readTestdata(t, "aiplan.json")), &p)
	decodeJSON(t, unfence(readTestdata(t, "aiplan_tools.json")), &pt)
	planTools := []toolCall{}
	for _, c := range pt.ToolCalls {
		planTools = append(planTools, toolCall{c.Name, c.Args})
	}

	type result struct {
		Message string `json:"message"`
	}
	var fr, frc, fra result
	decodeJSON(t, unfence(readTestdata(t, "final_result.json")), &fr)
	decodeJSON(t, unfence(readTestdata(t, "final_result_clarify.json")), &frc)
	decodeJSON(t, unfence(readTestdata(t, "final_result_artifacts.json")), &fra)

	none := []toolCall{}
	mocks = map[string]want{
		"thinkingml":             {"thinkingml", ptr(tmAnswer), tmReasoning, none, "stop"},
		"thinkingml_violation":   {"thinkingml", ptr(badAnswer), badReasoning, none, "stop"},
		"jsonl":                  {"jsonl", ptr(strings.Join(jl.answer, "")), strings.Join(jl.reasoning, "\n\n"), none, "stop"},
		"aiplan":                 {"aiplan", p.DirectResponse, "**Thought**\n\n" + p.Thought, none, "stop"},
		"aiplan_tools":           {"aiplan", nil, "**Thought**\n\n" + pt.Thought, planTools, "tool_calls"},
		"final_result":           {"final_result", ptr(fr.Message), "", none, "stop"},
		"final_result_clarify":   {"final_result", ptr(frc.Message), "", none, "stop"},
		"final_result_artifacts": {"final_result", ptr(fra.Message), "", none, "stop"},
		"text":                   {"text", ptr(readTestdata(t, "text.txt")), reasoning, none, "stop"},
		"native_tools":           {"text", ptr(readTestdata(t, "tool_intro.txt")), reasoning, fixtureCalls(t, "search_call.json"), "tool_calls"},
		"ask_user":               {"thinkingml", ptr(tmAnswer), tmReasoning, fixtureCalls(t, "ask_user_call.json"), "tool_calls"},
	}
	raws["thinkingml"] = tm
	raws["aiplan"] = readTestdata(t, "aiplan.json")
	raws["text"] = readTestdata(t, "text.txt")
}

// sentBytes is how many reply bytes llm_mock sends before it cuts: it
// sends chunk-byte pieces cut on UTF-8 boundaries until it has sent after.
func sentBytes(raw string, chunk, after int) int {
	sent := 0
	for sent < len(raw) && sent < after {
		n := min(chunk, len(raw)-sent)
		for sent+n < len(raw) && !utf8.RuneStart(raw[sent+n]) {
			n++
		}
		sent += n
	}
	return sent
}

// partialAnswer is the answer the model had written when the mock cut.
func partialAnswer(t testing.TB, name string, chunk int) string {
	c := cuts[name]
	raw := raws[c.Full]
	prefix := raw[:sentBytes(raw, chunk, c.After)]
	switch mocks[c.Full].Format {
	case "thinkingml":
		body := prefix[strings.Index(prefix, "</thinking>"):]
		at := strings.Index(body, "<final>")
		if at < 0 {
			return ""
		}
		return body[at+len("<final>"):]
	case "aiplan":
		m := reDirect.FindStringSubmatch(prefix)
		if m == nil {
			return ""
		}
		s := regexp.MustCompile(`\\(u[0-9a-fA-F]{0,3})?$`).ReplaceAllString(m[1], "")
		var out string
		decodeJSON(t, `"`+s+`"`, &out)
		return out
	}
	return prefix
}

// matchesPartial allows the trailing whitespace a parser may hold at a cut.
func matchesPartial(got, want string) bool {
	return got == want || got == strings.TrimRight(want, " \t\r\n")
}

// randomChunks stands for the mocks whose deltas are 1 to 24 bytes, drawn
// per request (llm_mock random_chunks; the "r" routes of e2e/Caddyfile).
const randomChunks = 0

// chunkPath is a chunk size as the routes spell it.
func chunkPath(chunk int) string {
	if chunk == randomChunks {
		return "r"
	}
	return strconv.Itoa(chunk)
}
