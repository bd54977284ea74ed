package upstream

import (
	"errors"
	"strings"
	"testing"
)

// chunkJSON wraps a delta object in a chat.completion.chunk as OpenAI sends it.
func chunkJSON(delta string) string {
	return `{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1735689600,"model":"m","choices":[{"index":0,"delta":` + delta + `,"logprobs":null,"finish_reason":null}]}`
}

func TestChunkDecoder(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		{"content", chunkJSON(`{"content":"Hello"}`), `id=chatcmpl-1 model=m C"Hello"`},
		{"role and empty content", chunkJSON(`{"role":"assistant","content":""}`), `id=chatcmpl-1 model=m`},
		{"null content", chunkJSON(`{"content":null}`), `id=chatcmpl-1 model=m`},
		{"escapes", chunkJSON(`{"content":"a\n\"b\"\t\u00e9\ud83d\ude00"}`), `id=chatcmpl-1 model=m C"a\n\"b\"\té😀"`},
		{"invalid escape kept", chunkJSON(`{"content":"use App\Http"}`), `id=chatcmpl-1 model=m C"use App\\Http"`},
		{"raw invalid UTF-8 passes through", chunkJSON("{\"content\":\"\xff\xc3\"}"), `id=chatcmpl-1 model=m C"\xff\xc3"`},
		{"raw control byte passes through", chunkJSON("{\"content\":\"a\x01b\"}"), `id=chatcmpl-1 model=m C"a\x01b"`},
		{"pretty-printed", "{\n  \"choices\" : [ {\n    \"delta\" : { \"content\" : \"x\" } ,\n    \"finish_reason\" : \"stop\"\n  } ]\n}\n", `C"x" FIN(stop)`},
		{"reasoning_content", chunkJSON(`{"reasoning_content":"think"}`), `id=chatcmpl-1 model=m R"think"`},
		{"reasoning only", chunkJSON(`{"reasoning":"think"}`), `id=chatcmpl-1 model=m R"think"`},
		{"OA02 identical reasoning and reasoning_content give it once", chunkJSON(`{"reasoning":"same","reasoning_content":"same"}`), `id=chatcmpl-1 model=m R"same"`},
		{"OA03 empty reasoning_content and reasoning", chunkJSON(`{"reasoning_content":"","reasoning":"x"}`), `id=chatcmpl-1 model=m R"x"`},
		{"OA03 null reasoning_content and reasoning", chunkJSON(`{"reasoning_content":null,"reasoning":"x"}`), `id=chatcmpl-1 model=m R"x"`},
		{"different reasoning and reasoning_content: reasoning_content wins", chunkJSON(`{"reasoning":"b","reasoning_content":"a"}`), `id=chatcmpl-1 model=m R"a"`},
		{"reasoning that is not a string is ignored", chunkJSON(`{"reasoning":{"effort":"low"},"content":"x"}`), `id=chatcmpl-1 model=m C"x"`},
		{"reasoning and content in one delta", chunkJSON(`{"reasoning_content":"r","content":"c"}`), `id=chatcmpl-1 model=m R"r" C"c"`},
		{"OA06 first tool call fragment", chunkJSON(`{"tool_calls":[{"index":0,"id":"c1","type":"function","function":{"name":"f","arguments":""}}]}`), `id=chatcmpl-1 model=m TD[0 c1 function f ""]`},
		{"OA06 arguments fragment", chunkJSON(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"a\""}}]}`), `id=chatcmpl-1 model=m TD[0 - - - "{\"a\""]`},
		{"OA10 two tool calls in one delta", chunkJSON(`{"tool_calls":[{"index":0,"id":"a","function":{"name":"f","arguments":"{}"}},{"index":1,"id":"b","function":{"name":"g","arguments":"{\"x\":1}"}}]}`), `id=chatcmpl-1 model=m TD[0 a - f "{}"] TD[1 b - g "{\"x\":1}"]`},
		{"OA13 non-ASCII arguments byte-identical", chunkJSON(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"city\":\"東京\"}"}}]}`), `id=chatcmpl-1 model=m TD[0 - - - "{\"city\":\"東京\"}"]`},
		{"arguments as an object are raw JSON", chunkJSON(`{"tool_calls":[{"index":0,"function":{"name":"f","arguments":{"a": [1, "b"]}}}]}`), `id=chatcmpl-1 model=m TD[0 - - f "{\"a\": [1, \"b\"]}"]`},
		{"tool call without index", chunkJSON(`{"tool_calls":[{"id":"c1","function":{"name":"f"}}]}`), `id=chatcmpl-1 model=m TD[_ c1 - f ""]`},
		{"tool call index that is not an integer", chunkJSON(`{"tool_calls":[{"index":"0"},{"index":-1},{"index":1.5},{"index":12345678901}]}`), `id=chatcmpl-1 model=m TD[@0 - - - ""] TD[@1 - - - ""] TD[@2 - - - ""] TD[@3 - - - ""]`},
		{"finish reason", `{"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`, `FIN(tool_calls)`},
		{"usage in a final chunk with empty choices", `{"id":"x","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}`, `id=x U{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}`},
		{"null usage", `{"choices":[],"usage":null}`, `-`},
		{"usage that is not an object", `{"choices":[],"usage":3}`, `-`},
		{"empty finish reason is none", `{"choices":[{"delta":{"content":"a"},"finish_reason":""}]}`, `C"a"`},
		{"only choice 0 is read", `{"choices":[{"delta":{"content":"a"}},{"delta":{"content":"b"}}]}`, `C"a" STRAY(1)`},
		{"a choice that is not an object is none", `{"choices":[null,{"delta":{"content":"b"}}]}`, `STRAY(1)`},
		{"unknown members are skipped", `{"x":{"y":[1,{"z":"\"}"}],"w":true},"choices":[{"logprobs":{"content":[{"token":"a"}]},"delta":{"content":"a","refusal":null}}],"n":-1.5e3}`, `C"a"`},
		{"DONE", `[DONE]`, `DONE`},
		{"DONE with spaces", " [DONE]\n", `DONE`},
		{"empty data", "  ", `-`},
		{"error object", `{"error":{"message":"Rate limit \"reached\"","type":"rate_limit_error","param":null,"code":"rate_limit_exceeded"}}`, `ERR(rate_limit_error,rate_limit_exceeded,"Rate limit \"reached\"")`},
		{"error with a numeric code", `{"error":{"message":"overloaded","code":529}}`, `ERR(,529,"overloaded")`},
		{"error string", `{"error":"upstream timed out"}`, `ERR(,,"upstream timed out")`},
		{"null error", `{"error":null,"choices":[{"delta":{"content":"a"}}]}`, `C"a"`},
		{"vLLM error object", `{"object":"error","message":"maximum context length exceeded","type":"BadRequestError","param":null,"code":400}`, `ERR(BadRequestError,400,"maximum context length exceeded")`},
		{"message without object error is not an error", `{"message":"hi","choices":[]}`, `-`},
	}
	var d ChunkDecoder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := d.Decode([]byte(tt.data))
			if err != nil {
				t.Fatalf("Decode: %v", err)
			}
			if got := formatChunk(c); got != tt.want {
				t.Errorf("Decode(%s)\n got %s\nwant %s", tt.data, got, tt.want)
			}
		})
	}
}

func TestChunkDecoderMalformed(t *testing.T) {
	tests := []struct {
		name, data string
	}{
		{"not JSON", `hello`},
		{"array", `[{"choices":[]}]`},
		{"string", `"x"`},
		{"number", `42`},
		{"truncated", `{"choices":[{"delta":{"content":"hel`},
		{"unterminated string", `{"a":"b}`},
		{"missing colon", `{"a" "b"}`},
		{"missing comma", `{"a":1 "b":2}`},
		{"trailing comma", `{"a":1,}`},
		{"mismatched brackets", `{"a":[1}`},
		{"bad literal", `{"a":tru}`},
		{"bare word", `{"a":hello}`},
		{"missing value", `{"a":}`},
		{"text after the object", `{"a":1} x`},
		{"two objects", `{"a":1}{"b":2}`},
		{"unquoted key", `{a:1}`},
		{"too deep", strings.Repeat(`{"a":`, 70) + `1` + strings.Repeat(`}`, 70)},
		{"too deep in arrays", `{"a":` + strings.Repeat(`[`, 70) + strings.Repeat(`]`, 70) + `}`},
	}
	var d ChunkDecoder
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if c, err := d.Decode([]byte(tt.data)); !errors.Is(err, ErrMalformed) {
				t.Errorf("Decode(%s) = %s, %v; want ErrMalformed", tt.data, formatChunk(c), err)
			}
		})
	}
	t.Run("deep but within the bound", func(t *testing.T) {
		data := `{"a":` + strings.Repeat(`[`, 62) + strings.Repeat(`]`, 62) + `,"choices":[{"delta":{"content":"ok"}}]}`
		if c, err := d.Decode([]byte(data)); err != nil || formatChunk(c) != `C"ok"` {
			t.Errorf("got %s, %v", formatChunk(c), err)
		}
	})
}

// TestChunkDecoderBorrowing checks that decoded fields stay intact until the
// next Decode, also when several of them were unescaped into the scratch
// buffer, and that the decoder is reusable after an error.
func TestChunkDecoderBorrowing(t *testing.T) {
	var d ChunkDecoder
	c, err := d.Decode([]byte(chunkJSON(`{"content":"a\nb","reasoning_content":"r\tr","tool_calls":[{"index":0,"id":"i\u0064","function":{"name":"n\u0061me","arguments":"{\"q\":1}"}}]}`)))
	if err != nil {
		t.Fatal(err)
	}
	want := `id=chatcmpl-1 model=m R"r\tr" C"a\nb" TD[0 id - name "{\"q\":1}"]`
	if got := formatChunk(c); got != want {
		t.Fatalf("got %s\nwant %s", got, want)
	}
	_ = append(c.Content, "XXXXXXXX"...) // must not overwrite the fields after it
	if got := formatChunk(c); got != want {
		t.Fatalf("an append to Content changed other fields:\n got %s\nwant %s", got, want)
	}
	if _, err := d.Decode([]byte(`{"choices":[`)); err == nil {
		t.Fatal("want an error")
	}
	c, err = d.Decode([]byte(chunkJSON(`{"content":"x"}`)))
	if err != nil || formatChunk(c) != `id=chatcmpl-1 model=m C"x"` {
		t.Fatalf("after an error: %s, %v", formatChunk(c), err)
	}
}

func TestChunkDecoderDoesNotAllocate(t *testing.T) {
	chunks := [][]byte{
		[]byte(chunkJSON(`{"content":"Hello, world"}`)),
		[]byte(chunkJSON(`{"content":"line\n\n- \"item\" \u00e9\ud83d\ude00"}`)),
		[]byte(chunkJSON(`{"reasoning_content":"Let me think\n","reasoning":"Let me think\n"}`)),
		[]byte(chunkJSON(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search","arguments":"{\"q\":\"caf\\u00e9\"}"}},{"index":1,"function":{"arguments":"{}"}}]}`)),
		[]byte(`{"id":"x","choices":[],"usage":{"prompt_tokens":3}}`),
		[]byte(chunkJSON(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"r\n"},{"type":"text","text":"s"}]},{"type":"text","text":"a\n"},{"text":"b"},{"type":"image_url"}]}`)),
		[]byte(`{"choices":[{"delta":{"content":"x"}},{"delta":{"content":"y"},"usage":{"total_tokens":1}}]}`),
		[]byte(chunkJSON(`{"tool_calls":[{"function":{"arguments":"{\"a\":1}"}},{"function":{"arguments":"{}"}}]}`)),
		[]byte(`{"error":{"message":"bad \"thing\"","code":500}}`),
		[]byte(`[DONE]`),
	}
	var d ChunkDecoder
	decode := func() {
		for _, data := range chunks {
			if _, err := d.Decode(data); err != nil {
				t.Fatal(err)
			}
		}
	}
	decode()
	if a := testing.AllocsPerRun(50, decode); a != 0 {
		t.Errorf("%v allocations per round, want 0", a)
	}
}
