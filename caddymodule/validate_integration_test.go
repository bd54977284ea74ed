package caddymodule

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"
)

// TestValidateThroughCaddy runs the rule × outcome table through a real
// Caddy: llm_stream with validate in front of reverse_proxy and llm_mock,
// whose reply_file and tool_calls_file rotate per request and whose record
// keeps what llm_stream sent (GET …/llm_mock/requests). The client, an
// openai stream, gets only the validated reply; the upstream is called
// once per attempt; each retry request is the previous one with the
// failed turn appended.
func TestValidateThroughCaddy(t *testing.T) {
	if testing.Short() {
		t.Skip("caddytest integration test")
	}
	type vcase struct {
		name    string
		options string // more llm_stream options
		mock    string // the llm_mock settings
		header  string // X-Expected-Mode
		calls   int
		// content is what the client's deltas say; code its error code
		// ("" for a completed stream); hidden never reaches it.
		content, code, hidden string
		// toolArgs are the arguments of the one tool call the client
		// gets, "" for none.
		toolArgs string
	}
	const td = "testdata/validate/"
	cases := []vcase{
		{name: "pass", mock: "reply_file " + td + "answer.json", calls: 1,
			content: "I have not made the slides yet: which class are they for?"},
		{name: "retry_then_pass", mock: "reply_file " + td + "artifact_claim.json\n\t\treply_file " + td + "answer.json", calls: 2,
			content: "I have not made the slides yet: which class are they for?", hidden: "SAID-NOT-DONE"},
		{name: "retry_then_fail_hard", mock: "reply_file " + td + "artifact_claim.json\n\t\treply_file " + td + "clarify_empty.json", calls: 2,
			code: "validation_failed", hidden: "SAID-NOT-DONE"},
		{name: "retry_then_accept_soft", header: "artifact", mock: "reply_file " + td + "answer_first.json\n\t\treply_file " + td + "answer.json", calls: 2,
			content: "I have not made the slides yet: which class are they for?", hidden: "FIRST-TRY"},
		{name: "tool_args_retry_then_pass", options: "tools ../examples/tools/search.json",
			mock: "reply_file " + td + "intro.txt\n\t\ttool_calls_file " + td + "call_invalid.json\n\t\ttool_calls_file " + td + "call_valid.json", calls: 2,
			content: "Let me look that up.", toolArgs: `{"query":"slides"}`, hidden: "BAD-ARGS"},
	}
	_, port, _ := net.SplitHostPort(freePort(t))
	addr := "localhost:" + port
	var site strings.Builder
	for _, c := range cases {
		format, validate := "final_result", "validate {\n\t\t\t\tartifact_tools generate_pptx\n\t\t\t\texpected_mode {http.request.header.X-Expected-Mode}\n\t\t\t}"
		if c.toolArgs != "" {
			format, validate = "text", "validate"
		}
		fmt.Fprintf(&site, `	handle /v/%[1]s/* {
		llm_stream {
			protocol openai
			format %[2]s
			heartbeat 0
			%[3]s
			%[6]s
		}
		rewrite * /m/%[1]s/v1/chat/completions
		reverse_proxy %[4]s {
			flush_interval -1
		}
	}
	handle /m/%[1]s/* {
		llm_mock {
			%[5]s
			record
			chunk_size 7
			interval 0
		}
	}
`, c.name, format, c.options, addr, c.mock, validate)
	}
	caddytest.NewTester(t).InitServer(caddyGlobal("")+"\nhttp://"+addr+" {\n"+site.String()+"}\n", "caddyfile")
	client := newClient(t, "h1")
	const request = `{"model":"m","stream":true,"messages":[{"role":"user","content":"make slides"}]}`

	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), requestTimeout)
			defer cancel()
			h := http.Header{}
			if c.header != "" {
				h.Set("X-Expected-Mode", c.header)
			}
			resp, err := post(ctx, client, "http://"+addr+"/v/"+c.name+"/", request, h)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if c.hidden != "" && strings.Contains(string(raw), c.hidden) {
				t.Errorf("the client was shown the refused reply:\n%s", raw)
			}
			events, err := parseSSE(string(raw))
			if err != nil {
				t.Fatal(err)
			}
			var content, code, args strings.Builder
			for _, ev := range events {
				if ev.Data == "[DONE]" {
					continue
				}
				var chunk struct {
					Choices []struct {
						Delta struct {
							Content   string
							ToolCalls []struct {
								Function struct{ Arguments string } `json:"function"`
							} `json:"tool_calls"`
						}
					}
					Error *struct{ Code string }
				}
				if err := json.Unmarshal([]byte(ev.Data), &chunk); err != nil {
					t.Fatalf("chunk %s: %v", ev.Data, err)
				}
				if chunk.Error != nil {
					code.WriteString(chunk.Error.Code)
				}
				for _, ch := range chunk.Choices {
					content.WriteString(ch.Delta.Content)
					for _, tc := range ch.Delta.ToolCalls {
						args.WriteString(tc.Function.Arguments)
					}
				}
			}
			if content.String() != c.content || code.String() != c.code || args.String() != c.toolArgs {
				t.Errorf("the client got content %q, error %q, tool arguments %q; want %q, %q, %q",
					content.String(), code.String(), args.String(), c.content, c.code, c.toolArgs)
			}
			checkRecorded(t, client, "http://"+addr+"/m/"+c.name+"/llm_mock/requests", c.calls)
		})
	}
}

// checkRecorded checks what the mock was sent: calls requests, each
// retry the previous request with messages appended and nothing else
// changed.
func checkRecorded(t *testing.T, client *http.Client, url string, calls int) {
	t.Helper()
	resp, err := client.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	var bodies []json.RawMessage
	err = json.NewDecoder(resp.Body).Decode(&bodies)
	_ = resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(bodies) != calls {
		t.Fatalf("the upstream was called %d times, want %d", len(bodies), calls)
	}
	for i := 1; i < len(bodies); i++ {
		prev, next := string(bodies[i-1]), string(bodies[i])
		at := messagesEnd(t, prev)
		if !strings.HasPrefix(next, prev[:at]+",") || !strings.HasSuffix(next, prev[at:]) {
			t.Errorf("request %d is not request %d with messages appended:\n%s\n%s", i+1, i, prev, next)
		}
	}
}
