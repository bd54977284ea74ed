package request

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseToolResponse(t *testing.T) {
	tests := []struct {
		name, body string
		want       ToolResponse
		err        string
	}{
		{"complete", `{"projectId":"p1","toolCallId":"call_1","toolName":"choose","optionId":"approve","enableThinking":true}`,
			ToolResponse{ProjectID: "p1", ToolCallID: "call_1", ToolName: "choose", OptionID: "approve", EnableThinking: true}, ""},
		{"no optionId", `{"projectId":"p1","toolCallId":"call_1","toolName":"choose"}`, ToolResponse{}, "optionId is required (a non-empty string)"},
		{"a number is no id", `{"projectId":"p1","toolCallId":7,"toolName":"choose","optionId":"a"}`, ToolResponse{}, "toolCallId is required (a non-empty string)"},
		{"not JSON", `projectId=p1`, ToolResponse{}, ""},
		{"an array", `[]`, ToolResponse{}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, e := ParseToolResponse([]byte(tt.body))
			if tt.want.ProjectID != "" {
				if e != nil || got != tt.want {
					t.Fatalf("got %+v, %v; want %+v", got, e, tt.want)
				}
				return
			}
			if e == nil || e.Status != 400 || e.Code != CodeMissingParams || tt.err != "" && e.Message != tt.err {
				t.Fatalf("got %+v, %+v; want 400 MISSING_PARAMS %q", got, e, tt.err)
			}
		})
	}
}

// TestAISDKApprovals: the approvals useChat sends back are read from the
// last assistant message's parts in state approval-responded, and only
// from there.
func TestAISDKApprovals(t *testing.T) {
	body := `{"id":"c","messages":[{"role":"user","parts":[{"type":"text","text":"delete a"}]},` +
		`{"id":"a1","role":"assistant","parts":[{"type":"step-start"},` +
		`{"type":"dynamic-tool","toolName":"delete_file","toolCallId":"call_1","state":"approval-responded","input":{"path":"a"},"providerExecuted":true,"approval":{"id":"apr_x_0","approved":true}},` +
		`{"type":"dynamic-tool","toolName":"delete_file","toolCallId":"call_2","state":"approval-responded","input":{"path":"b"},"approval":{"id":"apr_x_1","approved":false,"reason":" not b "}},` +
		`{"type":"dynamic-tool","toolName":"w","toolCallId":"call_3","state":"approval-requested","input":{},"approval":{"id":"apr_x_2"}}]}],"trigger":"submit-message"}`
	sh := &Shaper{Format: AISDK, Model: "m"}
	_, info, e := sh.Rewrite([]byte(body), "")
	if e != nil {
		t.Fatal(e)
	}
	want := []Approval{{ID: "apr_x_0", ToolCallID: "call_1", Approved: true}, {ID: "apr_x_1", ToolCallID: "call_2", Reason: "not b"}}
	if !reflect.DeepEqual(info.Approvals, want) {
		t.Errorf("approvals = %+v\nwant %+v", info.Approvals, want)
	}
	if info.ContinueMessage != "a1" {
		t.Errorf("continues %q, want the answered message a1", info.ContinueMessage)
	}
	// An id that is not a plain token is not repeated.
	if _, info, _ = sh.Rewrite([]byte(strings.Replace(body, `"id":"a1"`, `"id":"a 1<"`, 1)), ""); info.ContinueMessage != "" || len(info.Approvals) != 2 {
		t.Errorf("an odd id: continues %q, %d approvals", info.ContinueMessage, len(info.Approvals))
	}
	// Not the last message: history, not an answer.
	_, info, _ = sh.Rewrite([]byte(body[:len(body)-len(`],"trigger":"submit-message"}`)]+
		`,{"role":"user","parts":[{"type":"text","text":"next"}]}],"trigger":"submit-message"}`), "")
	if len(info.Approvals) != 0 || info.ContinueMessage != "" {
		t.Errorf("an earlier message's approvals were read: %+v %q", info.Approvals, info.ContinueMessage)
	}
}

// FuzzToolResponse: whatever a client posts to /tool-response, reading
// it never panics, and a body it accepts has every required id.
func FuzzToolResponse(f *testing.F) {
	f.Add([]byte(`{"projectId":"p1","toolCallId":"call_1","toolName":"choose","optionId":"approve","enableThinking":true}`))
	f.Add([]byte(`{"projectId":"\u0070","toolCallId":"c","toolName":"n","optionId":"o","projectId":""}`))
	f.Add([]byte(`{"projectId":1}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		tr, e := ParseToolResponse(body)
		if e != nil {
			if e.Status != 400 || e.Code != CodeMissingParams {
				t.Fatalf("error %+v", e)
			}
			return
		}
		if tr.ProjectID == "" || tr.ToolCallID == "" || tr.ToolName == "" || tr.OptionID == "" || len(tr.ProjectID) > 256 {
			t.Fatalf("accepted %+v", tr)
		}
	})
}

func TestParseImageSelect(t *testing.T) {
	tests := []struct {
		body string
		want ImageSelect
		err  bool
	}{
		{`{"blockId":"img-c1","selectedImageIds":["img-0","img-2"]}`, ImageSelect{BlockID: "img-c1", SelectedImageIDs: []string{"img-0", "img-2"}}, false},
		{`{"blockId":"img-c1","selectedImageIds":[],"actionId":"regenerate"}`, ImageSelect{BlockID: "img-c1", ActionID: "regenerate"}, false},
		{`{"blockId":"img-c1","selectedImageIds":[]}`, ImageSelect{}, true},
		{`{"blockId":"img-c1","selectedImageIds":"img-0"}`, ImageSelect{}, true},
		{`{"blockId":"img-c1","selectedImageIds":["img-0","img-0"]}`, ImageSelect{}, true},
		{`{"blockId":"img-c1","selectedImageIds":[0]}`, ImageSelect{}, true},
		{`{"selectedImageIds":["img-0"]}`, ImageSelect{}, true},
		{`[]`, ImageSelect{}, true},
	}
	for _, tt := range tests {
		got, e := ParseImageSelect([]byte(tt.body))
		if (e != nil) != tt.err || !tt.err && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %+v, %v", tt.body, got, e)
		}
		if e != nil && (e.Status != 400 || e.Code != CodeMissingParams) {
			t.Errorf("%s: error %+v", tt.body, e)
		}
	}
}

// FuzzImageSelect: whatever a client posts to /image-select, reading it
// never panics, and an accepted body has a block and distinct non-empty
// ids or an action.
func FuzzImageSelect(f *testing.F) {
	f.Add([]byte(`{"blockId":"img-c1","selectedImageIds":["img-0","img-2"],"actionId":"regenerate"}`))
	f.Add([]byte(`{"blockId":"b","selectedImageIds":["\u0000",1,null]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		is, e := ParseImageSelect(body)
		if e != nil {
			return
		}
		seen := map[string]bool{}
		for _, id := range is.SelectedImageIDs {
			if id == "" || seen[id] {
				t.Fatalf("accepted %+v", is)
			}
			seen[id] = true
		}
		if is.BlockID == "" || len(is.SelectedImageIDs) == 0 && is.ActionID == "" {
			t.Fatalf("accepted %+v", is)
		}
	})
}
