package request

import (
	"encoding/json"
	"testing"
)

// TestAppendRetry checks the retry body byte for byte: the original body
// up to its last message, the failed turn, then the rest of the original
// (specs/004 §7.3.2: nothing else changes).
func TestAppendRetry(t *testing.T) {
	turnText := RetryTurn{Content: []byte("{\"status\":\"artifact_ready\",\"message\":\"done \u2014 \\\"x\\\"\"}"), Correction: "fix it"}
	wantText := `{"role":"assistant","content":"{\"status\":\"artifact_ready\",\"message\":\"done — \\\"x\\\"\"}"},` +
		`{"role":"user","content":"fix it"}`
	turnCalls := RetryTurn{
		Calls: []RetryCall{
			{ID: "call_1", Name: "get_weather", Arguments: []byte(`{"city":1}`), Result: "invalid"},
			{ID: "call_2", Name: "lookup", Arguments: []byte(`{}`), Result: "not run"},
		},
	}
	wantCalls := `{"role":"assistant","content":null,"tool_calls":[` +
		`{"id":"call_1","type":"function","function":{"name":"get_weather","arguments":"{\"city\":1}"}},` +
		`{"id":"call_2","type":"function","function":{"name":"lookup","arguments":"{}"}}]},` +
		`{"role":"tool","tool_call_id":"call_1","content":"invalid"},` +
		`{"role":"tool","tool_call_id":"call_2","content":"not run"}`

	tests := []struct {
		name       string
		before     string // the body up to the insertion point
		after      string // the rest
		turn       RetryTurn
		insertion  string
		emptyArray bool
	}{
		{"compact", `{"model":"m","messages":[{"role":"user","content":"hi"}`, `],"stream":true}`, turnText, wantText, false},
		{"pretty", "{\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hi\"}", "\n  ],\n  \"tools\": [],\n  \"stream\": true\n}", turnCalls, wantCalls, false},
		{"empty_messages", `{"messages":[`, ` ],"n":1}`, turnText, wantText, true},
		{"messages_not_last", `{"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"]"},{"role":"user","content":"a"}`, `],"x":{"messages":[]}}`, turnText, wantText, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := tt.before + tt.after
			got, err := AppendRetry([]byte("prefix:"), []byte(body), tt.turn)
			if err != nil {
				t.Fatal(err)
			}
			sep := ","
			if tt.emptyArray {
				sep = ""
			}
			want := "prefix:" + tt.before + sep + tt.insertion + tt.after
			if string(got) != want {
				t.Errorf("AppendRetry =\n%s\nwant\n%s", got, want)
			}
			if !json.Valid(got[len("prefix:"):]) {
				t.Errorf("the retry body is not valid JSON")
			}
		})
	}
}

// TestAppendRetryTwice checks that a second retry extends the first
// retry's body: the history of both failed turns is kept.
func TestAppendRetryTwice(t *testing.T) {
	body := []byte(`{"messages":[{"role":"user","content":"q"}]}`)
	first, err := AppendRetry(nil, body, RetryTurn{Content: []byte("a1"), Correction: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	second, err := AppendRetry(nil, first, RetryTurn{Content: []byte("a2"), Correction: "c2"})
	if err != nil {
		t.Fatal(err)
	}
	want := `{"messages":[{"role":"user","content":"q"},{"role":"assistant","content":"a1"},{"role":"user","content":"c1"},` +
		`{"role":"assistant","content":"a2"},{"role":"user","content":"c2"}]}`
	if string(second) != want {
		t.Errorf("second retry body =\n%s\nwant\n%s", second, want)
	}
}

func TestAppendRetryRefuses(t *testing.T) {
	for _, body := range []string{`{"messages":{}}`, `{}`, `[1]`, `not json`} {
		if _, err := AppendRetry(nil, []byte(body), RetryTurn{}); err == nil {
			t.Errorf("AppendRetry(%s) succeeded, want an error", body)
		}
	}
}
