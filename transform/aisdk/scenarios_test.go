package aisdk_test

// This file is the same in every encoder package (gymbro, jsonseq,
// skillpet, aisdk, openai) apart from the package clause: the scenarios
// every protocol encodes, the runner and the SSE reader. Test files cannot
// be imported across packages, and transform/transformtest is the parsers'.

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/transform"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// kindHeartbeat marks a scenario step that calls AppendHeartbeat.
const kindHeartbeat = transform.Kind(255)

// created is the fixed stream start of every scenario.
var created = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// testMeta returns the Meta every scenario uses, with a clock that advances
// 400 ms per reading.
func testMeta() transform.Meta {
	now := created
	return transform.Meta{
		MessageID:  "msg-1",
		RequestID:  "req-1",
		Provider:   "openai",
		EndpointID: 3,
		Model:      "gpt-test",
		Stream:     true,
		Created:    created,
		Now: func() time.Time {
			now = now.Add(400 * time.Millisecond)
			return now
		},
	}
}

func ev(k transform.Kind) transform.Event { return transform.Event{Kind: k} }

func text(k transform.Kind, s string) transform.Event {
	return transform.Event{Kind: k, Text: []byte(s)}
}

func raw(s string) transform.Event { return text(transform.KindRaw, s) }

func routed(model, id string) transform.Event {
	return transform.Event{Kind: transform.KindRouted, Name: model, ID: id}
}

func phase(id int, title string) transform.Event {
	return transform.Event{Kind: transform.KindPhaseStart, Index: id, Text: []byte(title)}
}

func phaseDelta(id int, s string) transform.Event {
	return transform.Event{Kind: transform.KindPhaseDelta, Index: id, Text: []byte(s)}
}

func phaseEnd(id int) transform.Event {
	return transform.Event{Kind: transform.KindPhaseEnd, Index: id}
}

func toolStart(i int, id, name string) transform.Event {
	return transform.Event{Kind: transform.KindToolCallStart, Index: i, ID: id, Name: name}
}

func toolArgs(i int, id, name, s string) transform.Event {
	return transform.Event{Kind: transform.KindToolArgsDelta, Index: i, ID: id, Name: name, Text: []byte(s)}
}

func toolEnd(i int, id, name, args string) transform.Event {
	return transform.Event{Kind: transform.KindToolCallEnd, Index: i, ID: id, Name: name, Text: []byte(args)}
}

func violation(code string, offset int64, detail string) transform.Event {
	return transform.Event{Kind: transform.KindViolation, Code: code, Offset: offset, Text: []byte(detail)}
}

func finish(reason string) transform.Event {
	return transform.Event{Kind: transform.KindFinish, Code: reason}
}

func failure(code, msg string) transform.Event {
	return transform.Event{Kind: transform.KindError, Code: code, Text: []byte(msg)}
}

func heartbeat() transform.Event { return transform.Event{Kind: kindHeartbeat} }

// scenario is a named event sequence, as the pipeline delivers it.
type scenario struct {
	name string
	evs  []transform.Event
}

const (
	R = transform.KindReasoningDelta
	F = transform.KindAnswerDelta
)

// scenarios are the replies every encoder is tested with: one per shape of
// reply and failure the pipeline promises (see the task's "What the
// pipeline guarantees you").
var scenarios = []scenario{
	{"thinkingml", []transform.Event{
		routed("vendor-model-1", "up-123"),
		raw("<think>draft</think><serp>wants a plan</serp><thinking><phase id=\"1\"><title>Scope</title>"),
		ev(transform.KindReasoningStart), text(R, "draft"), ev(transform.KindReasoningEnd),
		text(transform.KindSerpSummary, "wants a plan"),
		ev(transform.KindThinkingStart), phase(1, "Scope"),
		raw("Do X</phase><phase id=\"2\"><title>Plan</title>Then Y</phase></thinking><final>"),
		phaseDelta(1, "Do X"), phaseEnd(1),
		phase(2, "Plan"), phaseDelta(2, "Then Y"), phaseEnd(2),
		ev(transform.KindThinkingEnd), ev(transform.KindAnswerStart),
		raw("# Plan\n- Day 1\n<!-- <serp_queries>\n[\"q1\",\"q2\"]\n</serp_queries> --></final>"),
		text(F, "# Plan\n"), text(F, "- Day 1"),
		{Kind: transform.KindSerpQueries, List: []string{"q1", "q2"}},
		ev(transform.KindAnswerEnd),
		text(transform.KindUsage, `{"prompt_tokens":10,"completion_tokens":20,"total_tokens":30}`),
		finish("stop"),
	}},
	{"native_reasoning", []transform.Event{
		routed("deepseek-r", ""),
		ev(transform.KindReasoningStart), text(R, "first "), text(R, "thought"), ev(transform.KindReasoningEnd),
		ev(transform.KindAnswerStart), raw("Hello"), text(F, "Hello"),
		ev(transform.KindReasoningStart), text(R, "second thought"), ev(transform.KindReasoningEnd),
		raw(" world"), text(F, " world"), ev(transform.KindAnswerEnd),
		finish("stop"),
	}},
	{"tool_calls", []transform.Event{
		routed("gpt-tools", "up-9"),
		ev(transform.KindAnswerStart), raw("Checking."), text(F, "Checking."), ev(transform.KindAnswerEnd),
		toolStart(0, "call_1", "get_weather"),
		toolArgs(0, "call_1", "get_weather", `{"city":`), toolArgs(0, "call_1", "get_weather", `"Paris"}`),
		toolEnd(0, "call_1", "get_weather", `{"city":"Paris"}`),
		toolStart(1, "call_2", "ask_user"),
		toolArgs(1, "call_2", "ask_user", `{"questions":[{"question":"Which genre?","choices":["Fantasy","Sci-fi"]}]}`),
		toolEnd(1, "call_2", "ask_user", `{"questions":[{"question":"Which genre?","choices":["Fantasy","Sci-fi"]}]}`),
		toolStart(2, "call_3", "broken"),
		toolArgs(2, "call_3", "broken", `{"a": 1,`),
		toolEnd(2, "call_3", "broken", `{"a": 1,`),
		toolStart(3, "call_4", "no_args"),
		toolEnd(3, "call_4", "no_args", `{}`),
		toolStart(4, "call_5", "pretty"),
		toolArgs(4, "call_5", "pretty", "{\n  \"x\": [1, 2]\n}"),
		toolEnd(4, "call_5", "pretty", "{\n  \"x\": [1, 2]\n}"),
		finish("tool_calls"),
	}},
	{"aiplan_tool_calls", []transform.Event{
		routed("gpt-plan", "up-10"),
		ev(transform.KindThinkingStart), phase(1, "Thought"), phaseDelta(1, "Need the weather."), phaseEnd(1),
		ev(transform.KindThinkingEnd),
		toolStart(0, "call_a", "get_weather"),
		toolArgs(0, "call_a", "get_weather", `{"city":"Oslo"}`),
		toolEnd(0, "call_a", "get_weather", `{"city":"Oslo"}`),
		finish("stop"),
	}},
	{"clarify_artifacts", []transform.Event{
		routed("gpt-final", "up-11"),
		ev(transform.KindAnswerStart), raw("Which class?"), text(F, "Which class?"), ev(transform.KindAnswerEnd),
		{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: "Which class?", Options: []string{"7A", "7B"}, Hint: "needClassId"}},
		text(transform.KindArtifacts, "[\n  \"file-ready:pptx\",\n  \"quiz:42\"\n]"),
		finish("stop"),
	}},
	{"violations", []transform.Event{
		routed("vendor-model-1", "up-12"),
		raw("<thinking><note>x</note></thinking><final>ok</final>"),
		ev(transform.KindThinkingStart), violation("unknown_tag", 10, "note"), ev(transform.KindThinkingEnd),
		ev(transform.KindAnswerStart), text(F, "ok"), ev(transform.KindAnswerEnd),
		violation("phase_order", 40, ""),
		finish("stop"),
	}},
	{"error_after_begin", []transform.Event{
		failure(transform.CodeProviderError, "upstream answered 401: invalid api key"),
	}},
	{"error_mid_tool", []transform.Event{
		routed("gpt-tools", "up-13"),
		ev(transform.KindAnswerStart), raw("Searching"), text(F, "Searching"), ev(transform.KindAnswerEnd),
		toolStart(0, "call_x", "search"),
		toolArgs(0, "call_x", "search", `{"q":"par`),
		failure(transform.CodeUpstreamError, "upstream broke off"),
	}},
	{"heartbeats", []transform.Event{
		heartbeat(),
		routed("gpt-test", "up-14"),
		heartbeat(),
		ev(transform.KindAnswerStart), raw("a"), text(F, "a"), heartbeat(), raw("b"), text(F, "b"), ev(transform.KindAnswerEnd),
		heartbeat(),
		finish("stop"),
	}},
	{"timeout", []transform.Event{
		routed("gpt-test", ""),
		ev(transform.KindReasoningStart), text(R, "hmm"), ev(transform.KindReasoningEnd),
		failure(transform.CodeUpstreamTimeout, ""),
	}},
	{"chinese", []transform.Event{
		routed("qwen", "up-15"),
		ev(transform.KindThinkingStart), phase(1, "理解需求"), phaseDelta(1, "用户想要"), phaseDelta(1, "训练计划"), phaseEnd(1),
		ev(transform.KindThinkingEnd),
		ev(transform.KindAnswerStart), raw("你好，"), text(F, "你好，"), raw("世界🌍"), text(F, "世界🌍"), ev(transform.KindAnswerEnd),
		{Kind: transform.KindSerpQueries, List: []string{"三分化训练怎么安排"}},
		finish("length"),
	}},
	{"escapes", []transform.Event{
		routed("m\"odel", "id\n1"),
		ev(transform.KindReasoningStart), text(R, "say \"hi\"\\\n\ttab"), ev(transform.KindReasoningEnd),
		ev(transform.KindAnswerStart),
		raw("line1\nline2 \"q\" \\ \u2028 \u2029 </script> <final>"), text(F, "line1\nline2 \"q\" \\ \u2028 \u2029 </script> <final>"),
		raw("bad \xff\xfe utf8 \x01\x1f"), text(F, "bad \xff\xfe utf8 \x01\x1f"),
		ev(transform.KindAnswerEnd),
		text(transform.KindUsage, "{\n  \"total_tokens\": 3\n}"),
		violation("trailing_text", 99, "x\"y\nz"),
		finish("content_filter"),
	}},
	{"empty_reply", []transform.Event{
		routed("", ""),
		ev(transform.KindAnswerStart), ev(transform.KindAnswerEnd),
		finish(""),
	}},
}

// run encodes evs with enc and returns the bytes. Each event's Text is
// overwritten after the call, so that an encoder that kept a borrowed
// slice shows it in the output.
func run(enc transform.Encoder, evs []transform.Event) []byte {
	out := enc.Begin(nil)
	for _, e := range evs {
		if e.Kind == kindHeartbeat {
			out = enc.AppendHeartbeat(out, created.Add(90*time.Second))
			continue
		}
		e = e.Clone()
		out = enc.AppendEvent(out, e)
		for i := range e.Text {
			e.Text[i] = '#'
		}
	}
	return out
}

// golden compares got with testdata/<name>.golden, rewriting it with
// -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("output differs from %s:\n got:\n%s\nwant:\n%s", path, got, want)
	}
}

// sseEvent is one event of an SSE stream: its name (empty without an
// event: line), its data, or a comment.
type sseEvent struct {
	name, data string
	comment    bool
}

// readSSE splits out into events and checks the framing every protocol
// shares: events end with a blank line, and each has at most one event:
// line and exactly one data: line (or is a comment).
func readSSE(out []byte) ([]sseEvent, error) {
	s := string(out)
	if s == "" {
		return nil, nil
	}
	if !strings.HasSuffix(s, "\n\n") {
		return nil, errorf("stream does not end with a blank line: %q", tail(s))
	}
	var evs []sseEvent
	for _, block := range strings.Split(strings.TrimSuffix(s, "\n\n"), "\n\n") {
		var e sseEvent
		datas := 0
		for _, line := range strings.Split(block, "\n") {
			switch {
			case strings.HasPrefix(line, ": "):
				e.comment = true
			case strings.HasPrefix(line, "event: ") && e.name == "" && datas == 0:
				e.name = strings.TrimPrefix(line, "event: ")
			case strings.HasPrefix(line, "data: "):
				e.data = strings.TrimPrefix(line, "data: ")
				datas++
			default:
				return nil, errorf("unexpected line %q in event %q", line, block)
			}
		}
		if e.comment != (datas == 0) || datas > 1 || (e.comment && e.name != "") {
			return nil, errorf("malformed event %q", block)
		}
		evs = append(evs, e)
	}
	return evs, nil
}

// decodeData decodes an event's data as one JSON object.
func decodeData(e sseEvent) (map[string]any, error) {
	var m map[string]any
	dec := json.NewDecoder(strings.NewReader(e.data))
	if err := dec.Decode(&m); err != nil {
		return nil, errorf("event %s: data is not a JSON object: %v: %s", e.name, err, e.data)
	}
	if dec.More() {
		return nil, errorf("event %s: data holds more than one value: %s", e.name, e.data)
	}
	return m, nil
}

func errorf(format string, args ...any) error { return fmt.Errorf(format, args...) }

func tail(s string) string {
	if len(s) > 80 {
		return s[len(s)-80:]
	}
	return s
}

// fuzzEvents turns fuzz input into an event sequence: each op byte picks a
// kind, and texts are cut from pool. The sequences need not keep the
// pipeline's promises: an encoder must not panic, and must write valid
// output, whatever it is fed.
func fuzzEvents(ops []byte, pool string) []transform.Event {
	var evs []transform.Event
	pos := 0
	cut := func(n byte) []byte {
		if len(pool) == 0 {
			return nil
		}
		k := int(n) % 16
		start := pos % len(pool)
		end := min(start+k, len(pool))
		pos += k + 1
		return []byte(pool[start:end])
	}
	for i := 0; i+1 < len(ops); i += 2 {
		op, arg := ops[i], ops[i+1]
		idx := int(arg % 4)
		id := "call_" + string(rune('a'+idx))
		name := [...]string{"f", "ask_user", "g", "h"}[arg%4] // never empty: the pipeline promises names
		var e transform.Event
		switch op % 26 {
		case 24:
			e = heartbeat()
		case 25:
			e = transform.Event{Kind: transform.KindClarify, Clarify: &transform.Clarify{Question: string(cut(arg)), Options: []string{string(cut(arg >> 1))}, Hint: string(cut(arg >> 2))}}
		default:
			e = transform.Event{Kind: transform.Kind(op % 24), Index: idx, ID: id, Name: name, Text: cut(arg), Code: string(cut(arg >> 3))}
			if e.Kind == transform.KindSerpQueries {
				e.List = []string{string(cut(arg)), string(cut(arg >> 1))}
			}
		}
		evs = append(evs, e)
	}
	return evs
}
