package upstream

import (
	"testing"
)

// TestChunkVariants decodes the shapes providers send beyond OpenAI's own
// (CONTRACT.md §7), one chunk at a time; TestDecodingRules runs the same
// classes through whole streams.
func TestChunkVariants(t *testing.T) {
	tests := []struct {
		name, data, want string
	}{
		// Typed content parts.
		{"Mistral thinking part", chunkJSON(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Let me think"}]}]}`),
			`id=chatcmpl-1 model=m R"Let me think"`},
		{"Mistral thinking and text parts in one delta", chunkJSON(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":" two."}]},{"type":"text","text":"It is "}]}`),
			`id=chatcmpl-1 model=m R" two." C"It is "`},
		{"empty thinking part closing the reasoning", chunkJSON(`{"content":[{"type":"thinking","thinking":[]},{"type":"text","text":"The answer"}]}`),
			`id=chatcmpl-1 model=m C"The answer"`},
		{"several text parts are joined in order", chunkJSON(`{"content":[{"type":"text","text":"a\n"},{"text":"b"},{"type":"text","text":"\u00e9"}]}`),
			`id=chatcmpl-1 model=m C"a\nbé"`},
		{"thinking parts split around a text part", chunkJSON(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"r1"}]},{"type":"text","text":"c"},{"type":"thinking","thinking":[{"type":"text","text":"r2"}]}]}`),
			`id=chatcmpl-1 model=m R"r1r2" C"c"`},
		{"the type after the text", chunkJSON(`{"content":[{"thinking":[{"text":"r","type":"text"}],"type":"thinking"},{"text":"c","type":"text"}]}`),
			`id=chatcmpl-1 model=m R"r" C"c"`},
		{"Anthropic-style thinking string", chunkJSON(`{"content":[{"type":"thinking","thinking":"hmm","signature":"EqQB"},{"type":"text","text":"ok"}]}`),
			`id=chatcmpl-1 model=m R"hmm" C"ok"`},
		{"reasoning part with text", chunkJSON(`{"content":[{"type":"reasoning","text":"why"}]}`),
			`id=chatcmpl-1 model=m R"why"`},
		{"a content object is one part", chunkJSON(`{"content":{"type":"text","text":"x"}}`),
			`id=chatcmpl-1 model=m C"x"`},
		{"a bare string among the parts is text", chunkJSON(`{"content":["a",null,{"type":"text","text":"b"}]}`),
			`id=chatcmpl-1 model=m C"ab"`},
		{"unknown part type with text: text kept, violation", chunkJSON(`{"content":[{"type":"output_text","text":"kept"}]}`),
			`id=chatcmpl-1 model=m C"kept" V(unknown_content_part:output_text)`},
		{"unknown part type without text", chunkJSON(`{"content":[{"type":"image_url","image_url":{"url":"data:"}},{"type":"text","text":"see"}]}`),
			`id=chatcmpl-1 model=m C"see" V(unknown_content_part:image_url)`},
		{"Mistral reference part inside thinking", chunkJSON(`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"per "},{"type":"reference","reference_ids":[1]},{"type":"tool_reference","tool":"web_search","title":"Doc","text":"src"}]}]}`),
			`id=chatcmpl-1 model=m R"per src" V(unknown_content_part:reference) V(unknown_content_part:tool_reference)`},
		{"a part without a type or text", chunkJSON(`{"content":[{"image_url":{"url":"x"}}]}`),
			`id=chatcmpl-1 model=m V(unknown_content_part:)`},
		{"a type that is not a string", chunkJSON(`{"content":[{"type":7,"text":"t"}]}`),
			`id=chatcmpl-1 model=m C"t" V(unknown_content_part:7)`},
		{"a null type is none", chunkJSON(`{"content":[{"type":null,"text":"t"}]}`),
			`id=chatcmpl-1 model=m C"t"`},
		{"a text part whose text is not a string", chunkJSON(`{"content":[{"type":"text","text":{"value":"v"}}]}`),
			`id=chatcmpl-1 model=m V(unknown_content_part:text)`},
		{"a thinking object is only reported", chunkJSON(`{"content":[{"type":"thinking","thinking":{"text":"x"}}]}`),
			`id=chatcmpl-1 model=m V(unknown_content_part:{"text":"x"})`},
		{"numeric content is delivered, with a violation", chunkJSON(`{"content":42}`),
			`id=chatcmpl-1 model=m C"42" V(unknown_content_part:42)`},
		{"a nested array is not a part", chunkJSON(`{"content":[["x"]]}`),
			`id=chatcmpl-1 model=m V(unknown_content_part:["x"])`},
		{"a long detail is cut on a rune boundary", chunkJSON(`{"content":[{"type":"` + "ééééééééééééééééééééééééééééééééé" + `"}]}`),
			`id=chatcmpl-1 model=m V(unknown_content_part:` + "éééééééééééééééééééééééééééééééé" + `)`},
		{"reasoning_content wins over thinking parts", chunkJSON(`{"reasoning_content":"rc","content":[{"type":"thinking","thinking":"tp"},{"type":"text","text":"c"}]}`),
			`id=chatcmpl-1 model=m R"rc" C"c"`},
		{"refusal is content", chunkJSON(`{"content":null,"refusal":"I can't help with that."}`),
			`id=chatcmpl-1 model=m C"I can't help with that."`},
		{"refusal after content", chunkJSON(`{"refusal":"no","content":"Sorry: "}`),
			`id=chatcmpl-1 model=m C"Sorry: no"`},

		// Usage wherever the provider puts it.
		{"Moonshot usage inside the choice", `{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop","usage":{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}}]}`,
			`id=x FIN(stop) U{"prompt_tokens":8,"completion_tokens":2,"total_tokens":10}`},
		{"Groq usage in x_groq", `{"id":"x","choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"x_groq":{"id":"req_1","usage":{"queue_time":0.01,"total_tokens":5}}}`,
			`id=x FIN(stop) U{"queue_time":0.01,"total_tokens":5}`},
		{"top-level usage wins", `{"x_groq":{"usage":{"total_tokens":1}},"choices":[{"index":0,"delta":{},"usage":{"total_tokens":2}}],"usage":{"total_tokens":3}}`,
			`U{"total_tokens":3}`},
		{"choice usage wins over x_groq", `{"x_groq":{"usage":{"total_tokens":1}},"choices":[{"index":0,"delta":{},"usage":{"total_tokens":2}}]}`,
			`U{"total_tokens":2}`},
		{"a stray choice's usage is not the reply's", `{"choices":[{"index":1,"delta":{},"usage":{"total_tokens":2}}]}`,
			`STRAY(1)`},

		// Choices other than 0.
		{"a chunk of choice 1 alone", `{"choices":[{"index":1,"delta":{"content":"other","tool_calls":[{"index":0,"id":"x","function":{"name":"f"}}]},"finish_reason":"stop"}]}`,
			`STRAY(1)`},
		{"choice 0 after choice 1", `{"choices":[{"index":1,"delta":{"content":"b","reasoning_content":"rb"}},{"index":0,"delta":{"content":"a"}}]}`,
			`C"a" STRAY(1)`},
		{"the index after the delta", `{"choices":[{"delta":{"content":"\u00e9 other"},"finish_reason":"stop","index":1},{"delta":{"content":"mine"},"index":0}]}`,
			`C"mine" STRAY(1)`},
		{"two choices 0: the first is the answer", `{"choices":[{"index":0,"delta":{"content":"a"}},{"index":0,"delta":{"content":"b"}}]}`,
			`C"a" STRAY(0)`},
		{"an index that is not a number is the position", `{"choices":[{"index":"0","delta":{"content":"a"}},{"index":"x","delta":{"content":"b"}}]}`,
			`C"a" STRAY(1)`},
		{"a stray choice's unknown parts are not reported", `{"choices":[{"index":0,"delta":{"content":"a"}},{"index":1,"delta":{"content":[{"type":"image_url"}]}}]}`,
			`C"a" STRAY(1)`},

		// Tool calls without index.
		{"several fragments without index are positional", chunkJSON(`{"tool_calls":[{"function":{"arguments":"{\"location\":\"San Francisco\"}"}},{"function":{"arguments":"{\"zone\":\"UTC\"}"}}]}`),
			`id=chatcmpl-1 model=m TD[@0 - - - "{\"location\":\"San Francisco\"}"] TD[@1 - - - "{\"zone\":\"UTC\"}"]`},
		{"an index beside a fragment without one", chunkJSON(`{"tool_calls":[{"index":3,"function":{"arguments":"a"}},{"function":{"arguments":"b"}}]}`),
			`id=chatcmpl-1 model=m TD[3 - - - "a"] TD[@1 - - - "b"]`},
		{"legacy function_call streamed", chunkJSON(`{"function_call":{"name":"get_weather","arguments":"{\"city\":"}}`),
			`id=chatcmpl-1 model=m TD[_ - - get_weather "{\"city\":"]`},
		{"a lone fragment without index is not positional", chunkJSON(`{"tool_calls":[{"function":{"arguments":"x"}}]}`),
			`id=chatcmpl-1 model=m TD[_ - - - "x"]`},
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
