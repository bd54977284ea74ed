package upstream

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/transformtest"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func (tr transcript) String() string {
	return strings.Join(tr.chunks, "\n") + "\n--\n" + formatEvents(tr.events) + "\n"
}

func decodeStrings(tc *ToolCalls, chunks ...string) transcript {
	bs := make([][]byte, len(chunks))
	for i, c := range chunks {
		bs[i] = []byte(c)
	}
	return decodeBody(tc, bs...)
}

// TestFixtures decodes each SSE fixture of a provider's reply, checks the
// chunks and events against its golden file, and checks that every split
// of the body (each single split point, one byte per chunk, 50 random
// splits) gives the same decoded chunks and the same normalized events.
func TestFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/*.sse")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, file := range files {
		t.Run(filepath.Base(file), func(t *testing.T) {
			body, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			whole := decodeBody(&ToolCalls{}, body).String()
			golden := strings.TrimSuffix(file, ".sse") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(whole), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatal(err)
			}
			if whole != string(want) {
				t.Errorf("differs from %s:\n got %s\nwant %s", golden, whole, want)
			}
			var tc ToolCalls
			for _, chunks := range transformtest.Splits(body, 7, 50) {
				tc.Reset()
				if got := decodeBody(&tc, chunks...).String(); got != whole {
					t.Fatalf("split into %d chunks:\n got %s\nwant %s", len(chunks), got, whole)
				}
			}
		})
	}
}

// sseBody frames JSON payloads as an upstream sends them.
func sseBody(payloads ...string) string {
	var b strings.Builder
	for _, p := range payloads {
		b.WriteString("data: " + p + "\n\n")
	}
	return b.String()
}

// delta is a chat.completion.chunk with the given delta and finish reason
// ("" for null).
func delta(d, finish string) string {
	f := "null"
	if finish != "" {
		f = `"` + finish + `"`
	}
	return `{"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + d + `,"finish_reason":` + f + `}]}`
}

// TestOpenAIDeltas runs the PARSING.md §4.4 cases through the framer, the
// decoder and the assembler, as the router will.
func TestOpenAIDeltas(t *testing.T) {
	tests := []struct {
		name       string
		cumulative bool
		body       string
		want       string
	}{
		{name: "OA02", body: sseBody(delta(`{"reasoning":"a","reasoning_content":"a"}`, ""), delta(`{"reasoning_content":"b","reasoning":"b"}`, ""), delta(`{"content":"c"}`, "stop")),
			want: `R"ab" F"c" FIN(stop)`},
		{name: "OA03", body: sseBody(delta(`{"reasoning_content":"","reasoning":"x"}`, ""), delta(`{"reasoning":"y"}`, ""), delta(`{}`, "stop")),
			want: `R"xy" FIN(stop)`},
		{name: "OA06", body: sseBody(
			delta(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}`, ""),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}`, ""),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":":1}"}}]}`, ""),
			delta(`{}`, "tool_calls")),
			want: `TC{0 c1 f} TA0"{\"a\":1}" TC}0 {"a":1} FIN(tool_calls)`},
		{name: "OA09", body: sseBody(
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"q\":"}}]}`, ""),
			delta(`{"tool_calls":[{"index":0,"id":"c1","function":{"name":"search","arguments":"\"x\"}"}}]}`, ""),
			delta(`{"tool_calls":[{"index":0,"type":"function"}]}`, "tool_calls")),
			want: `TC{0 c1 search} TA0"{\"q\":\"x\"}" TC}0 {"q":"x"} FIN(tool_calls)`},
		{name: "OA10", body: sseBody(
			delta(`{"tool_calls":[{"index":0,"id":"a","type":"function","function":{"name":"f","arguments":"{\"x\":1}"}},{"index":1,"id":"b","type":"function","function":{"name":"g","arguments":"{}"}}]}`, "tool_calls")),
			want: `TC{0 a f} TA0"{\"x\":1}" TC{1 b g} TA1"{}" TC}0 {"x":1} TC}1 {} FIN(tool_calls)`},
		{name: "OA11", body: sseBody(
			delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}}]}`, ""),
			delta(`{"content":"still going"}`, "")),
			want: `TC{0 a f} TA0"{}" F"still going"`},
		{name: "OA12", body: sseBody(delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"now","arguments":""}}]}`, "tool_calls")),
			want: `TC{0 a now} TC}0 {} FIN(tool_calls)`},
		{name: "OA13", body: sseBody(
			delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"city\":\"東京\",\"note\":\"caf\\u00e9\"}"}}]}`, "tool_calls")),
			want: `TC{0 a f} TA0"{\"city\":\"東京\",\"note\":\"caf\\u00e9\"}" TC}0 {"city":"東京","note":"caf\u00e9"} FIN(tool_calls)`},
		{name: "OA14", cumulative: true, body: sseBody(
			delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"count\": 1"}}]}`, ""),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"count\": 10"}}]}`, ""),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"count\": 100}"}}]}`, "tool_calls")),
			want: `TC{0 a f} TA0"{\"count\": 100}" TC}0 {"count": 100} FIN(tool_calls)`},
		{name: "OA14 plain deltas", body: sseBody(
			delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"count\": 10"}}]}`, ""),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"0}"}}]}`, "tool_calls")),
			want: `TC{0 a f} TA0"{\"count\": 100}" TC}0 {"count": 100} FIN(tool_calls)`},
		{name: "OA14 plain deltas with the cumulative option", cumulative: true, body: sseBody(
			delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"count\": 10"}}]}`, ""),
			delta(`{"tool_calls":[{"index":0,"function":{"arguments":"0}"}}]}`, "tool_calls")),
			want: `TC{0 a f} TA0"{\"count\": 10" E(upstream_error)`},
		{name: "OA16", body: sseBody(
			delta(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{\"body\":\"lor"}}]}`, ""),
			delta(`{}`, "length")),
			want: `TC{0 a f} TA0"{\"body\":\"lor" TC}0 {"body":"lor FIN(length)`},
		{name: "OA17 last delta and finish_reason in one chunk", body: sseBody(delta(`{"content":"end"}`, "stop")),
			want: `F"end" FIN(stop)`},
		{name: "in-stream error object", body: sseBody(delta(`{"content":"a"}`, ""), `{"error":{"message":"overloaded","type":"server_error"}}`, delta(`{"content":"b"}`, "")),
			want: `F"a" E(upstream_error)`},
		{name: "malformed chunk", body: sseBody(delta(`{"content":"a"}`, ""), `{"choices":[{"delta":{"content":"b"}}`, delta(`{"content":"c"}`, "")),
			want: `F"a" E(upstream_error)`},
		{name: "body cut mid-line", body: sseBody(delta(`{"content":"a"}`, "")) + `data: {"cho`,
			want: `F"a" E(upstream_error)`},
		{name: "line too long", body: sseBody(delta(`{"content":"a"}`, ""), delta(`{"content":"`+strings.Repeat("x", 1<<20)+`"}`, "")),
			want: `F"a" E(sse_line_too_long)`},
		{name: "usage after finish", body: sseBody(delta(`{"content":"a"}`, "stop"), `{"id":"c","choices":[],"usage":{"total_tokens":3}}`, "[DONE]"),
			want: `F"a" FIN(stop) U{"total_tokens":3}`},
		{name: "nothing after DONE", body: sseBody(delta(`{"content":"a"}`, "stop"), "[DONE]", delta(`{"content":"b"}`, "")),
			want: `F"a" FIN(stop)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := decodeStrings(&ToolCalls{Cumulative: tt.cumulative}, tt.body)
			if got := formatEvents(tr.events); got != tt.want {
				t.Errorf("events:\n got %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestOA18 is PARSING.md OA18 end to end: one reply cut mid-keyword,
// mid-JSON and mid-UTF-8, with keep-alive comments, CRLF and [DONE],
// decodes to identical chunks.
func TestOA18(t *testing.T) {
	c1 := delta(`{"role":"assistant","content":"héllo 世界"}`, "")
	c2 := delta(`{"content":" \"quoted\"\n"}`, "stop")
	want := decodeStrings(&ToolCalls{}, sseBody(c1, c2, "[DONE]")).String()
	if !strings.Contains(want, `C"héllo 世界"`) || !strings.Contains(want, "DONE") {
		t.Fatalf("unexpected reference transcript %s", want)
	}
	cut := func(s, at string, off int) []string {
		i := strings.Index(s, at) + off
		return []string{s[:i], s[i:]}
	}
	body := sseBody(c1, c2, "[DONE]")
	crlf := strings.ReplaceAll(body, "\n", "\r\n")
	tests := []struct {
		name   string
		chunks []string
	}{
		{"mid-keyword", cut(body, "data:", 2)},
		{"mid-JSON", cut(body, `"content"`, 4)},
		{"mid-UTF-8", cut(body, "世", 1)},
		{"mid-escape", cut(body, `\"quoted`, 1)},
		{"keep-alive comments", []string{": keep-alive\n\n", sseBody(c1), ": keep-alive\n", "\n", sseBody(c2, "[DONE]")}},
		{"CRLF", []string{crlf}},
		{"CRLF cut between CR and LF", cut(crlf, "\r\n\r\n", 1)},
		{"one byte per chunk", strings.Split(body, "")},
		{"DONE without the last blank line", []string{sseBody(c1, c2) + "data: [DONE]\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := decodeStrings(&ToolCalls{}, tt.chunks...).String(); got != want {
				t.Errorf("got %s\nwant %s", got, want)
			}
		})
	}
}
