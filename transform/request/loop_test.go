package request

import (
	"encoding/json"
	"testing"
)

var demoTools = []ServerTool{
	{Name: "search", Server: "demo", JSON: []byte(`{"type":"function","function":{"name":"search","parameters":{"type":"object"}}}`)},
	{Name: "get_weather", Server: "demo", JSON: []byte(`{"type":"function","function":{"name":"get_weather","parameters":{"type":"object"}}}`)},
}

func TestAppendServerTools(t *testing.T) {
	tests := []struct {
		name, body string
		route      []string
		want       string
		code       string
	}{
		{"added to the client's", `{"messages":[],"tools":[{"type":"function","function":{"name":"open"}}]}`, nil,
			`{"messages":[],"tools":[{"type":"function","function":{"name":"open"}},` + string(demoTools[0].JSON) + `,` + string(demoTools[1].JSON) + `]}`, ""},
		{"no tools member", `{"messages":[] }`, nil,
			`{"messages":[],"tools":[` + string(demoTools[0].JSON) + `,` + string(demoTools[1].JSON) + `] }`, ""},
		{"tools null", `{"messages":[],"tools":null}`, nil,
			`{"messages":[],"tools":[` + string(demoTools[0].JSON) + `,` + string(demoTools[1].JSON) + `]}`, ""},
		{"empty array, pretty", "{\"messages\":[],\"tools\":[\n]}", nil,
			"{\"messages\":[],\"tools\":[" + string(demoTools[0].JSON) + `,` + string(demoTools[1].JSON) + "\n]}", ""},
		{"the route's tool wins: not offered", `{"messages":[],"tools":[{"type":"function","function":{"name":"search","description":"route"}}]}`,
			[]string{"search"},
			`{"messages":[],"tools":[{"type":"function","function":{"name":"search","description":"route"}},` + string(demoTools[1].JSON) + `]}`, ""},
		{"a client tool of the same name", `{"messages":[],"tools":[{"type":"function","function":{"name":"get_weather"}}]}`, nil, "", CodeToolNameTaken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, e := AppendServerTools(nil, []byte(tt.body), demoTools, tt.route)
			if tt.code != "" {
				if e == nil || e.Code != tt.code || e.Status != 400 {
					t.Fatalf("got %s, %v; want a 400 %s", got, e, tt.code)
				}
				return
			}
			if e != nil {
				t.Fatal(e)
			}
			if string(got) != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
}

func TestAppendMessagesAndToolsOff(t *testing.T) {
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}
],"stream":true}`)
	msgs := []byte(`{"role":"assistant","content":null},{"role":"tool","tool_call_id":"a","content":"ok"}`)
	got, err := AppendMessages(nil, body, msgs)
	want := `{"model":"m","messages":[{"role":"user","content":"hi"},` + string(msgs) + "\n" + `],"stream":true}`
	if err != nil || string(got) != want {
		t.Fatalf("AppendMessages: %s, %v\nwant %s", got, err, want)
	}
	off, err := AppendToolsOff(nil, got)
	if err != nil || string(off) != want[:len(want)-1]+`,"tool_choice":"none"}` {
		t.Errorf("AppendToolsOff, no tool_choice: %s, %v", off, err)
	}
	off, err = AppendToolsOff(nil, []byte(`{"tool_choice":{"type":"function","function":{"name":"x"}},"messages":[]}`))
	if err != nil || string(off) != `{"tool_choice":"none","messages":[]}` {
		t.Errorf("AppendToolsOff, a forced tool: %s, %v", off, err)
	}
}
