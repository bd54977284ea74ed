package conversation

import (
	"encoding/json"
	"strconv"
	"testing"
)

func user(id, text string) Record { return Record{ID: id, Role: RoleUser, Content: text} }

func asst(id string, r *Reply) []Record {
	n := 0
	return r.Records(id, func() string { n++; return id + "_t" + strconv.Itoa(n) }, 0)
}

func reply(status Status, text string, calls []ToolCall, forms ...Form) *Reply {
	r := &Reply{Status: status}
	r.AddText(text)
	for _, c := range calls {
		r.AddCall(c)
	}
	for _, f := range forms {
		r.AddForm(f)
	}
	return r
}

const questions = `[{"id":"genre","prompt":"题材？","options":[{"id":"opt-0","label":"玄幻"}]}]`

var askCall = ToolCall{ID: "call_1", Name: AskUserTool, Arguments: askArgs}

func cat(parts ...[]Record) []Record {
	var out []Record
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

func TestMessages(t *testing.T) {
	form := Form{ToolCallID: "call_1", Questions: json.RawMessage(questions)}
	cases := []struct {
		name    string
		history []Record
		next    Record
		want    string // the messages, as JSON array elements
	}{
		{
			name: "first turn",
			next: user("u1", "hi"),
			want: `{"role":"user","content":"hi"}`,
		},
		{
			name:    "a plain exchange",
			history: cat([]Record{user("u1", "hi")}, asst("a1", reply(StatusComplete, "hello", nil))),
			next:    user("u2", "more"),
			want:    `{"role":"user","content":"hi"},{"role":"assistant","content":"hello"},{"role":"user","content":"more"}`,
		},
		{
			// specs/002 §3.4: the component sends the formatted answers as
			// the next message; they answer the call.
			name:    "ask_user answered by the next message",
			history: cat([]Record{user("u1", "写个故事")}, asst("a1", reply(StatusComplete, "好的。", []ToolCall{askCall}, form))),
			next:    user("u2", "题材：玄幻"),
			want: `{"role":"user","content":"写个故事"},` +
				`{"role":"assistant","content":"好的。","tool_calls":[{"id":"call_1","type":"function","function":{"name":"ask_user","arguments":` + strconv.Quote(askArgs) + `}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"题材：玄幻"}`,
		},
		{
			name: "ask_user answered, then a later turn",
			history: cat([]Record{user("u1", "写个故事")}, asst("a1", reply(StatusComplete, "", []ToolCall{askCall}, form)),
				[]Record{user("u2", "题材：玄幻")}, asst("a2", reply(StatusComplete, "开始写。", nil))),
			next: user("u3", "继续"),
			want: `{"role":"user","content":"写个故事"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"ask_user","arguments":` + strconv.Quote(askArgs) + `}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"题材：玄幻"},` +
				`{"role":"assistant","content":"开始写。"},{"role":"user","content":"继续"}`,
		},
		{
			name:    "a tool llmstream does not run",
			history: cat([]Record{user("u1", "search")}, asst("a1", reply(StatusComplete, "", []ToolCall{{ID: "c9", Name: "search", Arguments: "{}"}}))),
			next:    user("u2", "well?"),
			want: `{"role":"user","content":"search"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"c9","type":"function","function":{"name":"search","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"c9","content":` + strconv.Quote(NoteToolNotRun) + `},{"role":"user","content":"well?"}`,
		},
		{
			name:    "a user turn without a reply (the stream failed, or its server died)",
			history: []Record{user("u1", "hi")},
			next:    user("u2", "hi again"),
			want:    `{"role":"user","content":"hi"},{"role":"assistant","content":` + strconv.Quote(NoteNoReply) + `},{"role":"user","content":"hi again"}`,
		},
		{
			name:    "a reply cut off",
			history: cat([]Record{user("u1", "hi")}, asst("a1", reply(StatusInterrupted, "hel", nil))),
			next:    user("u2", "go on"),
			want:    `{"role":"user","content":"hi"},{"role":"assistant","content":` + strconv.Quote("hel\n\n"+NoteCutOff) + `},{"role":"user","content":"go on"}`,
		},
		{
			name:    "an ask_user call cut off before its form",
			history: cat([]Record{user("u1", "hi")}, asst("a1", reply(StatusFailed, "", []ToolCall{askCall}))),
			next:    user("u2", "hello?"),
			want: `{"role":"user","content":"hi"},` +
				`{"role":"assistant","content":` + strconv.Quote(NoteCutOff) + `,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"ask_user","arguments":` + strconv.Quote(askArgs) + `}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":` + strconv.Quote(NoteFormNotShown) + `},{"role":"user","content":"hello?"}`,
		},
		{
			name: "a clarify form no call asked",
			history: cat([]Record{user("u1", "hi")},
				asst("a1", reply(StatusComplete, "", nil, Form{ToolCallID: "form_x", Questions: json.RawMessage(questions)}))),
			next: user("u2", "玄幻"),
			want: `{"role":"user","content":"hi"},{"role":"assistant","content":` + strconv.Quote(AskUserPrefix+questions) + `},{"role":"user","content":"玄幻"}`,
		},
		{
			name:    "an answer with attachments stays a user message",
			history: cat([]Record{user("u1", "hi")}, asst("a1", reply(StatusComplete, "", []ToolCall{askCall}, form))),
			next:    Record{ID: "u2", Role: RoleUser, Content: "see", Upstream: json.RawMessage(`[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]`)},
			want: `{"role":"user","content":"hi"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"ask_user","arguments":` + strconv.Quote(askArgs) + `}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":` + strconv.Quote(NoteAnsweredBelow) + `},` +
				`{"role":"user","content":[{"type":"text","text":"see"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]}`,
		},
		{
			name: "two forms in one reply",
			history: cat([]Record{user("u1", "hi")}, asst("a1", reply(StatusComplete, "", []ToolCall{askCall, {ID: "call_2", Name: AskUserTool, Arguments: "{}"}},
				form, Form{ToolCallID: "call_2", Questions: json.RawMessage(`[]`)}))),
			next: user("u2", "answers"),
			want: `{"role":"user","content":"hi"},` +
				`{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"ask_user","arguments":` + strconv.Quote(askArgs) + `}},{"id":"call_2","type":"function","function":{"name":"ask_user","arguments":"{}"}}]},` +
				`{"role":"tool","tool_call_id":"call_1","content":"answers"},{"role":"tool","tool_call_id":"call_2","content":` + strconv.Quote(NoteAnsweredWithFirst) + `}`,
		},
		{
			name:    "plain-text assistant content (another backend's history)",
			history: []Record{user("u1", "hi"), {ID: "a1", Role: RoleAssistant, Content: "plain"}},
			next:    user("u2", "ok"),
			want:    `{"role":"user","content":"hi"},{"role":"assistant","content":"plain"},{"role":"user","content":"ok"}`,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, sent := Messages(nil, tc.history, tc.next, Budget{})
			if string(got) != tc.want {
				t.Errorf("got\n%s\nwant\n%s", got, tc.want)
			}
			msgs, err := decodeMessages(got)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkStrict(msgs); err != nil {
				t.Error(err)
			}
			if sent.Messages != len(msgs) || sent.Dropped != 0 {
				t.Errorf("sent = %+v, want %d messages", sent, len(msgs))
			}
		})
	}
}

func TestMessagesBudget(t *testing.T) {
	form := Form{ToolCallID: "call_1", Questions: json.RawMessage(questions)}
	// Five exchanges; the third asks a form, which the fourth answers.
	var history []Record
	for i := 1; i <= 5; i++ {
		n := strconv.Itoa(i)
		history = append(history, user("u"+n, "question "+n))
		if i == 3 {
			history = append(history, asst("a"+n, reply(StatusComplete, "form", []ToolCall{askCall}, form))...)
		} else {
			history = append(history, asst("a"+n, reply(StatusComplete, "answer "+n, nil))...)
		}
	}
	next := user("u6", "question 6")
	all, _ := Messages(nil, history, next, Budget{})
	allMsgs, _ := decodeMessages(all)
	// u1 a1 u2 a2 u3 a3 t3(u4) a4 u5 a5 u6: 11 messages.
	if len(allMsgs) != 11 {
		t.Fatalf("unbounded: %d messages, want 11: %s", len(allMsgs), all)
	}
	cases := []struct {
		name      string
		budget    Budget
		wantFirst string // the first message's content
		wantSent  int
	}{
		{"messages 11", Budget{Messages: 11}, `"question 1"`, 11},
		{"messages 10", Budget{Messages: 10}, `"question 2"`, 9},
		{"messages 8", Budget{Messages: 8}, `"question 3"`, 7},
		{"messages 6: the answered form goes with its question", Budget{Messages: 6}, `"question 5"`, 3},
		{"messages 1: the last exchange is sent whole", Budget{Messages: 1}, `"question 6"`, 1},
		{"bytes: all", Budget{Bytes: len(all) + 1}, `"question 1"`, 11},
		{"bytes: one short", Budget{Bytes: len(all)}, `"question 2"`, 9},
		{"bytes 1", Budget{Bytes: 1}, `"question 6"`, 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, sent := Messages(nil, history, next, tc.budget)
			msgs, err := decodeMessages(got)
			if err != nil {
				t.Fatal(err)
			}
			if err := checkStrict(msgs); err != nil {
				t.Error(err)
			}
			if len(msgs) != tc.wantSent || sent.Messages != tc.wantSent || sent.Dropped != 11-tc.wantSent {
				t.Errorf("sent %d (%+v), want %d", len(msgs), sent, tc.wantSent)
			}
			if string(msgs[0].Content) != tc.wantFirst || msgs[0].Role != "user" {
				t.Errorf("first message %s %s, want user %s", msgs[0].Role, msgs[0].Content, tc.wantFirst)
			}
			if tc.budget.Bytes > 0 && len(got) > tc.budget.Bytes && sent.Messages > 1 {
				t.Errorf("%d bytes sent, budget %d", len(got), tc.budget.Bytes)
			}
		})
	}
}

// FuzzMessages builds histories from the fuzzer's bytes, one record per
// byte (user, replies complete or not with or without calls and forms,
// stray tool records, plain-text content), and checks that the rebuilt
// request is valid for a strict server whatever the history and budget.
func FuzzMessages(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 0}, 0, 0)
	f.Add([]byte{0, 3, 0, 4, 0, 5, 6, 0}, 3, 0)
	f.Add([]byte{0, 0, 7, 1, 2, 3, 4, 5}, 0, 100)
	f.Fuzz(func(t *testing.T, script []byte, maxMessages, maxBytes int) {
		if len(script) > 64 {
			script = script[:64]
		}
		var history []Record
		for i, op := range script {
			id := "r" + strconv.Itoa(i)
			c := ToolCall{ID: "call_" + strconv.Itoa(i%3), Name: AskUserTool, Arguments: askArgs}
			other := ToolCall{ID: "call_o" + strconv.Itoa(i), Name: "search", Arguments: "{}"}
			form := Form{ToolCallID: c.ID, Questions: json.RawMessage(questions)}
			switch op % 9 {
			case 0:
				history = append(history, user(id, "m"+id))
			case 1:
				history = append(history, asst(id, reply(StatusComplete, "t", nil))...)
			case 2:
				history = append(history, asst(id, reply(StatusComplete, "", []ToolCall{c}, form))...)
			case 3:
				history = append(history, asst(id, reply(StatusInterrupted, "", []ToolCall{c, other}))...)
			case 4:
				history = append(history, asst(id, reply(StatusFailed, "x", []ToolCall{other}, Form{ToolCallID: "form_z", Questions: json.RawMessage(questions)}))...)
			case 5:
				history = append(history, Record{ID: id, Role: RoleTool, Content: string(AppendToolContent(nil, "call_0", "stray"))})
			case 6:
				history = append(history, Record{ID: id, Role: RoleAssistant, Content: "plain {"})
			case 7:
				history = append(history, Record{ID: id, Role: RoleUser, Content: "img", Upstream: json.RawMessage(`[{"type":"text","text":"img"}]`)})
			case 8:
				r := &Reply{Status: StatusComplete}
				r.AddResource([]byte(`{"resourceType":"x","data":[]}`))
				history = append(history, asst(id, r)...)
			}
		}
		got, sent := Messages(nil, history, user("next", "next"), Budget{Messages: maxMessages % 50, Bytes: maxBytes % 4000})
		msgs, err := decodeMessages(got)
		if err != nil {
			t.Fatal(err)
		}
		if sent.Messages != len(msgs) {
			t.Fatalf("Sent.Messages = %d, %d written", sent.Messages, len(msgs))
		}
		// The leading messages of a history that opens with a reply are
		// not a strict request's concern: what matters is from the first
		// user message on, which is where the budget cuts.
		first := 0
		for first < len(msgs) && msgs[first].Role != "user" {
			first++
		}
		if first > 0 && len(history) > 0 && history[0].Role == RoleUser {
			t.Fatalf("a history that opens with a user message gave %q first", msgs[0].Role)
		}
		if first == len(msgs) {
			first = 0 // no user message at all: a reply and its answered calls
		}
		if err := checkStrict(msgs[first:]); err != nil {
			t.Fatalf("%v\n%s", err, got)
		}
	})
}
