package responses_test

import (
	"encoding/json"
	"net/http"
	"reflect"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/request"
	"github.com/llmstream/llmstream/transform/responses"
)

// codexBody is shaped like what Codex CLI 0.169 posts (recorded, with the
// texts shortened): developer and user messages of input_text parts, a
// reasoning item and a tool round trip replayed, exec_command among
// function tools, a namespace of tools and web_search, and the parameters
// that have no chat counterpart.
const codexBody = `{"model":"e2e-model","stream":true,"input":[` +
	`{"type":"message","id":"msg_1","role":"developer","content":[{"type":"input_text","text":"You are a coding agent."}]},` +
	`{"type":"message","role":"user","content":[{"type":"input_text","text":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"}]},` +
	`{"type":"message","role":"user","content":[{"type":"input_text","text":"List the files"}]},` +
	`{"type":"reasoning","id":"rs_1","summary":[{"type":"summary_text","text":"**Plan**"}],"content":null,"encrypted_content":null},` +
	`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Listing."}]},` +
	`{"type":"function_call","id":"fc_1","call_id":"call_1","name":"exec_command","arguments":"{\"cmd\":\"ls\"}"},` +
	`{"type":"function_call_output","call_id":"call_1","output":"a.txt\nb.txt"},` +
	`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"Two files."}]}],` +
	`"tools":[{"type":"function","name":"exec_command","description":"Runs a command.","strict":false,` +
	`"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false}},` +
	`{"type":"namespace","name":"multi_agent_v1","description":"Sub-agents.","tools":[{"type":"function","name":"close_agent","parameters":{}}]},` +
	`{"type":"web_search","external_web_access":true}],` +
	`"tool_choice":"auto","parallel_tool_calls":true,"reasoning":{"summary":"auto"},"store":false,` +
	`"include":["reasoning.encrypted_content"],"prompt_cache_key":"k1","client_metadata":{"thread_id":"t"}}`

func TestConvert(t *testing.T) {
	tests := []struct {
		name, body, want string
		stream           bool
		leftOut          string
	}{
		{name: "string_input", body: `{"model":"m","input":"hi"}`,
			want: `{"model":"m","messages":[{"role":"user","content":"hi"}]}`},
		{name: "instructions_and_stream", body: `{"model":"m","instructions":"Be brief.","input":"hi","stream":true}`,
			want:   `{"model":"m","messages":[{"role":"system","content":"Be brief."},{"role":"user","content":"hi"}]}`,
			stream: true},
		{name: "no_model", body: `{"input":"hi","model":null,"stream":false}`,
			want: `{"messages":[{"role":"user","content":"hi"}]}`},
		{name: "codex", body: codexBody, stream: true, leftOut: "item:reasoning tool:namespace tool:web_search",
			want: `{"model":"e2e-model","messages":[` +
				`{"role":"system","content":"You are a coding agent."},` +
				`{"role":"user","content":"<environment_context>\n  <cwd>/w</cwd>\n</environment_context>"},` +
				`{"role":"user","content":"List the files"},` +
				`{"role":"assistant","content":"Listing.","tool_calls":[{"id":"call_1","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"ls\"}"}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"a.txt\nb.txt"},` +
				`{"role":"assistant","content":"Two files."}],` +
				`"tools":[{"type":"function","function":{"name":"exec_command","description":"Runs a command.",` +
				`"parameters":{"type":"object","properties":{"cmd":{"type":"string"}},"required":["cmd"],"additionalProperties":false},"strict":false}}],` +
				`"tool_choice":"auto","parallel_tool_calls":true}`},
		{name: "easy_messages_and_parts_joined", body: `{"input":[{"role":"system","content":"S"},` +
			`{"role":"user","content":[{"type":"input_text","text":"caf\u00e9 "},{"type":"input_text","text":"\"two\""}]},` +
			`{"role":"assistant","content":[{"type":"output_text","text":"A"},{"type":"refusal","refusal":"no"}]}]}`,
			want: `{"messages":[{"role":"system","content":"S"},{"role":"user","content":"caf\u00e9 \"two\""},{"role":"assistant","content":"Ano"}]}`},
		{name: "images_and_files", body: `{"input":[{"role":"user","content":[{"type":"input_text","text":"What is this?"},` +
			`{"type":"input_image","image_url":"https://x/a.png","detail":"high"},{"type":"input_image","image_url":"data:image/png;base64,iVBO","detail":"original"},` +
			`{"type":"input_file","filename":"a.pdf","file_data":"data:application/pdf;base64,JVBE"},{"type":"input_file","file_id":"file-1"}]}]}`,
			want: `{"messages":[{"role":"user","content":[{"type":"text","text":"What is this?"},` +
				`{"type":"image_url","image_url":{"url":"https://x/a.png","detail":"high"}},{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},` +
				`{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,JVBE"}},{"type":"file","file":{"file_id":"file-1"}}]}]}`},
		{name: "parallel_calls_and_an_image_output", body: `{"input":[{"role":"user","content":"look"},` +
			`{"type":"function_call","call_id":"a","name":"view_image","arguments":"{}"},{"type":"function_call","call_id":"b","name":"ls","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"a","output":[{"type":"input_text","text":"the image:"},{"type":"input_image","image_url":"https://x/i.png"}]},` +
			`{"type":"function_call_output","call_id":"b","output":"x"},{"role":"user","content":"and?"}]}`,
			want: `{"messages":[{"role":"user","content":"look"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"view_image","arguments":"{}"}},` +
				`{"id":"b","type":"function","function":{"name":"ls","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"a","content":"the image:"},{"role":"tool","tool_call_id":"b","content":"x"},` +
				`{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/i.png"}}]},{"role":"user","content":"and?"}]}`},
		{name: "image_output_last", body: `{"input":[{"type":"function_call","call_id":"a","name":"v","arguments":"{}"},` +
			`{"type":"function_call_output","call_id":"a","output":[{"type":"input_image","image_url":"https://x/i.png"}]}]}`,
			want: `{"messages":[{"role":"assistant","content":null,"tool_calls":[{"id":"a","type":"function","function":{"name":"v","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"a","content":""},{"role":"user","content":[{"type":"image_url","image_url":{"url":"https://x/i.png"}}]}]}`},
		{name: "parameters", body: `{"model":"m","input":"hi","max_output_tokens":100,"temperature":0.5,"top_p":1,"user":"u",` +
			`"text":{"format":{"type":"json_schema","name":"out","schema":{"type":"object","properties":{}},"strict":true},"verbosity":"low"},` +
			`"reasoning":{"effort":"high","summary":"auto"},"metadata":{"k":"v"},"store":true,"truncation":"auto","include":[],"service_tier":"auto"}`,
			want: `{"model":"m","messages":[{"role":"user","content":"hi"}],"max_tokens":100,"temperature":0.5,"top_p":1,"user":"u",` +
				`"response_format":{"type":"json_schema","json_schema":{"name":"out","schema":{"type":"object","properties":{}},"strict":true}},` +
				`"reasoning_effort":"high"}`},
		{name: "json_object_and_text_format", body: `{"input":"hi","text":{"format":{"type":"json_object"}}}`,
			want: `{"messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_object"}}`},
		{name: "text_format_text", body: `{"input":"hi","text":{"format":{"type":"text"}},"reasoning":{"summary":"auto"}}`,
			want: `{"messages":[{"role":"user","content":"hi"}]}`},
		{name: "only_hosted_tools", body: `{"input":"hi","tools":[{"type":"web_search"},{"type":"file_search","vector_store_ids":["v"]},` +
			`{"type":"custom","name":"apply_patch"},{"type":"Prompt Text Here"}],"tool_choice":"auto","parallel_tool_calls":false}`,
			want:    `{"messages":[{"role":"user","content":"hi"}]}`,
			leftOut: "tool:web_search tool:file_search tool:custom tool:other"},
		{name: "tool_choice_function", body: `{"input":"hi","tools":[{"type":"function","name":"f"}],"tool_choice":{"type":"function","name":"f"}}`,
			want: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f"}}],` +
				`"tool_choice":{"type":"function","function":{"name":"f"}}}`},
		{name: "allowed_tools", body: `{"input":"hi","tools":[{"type":"function","name":"f"},{"type":"function","name":"g"},{"type":"function","name":"h"}],` +
			`"tool_choice":{"type":"allowed_tools","mode":"required","tools":[{"type":"function","name":"g"},{"type":"function","name":"h"},{"type":"web_search"}]}}`,
			want: `{"messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"g"}},{"type":"function","function":{"name":"h"}}],` +
				`"tool_choice":"required"}`},
		{name: "hosted_items_left_out", body: `{"input":[{"role":"user","content":"q"},{"type":"web_search_call","id":"ws","status":"completed"},` +
			`{"type":"local_shell_call","call_id":"c","action":{}},{"type":"local_shell_call_output","call_id":"c","output":"o"},` +
			`{"type":"custom_tool_call","call_id":"d","name":"apply_patch","input":"x"},{"type":"custom_tool_call_output","call_id":"d","output":"ok"}]}`,
			want:    `{"messages":[{"role":"user","content":"q"}]}`,
			leftOut: "item:web_search_call item:local_shell_call item:local_shell_call_output item:custom_tool_call item:custom_tool_call_output"},
		{name: "previous_response_id_empty_or_null", body: `{"input":"hi","previous_response_id":null,"conversation":null,"background":false}`,
			want: `{"messages":[{"role":"user","content":"hi"}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, e := responses.Convert([]byte(tt.body))
			if e != nil {
				t.Fatal(e)
			}
			if string(out) != tt.want {
				t.Errorf("converted\n %s\nwant\n %s", out, tt.want)
			}
			if info.Stream != tt.stream || info.LeftOut != tt.leftOut {
				t.Errorf("stream %v, left out %q; want %v, %q", info.Stream, info.LeftOut, tt.stream, tt.leftOut)
			}
			if _, ok := info.Facts.(responses.Request); !ok {
				t.Errorf("facts %T, want a responses.Request", info.Facts)
			}
		})
	}
}

func TestConvertRefuses(t *testing.T) {
	tests := []struct {
		name, body, code, param, msg string
	}{
		{"empty", ``, request.CodeInvalidJSON, "", "empty"},
		{"not_json", `{"input":`, request.CodeInvalidJSON, "", "not valid JSON"},
		{"not_an_object", `["hi"]`, request.CodeInvalidBody, "", "object"},
		{"no_input", `{"model":"m","stream":true}`, responses.CodeMissingInput, "input", "input"},
		{"input_null", `{"input":null}`, responses.CodeMissingInput, "input", "input"},
		{"input_number", `{"input":3}`, responses.CodeInvalidInput, "input", "string or an array"},
		{"previous_response_id", `{"input":"hi","previous_response_id":"resp_abc\n"}`, responses.CodePreviousResponseNotFound,
			"previous_response_id", "previous response with id 'resp_abc' not found"},
		{"previous_response_id_number", `{"input":"hi","previous_response_id":5}`, responses.CodeInvalidParam, "previous_response_id", "string"},
		{"conversation", `{"input":"hi","conversation":"conv_1"}`, responses.CodeUnsupported, "conversation", "stored"},
		{"prompt", `{"input":"hi","prompt":{"id":"pmpt_1"}}`, responses.CodeUnsupported, "prompt", "stored"},
		{"background", `{"input":"hi","background":true}`, responses.CodeUnsupported, "background", "background"},
		{"item_reference", `{"input":[{"type":"item_reference","id":"msg_1"}]}`, responses.CodeUnsupported, "input[0]", "item_reference"},
		{"item_not_an_object", `{"input":["hi"]}`, responses.CodeInvalidInput, "input[0]", "object"},
		{"item_without_type", `{"input":[{"content":"hi"}]}`, responses.CodeInvalidInput, "input[0]", "no type"},
		{"bad_role", `{"input":[{"role":"tool","content":"x"}]}`, responses.CodeInvalidInput, "input[0].role", "role"},
		{"bad_content", `{"input":[{"role":"user","content":5}]}`, responses.CodeInvalidInput, "input[0].content", "string or an array"},
		{"text_not_a_string", `{"input":[{"role":"user","content":[{"type":"input_text","text":1}]}]}`,
			responses.CodeInvalidInput, "input[0].content[0].text", "string"},
		{"image_by_file_id", `{"input":[{"role":"user","content":[{"type":"input_image","file_id":"file-1"}]}]}`,
			responses.CodeUnsupported, "input[0].content[0]", "file_id"},
		{"file_by_url", `{"input":[{"role":"user","content":[{"type":"input_file","file_url":"https://x/a.pdf"}]}]}`,
			responses.CodeUnsupported, "input[0].content[0].file_url", "file_data"},
		{"file_without_data", `{"input":[{"role":"user","content":[{"type":"input_file","filename":"a"}]}]}`,
			responses.CodeInvalidInput, "input[0].content[0]", "neither"},
		{"audio", `{"input":[{"role":"user","content":[{"type":"input_audio","input_audio":{"data":"x"}}]}]}`,
			responses.CodeUnsupported, "input[0].content[0].type", "input_audio"},
		{"image_in_a_system_message", `{"input":[{"role":"developer","content":[{"type":"input_image","image_url":"https://x"}]}]}`,
			responses.CodeInvalidInput, "input[0].content[0]", "system messages hold text only"},
		{"call_without_id", `{"input":[{"type":"function_call","name":"f","arguments":"{}"}]}`, responses.CodeInvalidInput, "input[0].call_id", "string"},
		{"output_without_id", `{"input":[{"type":"function_call_output","output":"x"}]}`, responses.CodeInvalidInput, "input[0].call_id", "string"},
		{"output_number", `{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"c","output":1}]}`, responses.CodeInvalidInput, "input[1].output", "string"},
		{"output_without_its_call", `{"input":[{"type":"function_call","call_id":"c","name":"f","arguments":"{}"},{"type":"function_call_output","call_id":"d","output":"x"}]}`,
			responses.CodeInvalidInput, "input[1].call_id", "no function_call found"},
		{"tools_object", `{"input":"hi","tools":{}}`, responses.CodeInvalidParam, "tools", "array"},
		{"tool_without_name", `{"input":"hi","tools":[{"type":"function"}]}`, responses.CodeInvalidParam, "tools[0].name", "name"},
		{"tool_bad_parameters", `{"input":"hi","tools":[{"type":"function","name":"f","parameters":"x"}]}`,
			responses.CodeInvalidParam, "tools[0].parameters", "type"},
		{"tool_choice_hosted", `{"input":"hi","tool_choice":{"type":"file_search"}}`, responses.CodeUnsupported, "tool_choice", "file_search"},
		{"tool_choice_word", `{"input":"hi","tool_choice":"always"}`, responses.CodeInvalidParam, "tool_choice", "auto"},
		{"stream_string", `{"input":"hi","stream":"yes"}`, responses.CodeInvalidParam, "stream", "boolean"},
		{"model_number", `{"input":"hi","model":4}`, responses.CodeInvalidParam, "model", "string"},
		{"temperature_string", `{"input":"hi","temperature":"hot"}`, responses.CodeInvalidParam, "temperature", "type"},
		{"instructions_array", `{"input":"hi","instructions":["a"]}`, responses.CodeInvalidParam, "instructions", "string"},
		{"text_format_unknown", `{"input":"hi","text":{"format":{"type":"xml"}}}`, responses.CodeInvalidParam, "text.format.type", "xml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, _, e := responses.Convert([]byte(tt.body))
			if e == nil {
				t.Fatalf("converted to %s, want an error", out)
			}
			if e.Status != http.StatusBadRequest || e.Code != tt.code || e.Param != tt.param || !strings.Contains(e.Message, tt.msg) {
				t.Errorf("got %d %s %q %q, want 400 %s %q, a message with %q", e.Status, e.Code, e.Param, e.Message, tt.code, tt.param, tt.msg)
			}
		})
	}
}

// TestAppendError checks the refusal body: OpenAI's error shape, which the
// SDKs raise as an APIError with code and param.
func TestAppendError(t *testing.T) {
	got := string(responses.AppendError(nil, &request.Error{Status: 400, Code: "previous_response_not_found", Param: "previous_response_id", Message: `id "x"`}))
	want := `{"error":{"message":"id \"x\"","type":"invalid_request_error","param":"previous_response_id","code":"previous_response_not_found"}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	got = string(responses.Format.ErrorBody(nil, request.TooLarge(1000)))
	want = `{"error":{"message":"request body is larger than 1000 bytes (max_request_body)","type":"invalid_request_error","param":null,"code":"request_too_large"}}`
	if got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// TestShaped runs a Responses body through the route's shaping: the
// route's prompt before the instructions, its tools after the client's,
// forced streaming with usage, and the facts and what was left out handed
// on.
func TestShaped(t *testing.T) {
	s := request.Shaper{Format: responses.Format, Model: "route-model",
		Tools: [][]byte{[]byte(`{"type":"function","function":{"name":"ask_user","parameters":{"type":"object"}}}`)}}
	out, info, err := s.Rewrite([]byte(codexBody), "ROUTE PROMPT")
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Model    string `json:"model"`
		Messages []struct {
			Role    string `json:"role"`
			Content any    `json:"content"`
		} `json:"messages"`
		Tools []struct {
			Function struct{ Name string } `json:"function"`
		} `json:"tools"`
		Stream        bool `json:"stream"`
		StreamOptions struct {
			IncludeUsage bool `json:"include_usage"`
		} `json:"stream_options"`
	}
	if err := json.Unmarshal(out, &body); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	var roles, tools []string
	for _, m := range body.Messages {
		roles = append(roles, m.Role)
	}
	for _, tl := range body.Tools {
		tools = append(tools, tl.Function.Name)
	}
	if body.Model != "route-model" || !body.Stream || !body.StreamOptions.IncludeUsage || body.Messages[0].Content != "ROUTE PROMPT" ||
		!reflect.DeepEqual(roles, []string{"system", "system", "user", "user", "assistant", "tool", "assistant"}) ||
		!reflect.DeepEqual(tools, []string{"exec_command", "ask_user"}) {
		t.Errorf("shaped body %s", out)
	}
	if !info.Stream || info.Model != "route-model" || info.LeftOut != "item:reasoning tool:namespace tool:web_search" {
		t.Errorf("info %+v", info)
	}
	req, ok := info.Facts.(responses.Request)
	if !ok || string(req.ToolChoice) != `"auto"` || string(req.Reasoning) != `{"summary":"auto"}` || !strings.HasPrefix(string(req.Tools), `[{"type":"function","name":"exec_command"`) {
		t.Errorf("facts %+v", info.Facts)
	}
}
