package upstream

import (
	"errors"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

func TestDecodeCompletion(t *testing.T) {
	tests := []struct {
		name, body string
		chunk      string // formatChunk of the result
		events     string // the tool-call events of the result
	}{
		{
			name: "content and reasoning",
			body: `{"id":"chatcmpl-B9","object":"chat.completion","created":1735689600,"model":"deepseek-reasoner",
				"choices":[{"index":0,"message":{"role":"assistant","content":"It is \"blue\".\n","reasoning_content":"Rayleigh…"},"logprobs":null,"finish_reason":"stop"}],
				"usage":{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}}`,
			chunk: `id=chatcmpl-B9 model=deepseek-reasoner R"Rayleigh…" C"It is \"blue\".\n" FIN(stop) U{"prompt_tokens":9,"completion_tokens":12,"total_tokens":21}`,
		},
		{
			name: "tool calls, whole, indexed by position",
			body: `{"id":"chatcmpl-B9","object":"chat.completion","model":"gpt-4o","choices":[{"index":0,"message":{"role":"assistant","content":null,
				"tool_calls":[{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"東京\"}"}},
				{"id":"call_2","type":"function","function":{"name":"get_time","arguments":""}}],"refusal":null},"finish_reason":"tool_calls"}]}`,
			chunk:  `id=chatcmpl-B9 model=gpt-4o TD[0 call_1 function get_weather "{\"city\":\"東京\"}"] TD[1 call_2 function get_time ""] FIN(tool_calls)`,
			events: `TC{0 call_1 get_weather} TA0"{\"city\":\"東京\"}" TC{1 call_2 get_time} TC}0 {"city":"東京"} TC}1 {}`,
		},
		{
			name: "Mistral Magistral: typed thinking and text parts",
			body: `{"id":"0a1b","object":"chat.completion","created":1750000000,"model":"magistral-medium-2509",
				"choices":[{"index":0,"message":{"role":"assistant","tool_calls":null,"content":[
				{"type":"thinking","thinking":[{"type":"text","text":"Okay, 2+2.\n"},{"type":"text","text":"It is 4."}]},
				{"type":"text","text":"**4**"}]},"finish_reason":"stop"}],
				"usage":{"prompt_tokens":10,"total_tokens":30,"completion_tokens":20}}`,
			chunk: `id=0a1b model=magistral-medium-2509 R"Okay, 2+2.\nIt is 4." C"**4**" FIN(stop) U{"prompt_tokens":10,"total_tokens":30,"completion_tokens":20}`,
		},
		{
			name: "n=2: only choice 0",
			body: `{"id":"c","object":"chat.completion","model":"m","choices":[
				{"index":0,"message":{"role":"assistant","content":"first"},"finish_reason":"stop"},
				{"index":1,"message":{"role":"assistant","content":"second"},"finish_reason":"length"}]}`,
			chunk: `id=c model=m C"first" FIN(stop) STRAY(1)`,
		},
		{
			name:   "legacy function_call",
			body:   `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"function_call":{"name":"now","arguments":"{}"}},"finish_reason":"function_call"}]}`,
			chunk:  `TD[0 - - now "{}"] FIN(function_call)`,
			events: `TC{0  now} TA0"{}" TC}0 {}`,
		},
		{
			name:  "reasoning alias",
			body:  `{"choices":[{"message":{"content":"4","reasoning":"2+2"},"finish_reason":"stop"}]}`,
			chunk: `R"2+2" C"4" FIN(stop)`,
		},
		{
			name:  "a delta is not read in a completion",
			body:  `{"choices":[{"delta":{"content":"x"},"finish_reason":"stop"}]}`,
			chunk: `FIN(stop)`,
		},
		{
			name:  "error body",
			body:  `{"error":{"message":"Incorrect API key provided","type":"invalid_request_error","param":null,"code":"invalid_api_key"}}`,
			chunk: `ERR(invalid_request_error,invalid_api_key,"Incorrect API key provided")`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := DecodeCompletion([]byte(tt.body))
			if err != nil {
				t.Fatalf("DecodeCompletion: %v", err)
			}
			if got := formatChunk(c); got != tt.chunk {
				t.Errorf("chunk:\n got %s\nwant %s", got, tt.chunk)
			}
			var evs []transform.Event
			emit := func(ev transform.Event) { evs = append(evs, ev.Clone()) }
			var tc ToolCalls
			for _, call := range c.ToolCalls {
				if err := tc.Add(call, emit); err != nil {
					t.Fatal(err)
				}
			}
			tc.Finish(emit)
			if got := transformtest.Format(evs); got != tt.events {
				t.Errorf("events:\n got %s\nwant %s", got, tt.events)
			}
		})
	}
}

func TestDecodeCompletionMalformed(t *testing.T) {
	for _, body := range []string{``, `[DONE]`, `<html>502 Bad Gateway</html>`, `{"choices":[`, `[]`} {
		t.Run(body, func(t *testing.T) {
			if _, err := DecodeCompletion([]byte(body)); !errors.Is(err, ErrMalformed) {
				t.Errorf("DecodeCompletion(%q): got %v, want ErrMalformed", body, err)
			}
		})
	}
}
