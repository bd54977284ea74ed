package pipeline

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// runBytes streams body, cut into chunks, through a pipeline for the
// format and returns what the recorder kept.
func runBytes(t *testing.T, f format.Name, chunks [][]byte) *recorder {
	t.Helper()
	p, err := New(Config{Format: f})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	p.Reset(rec, transform.Meta{MessageID: "m1"})
	p.Start(nil, "text/event-stream", "up-1")
	for _, c := range chunks {
		p.Feed(nil, c)
	}
	p.Close(nil)
	return rec
}

// chunkWith is a whole chat.completion.chunk around the given choices,
// marked for sseBody to take as it is.
func chunkWith(choices string) string {
	return `!{"id":"c","object":"chat.completion.chunk","model":"m","choices":[` + choices + `]}`
}

// TestUpstreamVariants runs each class of what real providers send
// (CONTRACT.md §7) through the whole pipeline, whole and in every split
// (each split point, one byte per chunk, random splits), and checks that
// every split gives the same events and that no reasoning or answer delta
// ends inside a UTF-8 sequence when the reply's text is valid UTF-8.
func TestUpstreamVariants(t *testing.T) {
	cases := []struct {
		class, name string
		format      format.Name
		body        string
		want        string
	}{
		// Typed content parts (Mistral Magistral).
		{"typed parts", "thinking parts, then text parts", format.Text, sseBody(
			`{"role":"assistant","content":""}`,
			`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"2+2"}]}]}`,
			`{"content":[{"type":"thinking","thinking":[{"type":"text","text":" is 4."}]},{"type":"text","text":"It is "}]}`,
			`{"content":"**4**."}`, "finish:stop"),
			`R{ R"2+2 is 4." R} F{ F"It is **4**." F} FIN(stop)`},
		{"typed parts", "an unknown part: reported, its text kept", format.Text, sseBody(
			`{"content":[{"type":"text","text":"See "},{"type":"reference","reference_ids":[1]},{"type":"output_text","text":"[1]"}]}`, "finish:stop"),
			`V(unknown_content_part@0:reference) V(unknown_content_part@0:output_text) F{ F"See [1]" F} FIN(stop)`},
		{"typed parts", "thinking parts under thinkingml's own tags", format.ThinkingML, sseBody(
			`{"content":[{"type":"thinking","thinking":"n"}]}`,
			`{"content":[{"type":"text","text":"<final>a</final>"}]}`, "finish:stop"),
			`R{ R"n" R} V(missing_thinking@0) V(missing_phase@0) F{ F"a" V(missing_serp_queries@8) F} FIN(stop)`},

		// A UTF-8 character cut between two chunks by a byte-level tokenizer.
		{"utf-8", "reasoning split mid-character", format.Text, sseBody(
			"{\"reasoning_content\":\"思考\xe4\xb8\"}", "{\"reasoning_content\":\"\xad文\"}", `{"content":"ok"}`, "finish:stop"),
			`R{ R"思考中文" R} F{ F"ok" F} FIN(stop)`},
		{"utf-8", "a four-byte character over three chunks", format.Text, sseBody(
			"{\"reasoning\":\"a\xf0\x9f\"}", "{\"reasoning\":\"\x98\"}", "{\"reasoning\":\"\x80b\"}", "finish:stop"),
			`R{ R"a😀b" R} FIN(stop)`},
		{"utf-8", "content split mid-character, as before", format.Text, sseBody(
			"{\"content\":\"caf\xc3\"}", "{\"content\":\"\xa9\"}", "finish:stop"),
			`F{ F"café" F} FIN(stop)`},
		{"utf-8", "a cut character that never completes is delivered as it came", format.Text, sseBody(
			"{\"reasoning_content\":\"x\xe4\xb8\"}", `{"content":"y"}`, "finish:stop"),
			"R{ R\"x\\xe4\\xb8\" R} F{ F\"y\" F} FIN(stop)"},
		{"utf-8", "a held byte joins the parser's reasoning", format.ThinkingML, sseBody(
			`{"content":"<think>a"}`, "{\"reasoning_content\":\"\xc3\"}", "{\"reasoning_content\":\"\xa9\"}", `{"content":"</think><final>z</final>"}`, "finish:stop"),
			`R{ R"aé" R} V(missing_thinking@16) V(missing_phase@16) F{ F"z" V(missing_serp_queries@24) F} FIN(stop)`},

		// Tool-call fragments without index or id (Moonshot/Kimi, Gemini).
		{"index-less tool calls", "Moonshot parallel calls", format.Text, sseBody(
			`{"tool_calls":[{"id":"get_weather:0","type":"function","function":{"name":"get_weather","arguments":""}},{"id":"get_time:1","type":"function","function":{"name":"get_time","arguments":""}}]}`,
			`{"tool_calls":[{"function":{"arguments":"{\"location\":"}},{"function":{"arguments":"{\"zone\":"}}]}`,
			`{"tool_calls":[{"function":{"arguments":"\"San Francisco\"}"}},{"function":{"arguments":"\"UTC\"}"}}]}`,
			"finish:tool_calls"),
			`TC{0 get_weather:0 get_weather} TC{1 get_time:1 get_time} TA0"{\"location\":" TA1"{\"zone\":" TA0"\"San Francisco\"}" TA1"\"UTC\"}" TC}0 {"location":"San Francisco"} TC}1 {"zone":"UTC"} FIN(tool_calls)`},
		{"index-less tool calls", "a lone call, its arguments without index or id", format.Text, sseBody(
			`{"tool_calls":[{"id":"call_1","type":"function","function":{"name":"search","arguments":""}}]}`,
			`{"tool_calls":[{"function":{"arguments":"{\"q\":"}}]}`,
			`{"tool_calls":[{"function":{"arguments":"\"x\"}"}}]}`,
			`{"tool_calls":[{"id":"call_2","function":{"name":"search","arguments":"{\"q\":\"y\"}"}}]}`,
			"finish:tool_calls"),
			`TC{0 call_1 search} TA0"{\"q\":\"x\"}" TC{1 call_2 search} TA1"{\"q\":\"y\"}" TC}0 {"q":"x"} TC}1 {"q":"y"} FIN(tool_calls)`},

		{"index-less tool calls", "the legacy function_call is a tool call", format.Text, sseBody(
			`{"role":"assistant","content":null,"function_call":{"name":"get_weather","arguments":""}}`,
			`{"function_call":{"arguments":"{\"city\":"}}`,
			`{"function_call":{"arguments":"\"Paris\"}"}}`,
			"finish:function_call"),
			`TC{0 call_m1_0 get_weather} TA0"{\"city\":\"Paris\"}" TC}0 {"city":"Paris"} FIN(tool_calls)`},

		// Usage at the top level, in the choice, in x_groq; repeated or not.
		{"usage", "Moonshot usage in the choice", format.Text, sseBody(
			`{"content":"a"}`,
			chunkWith(`{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`)),
			`F{ F"a" F} U{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6} FIN(stop)`},
		{"usage", "repeated in every chunk: the last one, once", format.Text, sseBody(
			`!{"id":"c","choices":[{"index":0,"delta":{"content":"a"}}],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`,
			`!{"id":"c","choices":[{"index":0,"delta":{"content":"b"}}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
			`!{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}`,
			`!{"id":"c","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8}}`),
			`F{ F"ab" F} U{"prompt_tokens":5,"completion_tokens":3,"total_tokens":8} FIN(stop)`},
		{"usage", "Groq x_groq", format.Text, sseBody(
			`{"content":"a"}`,
			`!{"id":"c","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"total_tokens":9}}}`),
			`F{ F"a" F} U{"total_tokens":9} FIN(stop)`},

		// Several choices (n > 1): never mixed into the answer.
		{"stray choice", "vLLM n=2: choice 1 ignored, reported once", format.Text, sseBody(
			chunkWith(`{"index":0,"delta":{"role":"assistant","content":"Hel"}}`),
			chunkWith(`{"index":1,"delta":{"role":"assistant","content":"Bon"}}`),
			chunkWith(`{"index":1,"delta":{"content":"jour","tool_calls":[{"index":0,"id":"x","function":{"name":"f","arguments":"{}"}}]},"finish_reason":"tool_calls"}`),
			chunkWith(`{"index":0,"delta":{"content":"lo"},"finish_reason":"stop"}`)),
			`F{ F"Hel" V(stray_choice@3:choice 1 ignored: only choice 0 is answered) F"lo" F} FIN(stop)`},
		{"stray choice", "choices of both indices in one chunk", format.Text, sseBody(
			chunkWith(`{"delta":{"content":"mine"},"index":0},{"delta":{"content":"theirs"},"index":1}`), "finish:stop"),
			`V(stray_choice@0:choice 1 ignored: only choice 0 is answered) F{ F"mine" F} FIN(stop)`},

		// Errors inside a 200 stream.
		{"errors", "OpenRouter error chunk with finish_reason error", format.Text, sseBody(
			`{"content":"Partial"}`,
			`!{"id":"gen-1","object":"chat.completion.chunk","provider":"OpenAI","error":{"code":502,"message":"Provider disconnected"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`),
			`F{ F"Partial" F} E(upstream_error)`},
		{"errors", "finish_reason error alone", format.Text, sseBody(
			`{"content":"Partial"}`, "finish:error"),
			`F{ F"Partial" F} E(upstream_error)`},
		{"errors", "an error chunk that carries text: the text first", format.Text, sseBody(
			`{"content":"a"}`,
			`!{"choices":[{"index":0,"delta":{"content":"b"}}],"error":{"message":"overloaded"}}`),
			`F{ F"ab" F} E(upstream_error)`},
	}
	for _, tc := range cases {
		t.Run(tc.class+"/"+tc.name, func(t *testing.T) {
			body := []byte(tc.body)
			rec := runBytes(t, tc.format, [][]byte{body})
			got := rec.notation()
			if got != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			for _, chunks := range transformtest.Splits(body, 9, 30) {
				rec := runBytes(t, tc.format, chunks)
				if cut := rec.notation(); cut != got {
					t.Fatalf("split %s:\n got %s\nwant %s", transformtest.Describe(chunks), cut, got)
				}
				if valid := !strings.Contains(tc.name, "never completes"); valid {
					checkRuneAligned(t, rec.events, chunks)
				}
			}
		})
	}
}

// checkRuneAligned fails when a text delta ends or starts inside a UTF-8
// sequence (PARSING.md §5.2).
func checkRuneAligned(t *testing.T, evs []transform.Event, chunks [][]byte) {
	t.Helper()
	for _, ev := range evs {
		if ev.Kind.IsDelta() && !utf8.Valid(ev.Text) {
			t.Fatalf("split %s: %s delta %q is not valid UTF-8", transformtest.Describe(chunks), ev.Kind, ev.Text)
		}
	}
}

// TestJSONCompletionVariants checks the same rules on a non-streamed
// completion: typed parts, a second choice, usage in the choice.
func TestJSONCompletionVariants(t *testing.T) {
	body := `{"id":"c","object":"chat.completion","model":"magistral-small-2509","choices":[` +
		`{"index":0,"message":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"hm"}]},{"type":"text","text":"four"}]},"finish_reason":"stop","usage":{"total_tokens":4}},` +
		`{"index":1,"message":{"role":"assistant","content":"five"},"finish_reason":"stop"}]}`
	got := run(t, format.Text, "application/json", body)
	want := `V(stray_choice@0:choice 1 ignored: only choice 0 is answered) R{ R"hm" R} F{ F"four" F} U{"total_tokens":4} FIN(stop)`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

// TestDecodingStateAllocs checks that native reasoning cut mid-character
// and usage repeated in every chunk cost no allocation per chunk.
func TestDecodingStateAllocs(t *testing.T) {
	p, _ := New(Config{Format: format.Text})
	p.Reset(discard{}, transform.Meta{})
	p.Start(nil, "text/event-stream", "")
	chunk := func(reasoning string) []byte {
		return []byte(`data: {"id":"c","choices":[{"index":0,"delta":{"reasoning_content":"` + reasoning +
			`"}}],"usage":{"prompt_tokens":5,"completion_tokens":2,"total_tokens":7}}` + "\n\n")
	}
	p.Feed(nil, chunk("warm up"))
	cut, rest := chunk("思考\xe4\xb8"), chunk("\xad文")
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(200, func() {
		_ = p.Feed(buf[:0], cut)
		_ = p.Feed(buf[:0], rest)
	}); n != 0 {
		t.Errorf("%.1f allocations per pair of chunks, want 0", n)
	}
}
