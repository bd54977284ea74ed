package e2e

// The agent loop through Caddy with real MCP servers (CONTRACT.md §12),
// read by the Go SDKs: the /loop/<protocol>/clients routes of
// e2e/Caddyfile, whose scripted model calls server-everything's
// long-running operation (stdio) and server-filesystem's read_text_file in
// round 1, a failing server-everything tool over streamable HTTP in round
// 2, and answers in round 3. openai-go's ResponseAccumulator must take
// every event and rebuild the mcp_call items; anthropic-sdk-go's
// BetaMessage.Accumulate the MCP connector's blocks (with the beta
// header), its Message.Accumulate the rounds' text (without);
// ChatCompletionAccumulator one message. (The same goldens without Caddy:
// loop_test.go.)

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

const (
	loopLong   = "Long running operation completed. Duration: 1 seconds, Steps: 2."
	loopFailed = "Invalid resourceId: 0. Must be a finite positive integer."
)

// loopBase is the /loop route of protocol with the clients script.
func loopBase(protocol string) string { return base() + "/loop/" + protocol + "/clients" }

// loopNotes is the file server-filesystem reads (run.sh writes it).
func loopNotes(t *testing.T) string {
	t.Helper()
	root := os.Getenv("E2E_FS_ROOT")
	if root == "" {
		t.Fatal("E2E_FS_ROOT is not set: run these tests with e2e/run.sh")
	}
	b, err := os.ReadFile(filepath.Join(root, "notes.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func loopContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestLoopCaddyResponses(t *testing.T) {
	c := openai.NewClient(option.WithBaseURL(loopBase("responses")+"/v1/"), option.WithAPIKey("sk-e2e"), option.WithMaxRetries(0))
	stream := c.Responses.NewStreaming(loopContext(t), responses.ResponseNewParams{
		Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Look it up.")},
	})
	defer stream.Close()
	var acc responses.ResponseAccumulator
	created := 0
	for stream.Next() {
		ev := stream.Current()
		if ev.Type == "response.created" {
			created++
		}
		var wsEvent responses.ResponsesServerEventUnion
		if err := json.Unmarshal([]byte(ev.RawJSON()), &wsEvent); err != nil {
			t.Fatal(err)
		}
		if err := acc.AddEvent(wsEvent); err != nil {
			t.Fatalf("the accumulator rejected %s: %v: %s", ev.Type, err, ev.RawJSON())
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	r, err := acc.ReconstructedResponse()
	if err != nil {
		t.Fatal(err)
	}
	if created != 1 || r.Status != "completed" {
		t.Errorf("%d response.created, status %s: want one lifecycle, completed", created, r.Status)
	}
	var types, calls []string
	for _, o := range r.Output {
		types = append(types, o.Type)
		if o.Type != "mcp_call" {
			continue
		}
		m := o.AsMcpCall()
		outcome := m.Output
		if m.Status == "failed" {
			var content []struct{ Type, Text string }
			b, _ := json.Marshal(m.Error.Content)
			if m.Error.Type != "mcp_tool_execution_error" || json.Unmarshal(b, &content) != nil || len(content) != 1 || content[0].Type != "text" {
				t.Errorf("error %+v", m.Error)
				continue
			}
			outcome = content[0].Text
		}
		calls = append(calls, m.Name+" "+m.ServerLabel+" "+m.Status+" "+outcome)
	}
	if want := []string{"message", "mcp_call", "mcp_call", "message", "mcp_call", "message"}; !reflect.DeepEqual(types, want) {
		t.Errorf("output %q, want %q", types, want)
	}
	notes := loopNotes(t)
	if len(calls) != 3 || calls[0] != "ev_trigger-long-running-operation everything completed "+loopLong ||
		calls[1] != "fs_read_text_file files completed "+notes ||
		!strings.HasPrefix(calls[2], "evh_get-resource-reference everything_http failed ") || !strings.Contains(calls[2], loopFailed) {
		t.Errorf("mcp_call items:\n%s", strings.Join(calls, "\n"))
	}
	if txt := r.OutputText(); !strings.HasPrefix(txt, "Let me look.One more.Done: ") || !strings.Contains(txt, loopFailed) {
		t.Errorf("output text %q", txt)
	}
}

func TestLoopCaddyAnthropicBeta(t *testing.T) {
	c := anthropic.NewClient(anthropicoption.WithBaseURL(loopBase("anthropic")+"/"), anthropicoption.WithAPIKey("sk-ant-e2e"), anthropicoption.WithMaxRetries(0))
	stream := c.Beta.Messages.NewStreaming(loopContext(t), anthropic.BetaMessageNewParams{
		Model: "m", MaxTokens: 1000, Betas: []anthropic.AnthropicBeta{"mcp-client-2025-04-04"},
		Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("Look it up."))},
	})
	var msg anthropic.BetaMessage
	accumulate(t, stream, &msg)
	var types []string
	uses := map[string]string{}
	var order []string
	results := map[string]string{}
	for _, b := range msg.Content {
		types = append(types, b.Type)
		switch b.Type {
		case "mcp_tool_use":
			u := b.AsMCPToolUse()
			in, _ := json.Marshal(u.Input)
			uses[u.ID] = u.Name + " " + u.ServerName + " " + string(in)
			order = append(order, u.ID)
		case "mcp_tool_result":
			r := b.AsMCPToolResult()
			texts := r.Content.AsBetaMCPToolResultBlockContent()
			if len(texts) != 1 {
				t.Errorf("result %s: %+v", r.ToolUseID, r)
				continue
			}
			prefix := "ok "
			if r.IsError {
				prefix = "error "
			}
			results[r.ToolUseID] = prefix + texts[0].Text
		}
	}
	want := []string{"text", "mcp_tool_use", "mcp_tool_use", "mcp_tool_result", "mcp_tool_result", "text", "mcp_tool_use", "mcp_tool_result", "text"}
	if !reflect.DeepEqual(types, want) {
		t.Fatalf("blocks %q, want %q", types, want)
	}
	notes := loopNotes(t)
	if got := []string{uses[order[0]], uses[order[1]], uses[order[2]]}; !reflect.DeepEqual(got, []string{
		`ev_trigger-long-running-operation everything {"duration":1,"steps":2}`,
		`fs_read_text_file files {"path":"notes.txt"}`,
		`evh_get-resource-reference everything_http {"resourceId":0,"resourceType":"Text"}`,
	}) {
		t.Errorf("mcp_tool_use blocks %q", got)
	}
	if results[order[0]] != "ok "+loopLong || results[order[1]] != "ok "+notes ||
		!strings.HasPrefix(results[order[2]], "error ") || !strings.Contains(results[order[2]], loopFailed) {
		t.Errorf("mcp_tool_result blocks %q", results)
	}
	if msg.StopReason != "end_turn" || msg.Usage.OutputTokens == 0 {
		t.Errorf("stop %s, output tokens %d", msg.StopReason, msg.Usage.OutputTokens)
	}
}

func TestLoopCaddyAnthropicPlain(t *testing.T) {
	c := anthropic.NewClient(anthropicoption.WithBaseURL(loopBase("anthropic")+"/"), anthropicoption.WithAPIKey("sk-ant-e2e"), anthropicoption.WithMaxRetries(0))
	stream := c.Messages.NewStreaming(loopContext(t), anthropic.MessageNewParams{
		Model: "m", MaxTokens: 1000,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("Look it up."))},
	})
	var msg anthropic.Message
	accumulate(t, stream, &msg)
	var got []string
	for _, b := range msg.Content {
		got = append(got, b.Type+":"+b.Text)
	}
	if len(got) != 3 || got[0] != "text:Let me look." || got[1] != "text:One more." || !strings.HasPrefix(got[2], "text:Done: ") {
		t.Errorf("blocks %q: want the three rounds' text", got)
	}
	if msg.StopReason != "end_turn" {
		t.Errorf("stop %s", msg.StopReason)
	}
}

func TestLoopCaddyChatCompletions(t *testing.T) {
	c := openai.NewClient(option.WithBaseURL(loopBase("openai")+"/v1/"), option.WithAPIKey("sk-e2e"), option.WithMaxRetries(0))
	stream := c.Chat.Completions.NewStreaming(loopContext(t), openai.ChatCompletionNewParams{
		Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("Look it up.")},
	})
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	for stream.Next() {
		if !acc.AddChunk(stream.Current()) {
			t.Fatal("the accumulator refused a chunk")
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
	m := acc.Choices[0].Message
	if !strings.HasPrefix(m.Content, "Let me look.\n\nOne more.\n\nDone: ") || len(m.ToolCalls) != 0 || acc.Choices[0].FinishReason != "stop" {
		t.Errorf("content %q, %d tool calls, finish %s", m.Content, len(m.ToolCalls), acc.Choices[0].FinishReason)
	}
}
