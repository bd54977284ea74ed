package request

import (
	"reflect"
	"slices"
	"testing"
)

func TestRewriteAISDK(t *testing.T) {
	base := Shaper{Format: AISDK, Model: "m"}
	withMode := func(mode string) Shaper { s := base; s.Mode = mode; return s }
	tests := []struct {
		name   string
		shaper Shaper
		body   string
		msgs   []string
		info   Info
	}{
		{
			name:   "text",
			shaper: base,
			body: `{"id":"chat-1","messages":[{"id":"m1","role":"user","parts":[{"type":"text","text":"Hello"}]}],` +
				`"trigger":"submit-message"}`,
			msgs: []string{"system:P", "user:Hello"},
			info: Info{Stream: true, Model: "m"},
		},
		{
			name:   "text_parts_joined",
			shaper: base,
			body: `{"id":"c","messages":[{"id":"a1","role":"assistant","parts":[{"type":"step-start"},` +
				`{"type":"reasoning","text":"hmm","state":"done"},{"type":"text","text":"Part one. ","state":"done"},` +
				`{"type":"tool-search","toolCallId":"t1","state":"input-available","input":{}},` +
				`{"type":"text","text":"caf\u00e9 \"two\"","state":"done"}]}],"trigger":"submit-message"}`,
			msgs: []string{"system:P", `assistant:Part one. café "two"`},
			info: Info{Stream: true, Model: "m"},
		},
		{
			// What useChat sends back after a turn whose first round ran
			// two of the gateway's tools (CONTRACT.md §12): the assistant
			// message as readUIMessageStream built it from the aisdk
			// stream, steps split by step-start.
			name:   "server_rounds",
			shaper: base,
			body: `{"id":"c","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"What is Caddy?"}]},` +
				`{"id":"msg-1","role":"assistant","parts":[` +
				`{"type":"reasoning","text":"Need data.","state":"done"},{"type":"text","text":"Let me look.","state":"done"},` +
				`{"type":"dynamic-tool","toolName":"search_knowledge","toolCallId":"call_1","state":"output-available",` +
				`"input":{"query":"caddy"},"output":"Caddy is a web server.","providerExecuted":true,"title":"知识检索"},` +
				`{"type":"data-tool-progress","id":"call_1","data":{"toolCallId":"call_1","toolName":"search_knowledge","progress":2,"total":3,"message":"reading"}},` +
				`{"type":"dynamic-tool","toolName":"get_weather","toolCallId":"call_2","state":"output-error",` +
				`"input":{"city":"Paris"},"errorText":"get_weather timed out after 30s","providerExecuted":true,"title":"get_weather"},` +
				`{"type":"step-start"},{"type":"reasoning","text":"Got it.","state":"done"},` +
				`{"type":"text","text":"Caddy is a web server.","state":"done"}]},` +
				`{"id":"u2","role":"user","parts":[{"type":"text","text":"And nginx?"}]}],"trigger":"submit-message"}`,
			msgs: []string{"system:P", "user:What is Caddy?",
				`assistant:Let me look.|call_1 search_knowledge {"query":"caddy"}|call_2 get_weather {"city":"Paris"}`,
				"tool:call_1:Caddy is a web server.", "tool:call_2:get_weather timed out after 30s",
				"assistant:Caddy is a web server.", "user:And nginx?"},
			info: Info{Stream: true, Model: "m"},
		},
		{
			// A mixed turn: the gateway's call ran, the page ran its own
			// (tool-client_fn, an object output) and sends the outputs
			// back; a call still waiting for its input is left out, and
			// text after the results without a step-start opens a step.
			name:   "client_and_server_tools",
			shaper: base,
			body: `{"id":"c","messages":[{"id":"a","role":"assistant","parts":[{"type":"step-start"},` +
				`{"type":"dynamic-tool","toolName":"get_weather","toolCallId":"call_s","state":"output-available",` +
				`"input":{"city":"Oslo"},"output":"-3°C","providerExecuted":true},` +
				`{"type":"tool-client_fn","toolCallId":"call_c","state":"output-available","input":{"x":1},"output":{"ok":true,"n":[1, 2]}},` +
				`{"type":"tool-pending","toolCallId":"call_p","state":"input-available","input":{}},` +
				`{"type":"tool-denied","toolCallId":"call_d","state":"output-denied","input":{"a":"b"},"approval":{"id":"ap","approved":false,"reason":"not now"}},` +
				`{"type":"text","text":"Done."}]}],"trigger":"submit-message"}`,
			msgs: []string{"system:P",
				`assistant:|call_s get_weather {"city":"Oslo"}|call_c client_fn {"x":1}|call_d denied {"a":"b"}`,
				"tool:call_s:-3°C", `tool:call_c:{"ok":true,"n":[1,2]}`, "tool:call_d:not now",
				"assistant:Done."},
			info: Info{Stream: true, Model: "m"},
		},
		{
			name:   "image_parts",
			shaper: base,
			body: `{"id":"c","messages":[{"id":"u1","role":"user","parts":[` +
				`{"type":"text","text":"What is "},{"type":"text","text":"this?"},` +
				`{"type":"file","mediaType":"image/png","filename":"a.png","url":"data:image/png;base64,iVBO"},` +
				`{"type":"file","mediaType":"application/pdf","url":"https://x/a.pdf"},` +
				`{"type":"file","mediaType":"IMAGE/JPEG","url":"https://x/b.jpg"},` +
				`{"type":"text","text":"Compare."}]}],"trigger":"submit-message"}`,
			msgs: []string{"system:P", `user:[{"type":"text","text":"What is this?"},` +
				`{"type":"image_url","image_url":{"url":"data:image/png;base64,iVBO"}},` +
				`{"type":"image_url","image_url":{"url":"https://x/b.jpg"}},` +
				`{"type":"text","text":"Compare."}]`},
			info: Info{Stream: true, Model: "m"},
		},
		{
			name:   "content_without_parts",
			shaper: base,
			body:   `{"id":"c","messages":[{"role":"user","content":"caf\u00e9"},{"role":"assistant","content":""},{"role":"user","parts":[],"content":"x"}]}`,
			msgs:   []string{"system:P", "user:café"},
			info:   Info{Stream: true, Model: "m"},
		},
		{
			name:   "image_only",
			shaper: base,
			body:   `{"id":"c","messages":[{"role":"user","parts":[{"type":"file","mediaType":"image/webp","url":"https://x/c.webp"}]}]}`,
			msgs:   []string{"system:P", `user:[{"type":"image_url","image_url":{"url":"https://x/c.webp"}}]`},
			info:   Info{Stream: true, Model: "m"},
		},
		{
			name:   "dropped_parts_and_empty_messages",
			shaper: base,
			body: `{"id":"c","messages":[` +
				`{"id":"1","role":"user","parts":[{"type":"text","text":"q"}]},` +
				`{"id":"2","role":"assistant","parts":[{"type":"reasoning","text":"r"},{"type":"tool-ask_user","toolCallId":"t","state":"input-available","input":{}},` +
				`{"type":"data-phase","data":{"id":1}},{"type":"source-url","sourceId":"s","url":"https://x"},{"type":"dynamic-tool","toolName":"x"}]},` +
				`{"id":"3","role":"assistant","parts":[{"type":"text","text":""}]},` +
				`{"id":"4","role":"assistant","parts":[]},` +
				`{"id":"5","role":"assistant"},` +
				`{"id":"6","role":"tool","parts":[{"type":"text","text":"t"}]},` +
				`{"id":"7","parts":[{"type":"text","text":"no role"}]},` +
				`"not an object",` +
				`{"id":"8","role":"user","parts":[{"type":"file","mediaType":"text/plain","url":"https://x/a.txt"},{"type":"text","text":"a"}]}` +
				`],"trigger":"submit-message"}`,
			msgs: []string{"system:P", "user:q", "user:a"},
			info: Info{Stream: true, Model: "m"},
		},
		{
			name:   "no_messages_left",
			shaper: base,
			body:   `{"id":"c","messages":[],"trigger":"submit-message"}`,
			msgs:   []string{"system:P"},
			info:   Info{Stream: true, Model: "m"},
		},
		{
			name:   "system_message_replaced",
			shaper: withMode(ModeReplace),
			body: `{"id":"c","messages":[{"role":"system","parts":[{"type":"text","text":"client system"}]},` +
				`{"role":"user","parts":[{"type":"text","text":"u"}]}]}`,
			msgs: []string{"system:P", "user:u"},
			info: Info{Stream: true, Model: "m"},
		},
		{
			name:   "system_message_appended_after",
			shaper: withMode(ModeAppend),
			body: `{"id":"c","messages":[{"role":"system","parts":[{"type":"text","text":"client system"}]},` +
				`{"role":"user","parts":[{"type":"text","text":"u"}]}]}`,
			msgs: []string{"system:client system", "system:P", "user:u"},
			info: Info{Stream: true, Model: "m"},
		},
		{
			name:   "extra_body_members_not_forwarded",
			shaper: Shaper{Format: AISDK, Tools: [][]byte{[]byte(askUser)}, ToolChoice: "auto"},
			body: `{"id":"c","messages":[{"role":"user","parts":[{"type":"text","text":"u"}]}],` +
				`"trigger":"regenerate-message","messageId":"m9","model":"client-model","temperature":2}`,
			msgs: []string{"system:P", "user:u"},
			info: Info{Stream: true},
		},
		{
			name:   "id_not_a_string",
			shaper: base,
			body:   `{"id":5,"messages":[]}`,
			msgs:   []string{"system:P"},
			info:   Info{Stream: true, Model: "m"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, err := tt.shaper.Rewrite([]byte(tt.body), "P")
			if err != nil {
				t.Fatalf("Rewrite: %v", err)
			}
			u := checkUpstream(t, &tt.shaper, out)
			if got := roleContents(t, u.Messages); !slices.Equal(got, tt.msgs) {
				t.Errorf("messages = %q\n want %q", got, tt.msgs)
			}
			if !reflect.DeepEqual(info, tt.info) {
				t.Errorf("info = %+v, want %+v", info, tt.info)
			}
			for _, k := range []string{"id", "trigger", "messageId", "temperature"} {
				if _, ok := u.top[k]; ok {
					t.Errorf("%q was forwarded upstream", k)
				}
			}
			golden(t, "aisdk/"+tt.name, out)
		})
	}
}

func TestRewriteSkillpet(t *testing.T) {
	base := Shaper{Format: Skillpet, Model: "m", Tools: [][]byte{[]byte(askUser)}}
	tests := []struct {
		name string
		body string
		msgs []string
		info Info
	}{
		{
			name: "minimal",
			body: `{"projectId":"p1","message":"你好\n"}`,
			msgs: []string{"system:P", "user:你好\n"},
			info: Info{Stream: true, Model: "m", Facts: SkillpetFacts{ConversationID: "p1", NoThinking: true}},
		},
		{
			name: "conversation_id",
			body: `{"projectId":"p1","message":"hi","conversationId":"conv_123","enableSearch":true}`,
			msgs: []string{"system:P", "user:hi"},
			info: Info{Stream: true, Model: "m", Facts: SkillpetFacts{ConversationID: "conv_123", NoThinking: true, Search: true}},
		},
		{
			name: "thinking_off",
			body: `{"projectId":"p1","message":"hi","enableThinking":false}`,
			msgs: []string{"system:P", "user:hi"},
			info: Info{Stream: true, Model: "m", Facts: SkillpetFacts{ConversationID: "p1", NoThinking: true}},
		},
		{
			name: "thinking_on",
			body: `{"projectId":"p1","message":"hi","enableThinking":true}`,
			msgs: []string{"system:P", "user:hi"},
			info: Info{Stream: true, Model: "m", Facts: SkillpetFacts{ConversationID: "p1"}},
		},
		{
			name: "thinking_falsy_not_false", // off: only true turns it on (specs/002 §3.2)
			body: `{"projectId":"p1","message":"hi","enableThinking":0}`,
			msgs: []string{"system:P", "user:hi"},
			info: Info{Stream: true, Model: "m", Facts: SkillpetFacts{ConversationID: "p1", NoThinking: true}},
		},
		{
			name: "attachments",
			body: `{"projectId":"p1","message":"look \u0022here\u0022","attachments":[` +
				`{"id":"a1","name":"photo.png","size":10,"type":"image/png","url":"https://x/photo.png"},` +
				`{"id":"a2","name":"report.pdf","size":20,"type":"application/pdf","url":"https://x/report.pdf","processedData":{"text":"…"}},` +
				`{"id":"a3","name":"notes.txt","type":"text/plain"},` +
				`{"id":"a4"}]}`,
			msgs: []string{"system:P", `user:[{"type":"text","text":"look \u0022here\u0022\n\nAttachments:\n- report.pdf (application/pdf): https://x/report.pdf\n- notes.txt (text/plain)"},` +
				`{"type":"image_url","image_url":{"url":"https://x/photo.png"}}]`},
			info: Info{Stream: true, Model: "m", Facts: SkillpetFacts{ConversationID: "p1", NoThinking: true}},
		},
		{
			name: "attachment_not_image_only",
			body: `{"projectId":"p1","message":"see","attachments":[{"name":"a.pdf","type":"application/pdf","url":"https://x/a.pdf"}]}`,
			msgs: []string{"system:P", "user:see\n\nAttachments:\n- a.pdf (application/pdf): https://x/a.pdf"},
			info: Info{Stream: true, Model: "m", Facts: SkillpetFacts{ConversationID: "p1", NoThinking: true}},
		},
		{
			name: "attachments_not_array",
			body: `{"projectId":"p1","message":"see","attachments":"nope"}`,
			msgs: []string{"system:P", "user:see"},
			info: Info{Stream: true, Model: "m", Facts: SkillpetFacts{ConversationID: "p1", NoThinking: true}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, info, err := base.Rewrite([]byte(tt.body), "P")
			if err != nil {
				t.Fatalf("Rewrite: %v", err)
			}
			u := checkUpstream(t, &base, out)
			if got := roleContents(t, u.Messages); !slices.Equal(got, tt.msgs) {
				t.Errorf("messages = %q\n want %q", got, tt.msgs)
			}
			if len(u.Tools) != 1 {
				t.Errorf("tools = %s, want the configured ask_user", u.Tools)
			}
			if !reflect.DeepEqual(info, tt.info) {
				t.Errorf("info = %+v, want %+v", info, tt.info)
			}
			for _, k := range []string{"projectId", "message", "enableThinking", "enableSearch", "attachments", "conversationId"} {
				if _, ok := u.top[k]; ok {
					t.Errorf("%q was forwarded upstream", k)
				}
			}
			golden(t, "skillpet/"+tt.name, out)
		})
	}
}
