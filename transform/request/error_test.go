package request

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestRewriteErrors(t *testing.T) {
	tools := Shaper{Tools: [][]byte{[]byte(askUser)}}
	tests := []struct {
		name   string
		shaper Shaper
		body   string
		status int
		code   string
		// msg is a part of the message naming the problem.
		msg string
	}{
		{name: "openai_empty", body: ``, status: 400, code: CodeInvalidJSON, msg: "empty"},
		{name: "openai_not_json", body: `messages: []`, status: 400, code: CodeInvalidJSON, msg: "not valid JSON"},
		{name: "openai_truncated", body: `{"messages":[`, status: 400, code: CodeInvalidJSON, msg: "not valid JSON"},
		{name: "openai_trailing_garbage", body: `{"messages":[]} x`, status: 400, code: CodeInvalidJSON, msg: "not valid JSON"},
		{name: "openai_bom", body: "\ufeff{\"messages\":[]}", status: 400, code: CodeInvalidJSON, msg: "not valid JSON"},
		{name: "openai_array", body: `[{"messages":[]}]`, status: 400, code: CodeInvalidBody, msg: "got an array"},
		{name: "openai_string", body: `"hi"`, status: 400, code: CodeInvalidBody, msg: "got a string"},
		{name: "openai_null", body: ` null `, status: 400, code: CodeInvalidBody, msg: "got null"},
		{name: "openai_no_messages", body: `{"model":"x"}`, status: 400, code: CodeMissingMessages, msg: `no "messages" array`},
		{name: "openai_messages_null", body: `{"messages":null}`, status: 400, code: CodeInvalidMessages, msg: `"messages" must be an array, got null`},
		{name: "openai_messages_object", body: `{"messages":{"role":"user"}}`, status: 400, code: CodeInvalidMessages, msg: "got an object"},
		{name: "openai_messages_string", body: `{"messages":"hi"}`, status: 400, code: CodeInvalidMessages, msg: "got a string"},
		{name: "openai_duplicate_messages", body: `{"messages":[],"messages":[]}`, status: 400, code: CodeDuplicateKey, msg: `"messages"`},
		{name: "openai_duplicate_escaped_stream", body: `{"messages":[],"stream":true,"str\u0065am":false}`, status: 400, code: CodeDuplicateKey, msg: `"stream"`},
		{name: "openai_n_two", body: `{"messages":[],"n":2}`, status: 400, code: CodeUnsupportedN, msg: `"n" must be 1`},
		{name: "openai_n_string", body: `{"messages":[],"n":"2"}`, status: 400, code: CodeUnsupportedN, msg: `got "2"`},
		{name: "openai_tools_not_array", shaper: tools, body: `{"messages":[],"tools":{"a":1}}`, status: 400, code: CodeInvalidTools, msg: "got an object"},
		{name: "openai_bad_mode", shaper: Shaper{Mode: "insert"}, body: `{"messages":[]}`, status: 500, code: CodeBadConfig, msg: `"insert"`},
		{name: "format_makes_bad_body", shaper: Shaper{Format: brokenFormat}, body: `{"messages":[]}`, status: 500, code: CodeBadConfig, msg: "request format broken"},

		{name: "aisdk_not_json", shaper: Shaper{Format: AISDK}, body: `{`, status: 400, code: CodeInvalidJSON, msg: "not valid JSON"},
		{name: "aisdk_not_object", shaper: Shaper{Format: AISDK}, body: `[]`, status: 400, code: CodeInvalidBody, msg: "got an array"},
		{name: "aisdk_no_messages", shaper: Shaper{Format: AISDK}, body: `{"id":"c","trigger":"submit-message"}`, status: 400, code: CodeMissingMessages, msg: `no "messages" array`},
		{name: "aisdk_messages_not_array", shaper: Shaper{Format: AISDK}, body: `{"id":"c","messages":{}}`, status: 400, code: CodeInvalidMessages, msg: "got an object"},

		{name: "skillpet_not_json", shaper: Shaper{Format: Skillpet}, body: `projectId=1`, status: 400, code: CodeMissingParams, msg: "not valid JSON"},
		{name: "skillpet_empty", shaper: Shaper{Format: Skillpet}, body: ``, status: 400, code: CodeMissingParams, msg: "empty"},
		{name: "skillpet_not_object", shaper: Shaper{Format: Skillpet}, body: `"hi"`, status: 400, code: CodeMissingParams, msg: "JSON object"},
		{name: "skillpet_no_project", shaper: Shaper{Format: Skillpet}, body: `{"message":"hi"}`, status: 400, code: CodeMissingParams, msg: "projectId"},
		{name: "skillpet_empty_project", shaper: Shaper{Format: Skillpet}, body: `{"projectId":"","message":"hi"}`, status: 400, code: CodeMissingParams, msg: "projectId"},
		{name: "skillpet_number_project", shaper: Shaper{Format: Skillpet}, body: `{"projectId":12,"message":"hi"}`, status: 400, code: CodeMissingParams, msg: "projectId"},
		{name: "skillpet_no_message", shaper: Shaper{Format: Skillpet}, body: `{"projectId":"p"}`, status: 400, code: CodeMissingParams, msg: "message"},
		{name: "skillpet_empty_message", shaper: Shaper{Format: Skillpet}, body: `{"projectId":"p","message":""}`, status: 400, code: CodeMissingParams, msg: "message"},
		{name: "skillpet_message_not_string", shaper: Shaper{Format: Skillpet}, body: `{"projectId":"p","message":["hi"]}`, status: 400, code: CodeMissingParams, msg: "message"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, err := tt.shaper.Rewrite([]byte(tt.body), "P")
			if err == nil {
				t.Fatalf("Rewrite succeeded: %s", out)
			}
			if out != nil || !reflect.DeepEqual(info, Info{}) {
				t.Errorf("Rewrite returned a body or info with an error: %q %+v", out, info)
			}
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v is %T, want *Error", err, err)
			}
			if e.Status != tt.status || e.Code != tt.code {
				t.Errorf("error = %d %s, want %d %s", e.Status, e.Code, tt.status, tt.code)
			}
			if !strings.Contains(e.Message, tt.msg) {
				t.Errorf("message %q does not name the problem (want %q in it)", e.Message, tt.msg)
			}
		})
	}
}

func TestRewriteNilError(t *testing.T) {
	// A successful Rewrite must return a nil error interface, not a nil
	// *Error in a non-nil interface.
	s := Shaper{}
	if _, _, err := s.Rewrite([]byte(`{"messages":[]}`), ""); err != nil {
		t.Fatalf("err = %#v, want nil", err)
	}
}

func TestErrorBody(t *testing.T) {
	tests := []struct {
		name   string
		err    *Error
		format *Format
		want   string
	}{
		{
			name:   "openai",
			err:    badRequest(CodeMissingMessages, `request body has no "messages" array`),
			format: OpenAI,
			want:   `{"error":{"code":"missing_messages","message":"request body has no \"messages\" array"}}`,
		},
		{
			name:   "aisdk",
			err:    badRequest(CodeInvalidJSON, "request body is not valid JSON"),
			format: AISDK,
			want:   `{"error":{"code":"invalid_json","message":"request body is not valid JSON"}}`,
		},
		{
			name:   "skillpet_missing_params",
			err:    missingParams("", "projectId is required"),
			format: Skillpet,
			want:   `{"error":"MISSING_PARAMS","message":"projectId is required"}`,
		},
		{
			name:   "skillpet_too_large",
			err:    TooLarge(8_000_000),
			format: Skillpet,
			want:   `{"error":"REQUEST_TOO_LARGE","message":"request body is larger than 8000000 bytes (max_request_body)"}`,
		},
		{
			name:   "openai_too_large",
			err:    TooLarge(10),
			format: OpenAI,
			want:   `{"error":{"code":"request_too_large","message":"request body is larger than 10 bytes (max_request_body)"}}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.format.ErrorBody([]byte("prefix:"), tt.err)
			if string(got) != "prefix:"+tt.want {
				t.Errorf("ErrorBody = %s\nwant %s", got, tt.want)
			}
			if !json.Valid(got[len("prefix:"):]) {
				t.Errorf("ErrorBody output is not valid JSON: %s", got)
			}
		})
	}
	if e := TooLarge(1); e.Status != 413 {
		t.Errorf("TooLarge status = %d, want 413", e.Status)
	}
	if got, want := badRequest(CodeInvalidJSON, "x").Error(), "invalid_json: x"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
}

// brokenFormat is a request format whose converter has a bug: its output
// is not JSON.
var brokenFormat = &Format{Name: "broken", Convert: func([]byte) ([]byte, Info, *Error) {
	return []byte("{"), Info{}, nil
}}
