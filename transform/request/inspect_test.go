package request

import (
	"reflect"
	"testing"
)

func TestInspectTools(t *testing.T) {
	body := `{"model":"m","messages":[],
	"tools":[
		{"type":"function","function":{"name":"get_weather","parameters":{"type":"object","required":["city"]}}},
		{"type":"function","function":{"name":"no_schema"}},
		{"type":"function","function":{"name":"null_schema","parameters":null}},
		{"type":"web_search"},
		{"type":"function","function":{"description":"nameless"}},
		{"function":{"name":"untyped","parameters":{}}}
	],
	"functions":[{"name":"legacy","parameters":{"type":"object"}}]}`
	in, err := Inspect([]byte(body))
	if err != nil {
		t.Fatal(err)
	}
	want := []ToolDef{
		{Name: "get_weather", Parameters: []byte(`{"type":"object","required":["city"]}`)},
		{Name: "no_schema"},
		{Name: "null_schema"},
		{Name: "untyped", Parameters: []byte(`{}`)},
		{Name: "legacy", Parameters: []byte(`{"type":"object"}`)},
	}
	if !reflect.DeepEqual(in.Tools, want) {
		t.Errorf("Tools = %q\nwant %q", in.Tools, want)
	}
}

func TestInspectLoop(t *testing.T) {
	tests := []struct {
		name string
		msgs string
		want Loop
	}{
		{"no_loop", `[{"role":"user","content":"hi"}]`, Loop{}},
		{
			"calls_and_results_after_the_last_user_message",
			`[{"role":"user","content":"old"},
			  {"role":"assistant","tool_calls":[{"id":"old1","type":"function","function":{"name":"generate_pptx","arguments":"{}"}}]},
			  {"role":"tool","tool_call_id":"old1","content":"old result"},
			  {"role":"user","content":"make a quiz"},
			  {"role":"assistant","content":null,"tool_calls":[
				{"id":"c1","type":"function","function":{"name":"get_class","arguments":"{}"}},
				{"id":"c2","type":"function","function":{"name":"generate_quiz_questions","arguments":"{}"}}]},
			  {"role":"tool","tool_call_id":"c1","content":"class 3"},
			  {"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"ok"}]},
			  {"role":"tool","tool_call_id":"unknown","name":"by_name","content":"x"}]`,
			Loop{
				Calls: []LoopCall{{"c1", "get_class"}, {"c2", "generate_quiz_questions"}},
				Results: []LoopResult{
					{CallID: "c1", Name: "get_class", Content: []byte(`"class 3"`),
						Message: []byte(`{"role":"tool","tool_call_id":"c1","content":"class 3"}`)},
					{CallID: "c2", Name: "generate_quiz_questions", Content: []byte(`[{"type":"text","text":"ok"}]`),
						Message: []byte(`{"role":"tool","tool_call_id":"c2","content":[{"type":"text","text":"ok"}]}`)},
					{CallID: "unknown", Name: "by_name", Content: []byte(`"x"`),
						Message: []byte(`{"role":"tool","tool_call_id":"unknown","name":"by_name","content":"x"}`)},
				},
			},
		},
		{
			"legacy_function_call_and_no_user_message",
			`[{"role":"system","content":"s"},
			  {"role":"assistant","function_call":{"name":"render_pdf","arguments":"{}"}},
			  {"role":"function","name":"render_pdf","content":"done"}]`,
			Loop{
				Calls: []LoopCall{{"", "render_pdf"}},
				Results: []LoopResult{{Name: "render_pdf", Content: []byte(`"done"`),
					Message: []byte(`{"role":"function","name":"render_pdf","content":"done"}`)}},
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in, err := Inspect([]byte(`{"messages":` + tt.msgs + `}`))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(in.Loop, tt.want) {
				t.Errorf("Loop = %+q\nwant %+q", in.Loop, tt.want)
			}
		})
	}
}

func TestInspectRefuses(t *testing.T) {
	for _, body := range []string{``, `{`, `[]`, `{"messages":{}}`, `{"model":"m"}`} {
		if _, err := Inspect([]byte(body)); err != ErrNotChatRequest {
			t.Errorf("Inspect(%q) = %v, want ErrNotChatRequest", body, err)
		}
	}
}

func TestLoopResultText(t *testing.T) {
	tests := []struct{ content, want string }{
		{`"plain \u0041"`, "plain A"},
		{`[{"type":"text","text":"a"},{"type":"image_url","image_url":{}},{"type":"text","text":"b"}]`, "a\nb"},
		{`null`, ""},
		{``, ""},
		{`{"a":1}`, ""},
	}
	for _, tt := range tests {
		if got := (LoopResult{Content: []byte(tt.content)}).Text(); got != tt.want {
			t.Errorf("Text(%s) = %q, want %q", tt.content, got, tt.want)
		}
	}
}
