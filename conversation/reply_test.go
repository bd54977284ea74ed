package conversation

import (
	"encoding/json"
	"testing"
)

func TestReplyRecords(t *testing.T) {
	resource := `{"resourceType":"serp_queries","data":["a"],"fallbackText":"相关搜索：a"}`
	cases := []struct {
		name  string
		reply func() *Reply
		want  []string // the contents, in order
	}{
		{"nothing visible", func() *Reply { return &Reply{Status: StatusFailed} }, nil},
		{"text", func() *Reply { return reply(StatusComplete, "你好 \"x\"", nil) }, []string{`{"_t":"_pub_asst","text":"你好 \"x\""}`}},
		{"cut off", func() *Reply { return reply(StatusInterrupted, "hel", nil) }, []string{`{"_t":"_pub_asst","text":"hel","status":"interrupted"}`}},
		{"failed", func() *Reply { return reply(StatusFailed, "hel", nil) }, []string{`{"_t":"_pub_asst","text":"hel","status":"error"}`}},
		{
			// specs/002 §3.8 方案 A: parts keep text and resources in order.
			"resources among text",
			func() *Reply {
				r := &Reply{Status: StatusComplete}
				r.AddText("a")
				r.AddText("b")
				r.AddResource([]byte(resource))
				r.AddText("c")
				return r
			},
			[]string{`{"_t":"_pub_asst","text":"abc","parts":[{"type":"text","content":"ab"},{"type":"resource","resource":` + resource + `},{"type":"text","content":"c"}]}`},
		},
		{
			// specs/002 §4.2 tool_calls, §4.4 the ask_user tool message.
			"ask_user",
			func() *Reply {
				return reply(StatusComplete, "好", []ToolCall{askCall}, Form{ToolCallID: "call_1", Questions: json.RawMessage(questions)})
			},
			[]string{
				`{"_t":"_pub_asst","text":"好","tool_calls":[{"id":"call_1","type":"function","function":{"name":"ask_user","arguments":` + mustQuote(askArgs) + `}}]}`,
				`{"_t":"_pub_tool","toolCallId":"call_1","body":` + mustQuote("[ask_user] "+questions) + `}`,
			},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			recs := asst("a1", tc.reply())
			if len(recs) != len(tc.want) {
				t.Fatalf("%d records, want %d: %+v", len(recs), len(tc.want), recs)
			}
			for i, r := range recs {
				if r.Content != tc.want[i] {
					t.Errorf("record %d:\n got %s\nwant %s", i, r.Content, tc.want[i])
				}
				if !json.Valid([]byte(r.Content)) {
					t.Errorf("record %d is not JSON", i)
				}
			}
			if len(recs) > 0 && (recs[0].Role != RoleAssistant || recs[0].ID != "a1") {
				t.Errorf("first record %+v", recs[0])
			}
			for _, r := range recs[min(1, len(recs)):] {
				if r.Role != RoleTool || r.ID == "a1" {
					t.Errorf("tool record %+v", r)
				}
			}
		})
	}
}

func mustQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestRecordRoundTrip(t *testing.T) {
	r := Record{ID: "m1", Role: RoleUser, Content: "<b>&\n\"", Upstream: json.RawMessage(`[{"type":"text","text":"x"}]`), Time: 42}
	line, err := AppendRecord(nil, r)
	if err != nil {
		t.Fatal(err)
	}
	if string(line) != `{"id":"m1","role":"user","content":"<b>&\n\"","upstream":[{"type":"text","text":"x"}],"time":42}` {
		t.Errorf("encoded %s", line)
	}
	back, err := DecodeRecord(line)
	if err != nil || back.ID != r.ID || back.Content != r.Content || string(back.Upstream) != string(r.Upstream) || back.Time != 42 {
		t.Errorf("decoded %+v, %v", back, err)
	}
	for _, bad := range []string{`{"id":"m1","role":"system","content":""}`, `{"role":"user"}`, `{"id":`, `[]`} {
		if _, err := DecodeRecord([]byte(bad)); err == nil {
			t.Errorf("DecodeRecord(%s) accepted it", bad)
		}
	}
}

func TestNewKey(t *testing.T) {
	k := NewKey("Bearer secret", "agent", "p1")
	if k != NewKey("Bearer secret", "agent", "p1") {
		t.Fatal("not deterministic")
	}
	for _, other := range []Key{
		NewKey("Bearer secret2", "agent", "p1"),
		NewKey("Bearer secret", "agent", "p2"),
		NewKey("Bearer secret", "agen", "tp1"), // framed: no concatenation collision
		NewKey("Bearer secret", "other", "p1"),
	} {
		if other.Conversation == k.Conversation && other.Scope == k.Scope {
			t.Errorf("%v collides with %v", other, k)
		}
	}
	if len(k.Scope) != 64 || len(k.Conversation) != 64 {
		t.Errorf("key %v is not two SHA-256 digests", k)
	}
}
