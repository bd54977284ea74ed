package e2e

// The agent loop's rounds (CONTRACT.md §12) as the encoders write them,
// fed to the Go SDKs before the loop runs in Caddy: the goldens of
// transform/<protocol>/testdata for encodertest's loop scenarios, served
// by an httptest server. anthropic-sdk-go's BetaMessage.Accumulate reads
// the MCP connector's blocks, its Message.Accumulate what a client without
// the beta gets; openai-go's ResponseAccumulator and Response decoding read
// the mcp_call items; its ChatCompletionAccumulator the one message of the
// openai protocol. No Caddy is needed.

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
	"github.com/anthropics/anthropic-sdk-go/packages/ssestream"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"
)

// goldenServer serves transform/<protocol>/testdata/<scenario>.golden at
// /<protocol>/<scenario>/…, whatever the SDK posts there.
func goldenServer(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		parts := strings.SplitN(strings.TrimPrefix(r.URL.Path, "/"), "/", 3)
		if len(parts) < 2 {
			http.NotFound(w, r)
			return
		}
		b, err := os.ReadFile(filepath.Join("..", "..", "transform", parts[0], "testdata", parts[1]+".golden"))
		if err != nil {
			http.NotFound(w, r)
			return
		}
		if strings.HasSuffix(parts[1], "_whole") {
			w.Header().Set("Content-Type", "application/json")
		} else {
			w.Header().Set("Content-Type", "text/event-stream")
		}
		_, _ = w.Write(b)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLoopAnthropicBetaAccumulate(t *testing.T) {
	srv := goldenServer(t)
	c := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL+"/anthropic/server_tools/"),
		anthropicoption.WithAPIKey("k"), anthropicoption.WithMaxRetries(0))
	stream := c.Beta.Messages.NewStreaming(context.Background(), anthropic.BetaMessageNewParams{
		Model: "m", MaxTokens: 100, Betas: []anthropic.AnthropicBeta{"mcp-client-2025-11-20"},
		Messages: []anthropic.BetaMessageParam{anthropic.NewBetaUserMessage(anthropic.NewBetaTextBlock("What is Caddy?"))},
	})
	var msg anthropic.BetaMessage
	accumulate(t, stream, &msg)
	var types []string
	var uses, results []string
	for _, b := range msg.Content {
		types = append(types, b.Type)
		switch b.Type {
		case "mcp_tool_use":
			u := b.AsMCPToolUse()
			in, _ := json.Marshal(u.Input)
			uses = append(uses, u.ID+" "+u.Name+" "+u.ServerName+" "+string(in))
		case "mcp_tool_result":
			r := b.AsMCPToolResult()
			texts := r.Content.AsBetaMCPToolResultBlockContent()
			if len(texts) != 1 || r.IsError {
				t.Errorf("result %s: %+v", r.ToolUseID, r)
				continue
			}
			results = append(results, r.ToolUseID+" "+texts[0].Text)
		}
	}
	wantTypes := []string{"thinking", "text", "mcp_tool_use", "mcp_tool_use", "mcp_tool_result", "mcp_tool_result", "thinking", "text"}
	if !reflect.DeepEqual(types, wantTypes) {
		t.Errorf("blocks %q, want %q", types, wantTypes)
	}
	if want := []string{`call_1 search_knowledge demo {"query":"caddy"}`, `call_2 get_weather demo {"city":"Paris"}`}; !reflect.DeepEqual(uses, want) {
		t.Errorf("mcp_tool_use %q, want %q", uses, want)
	}
	if want := []string{"call_2 18°C, sunny", "call_1 Caddy is a web server."}; !reflect.DeepEqual(results, want) {
		t.Errorf("mcp_tool_result %q, want %q", results, want)
	}
	if msg.StopReason != "end_turn" || msg.Usage.OutputTokens != 12 {
		t.Errorf("stop %s, output tokens %d", msg.StopReason, msg.Usage.OutputTokens)
	}
}

func TestLoopAnthropicWithoutTheBeta(t *testing.T) {
	srv := goldenServer(t)
	c := anthropic.NewClient(anthropicoption.WithBaseURL(srv.URL+"/anthropic/server_tools_no_mcp/"),
		anthropicoption.WithAPIKey("k"), anthropicoption.WithMaxRetries(0))
	stream := c.Messages.NewStreaming(context.Background(), anthropic.MessageNewParams{
		Model: "m", MaxTokens: 100,
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("What is Caddy?"))},
	})
	var msg anthropic.Message
	accumulate(t, stream, &msg)
	var got []string
	for _, b := range msg.Content {
		got = append(got, b.Type+":"+b.Text+b.Thinking)
	}
	want := []string{"thinking:Need data.", "text:Let me look.", "thinking:Got it.", "text:Caddy is a web server."}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("blocks %q, want %q", got, want)
	}
}

func TestLoopResponsesAccumulator(t *testing.T) {
	srv := goldenServer(t)
	for _, tc := range []struct {
		scenario string
		want     []string // "name status output-or-error" of each mcp_call
	}{
		{"server_tools", []string{"search_knowledge completed Caddy is a web server.", "get_weather completed 18°C, sunny"}},
		{"mixed_turn", []string{"get_weather failed get_weather timed out after 30s"}},
	} {
		t.Run(tc.scenario, func(t *testing.T) {
			c := openai.NewClient(option.WithBaseURL(srv.URL+"/responses/"+tc.scenario+"/v1/"),
				option.WithAPIKey("k"), option.WithMaxRetries(0))
			stream := c.Responses.NewStreaming(context.Background(), responses.ResponseNewParams{
				Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("q")},
			})
			defer stream.Close()
			var acc responses.ResponseAccumulator
			for stream.Next() {
				ev := stream.Current()
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
			var got []string
			for _, o := range r.Output {
				if o.Type != "mcp_call" {
					continue
				}
				m := o.AsMcpCall()
				outcome := m.Output
				if m.Status == "failed" {
					if m.Error.Type != "mcp_tool_execution_error" {
						t.Errorf("error %+v", m.Error)
					}
					content, _ := json.Marshal(m.Error.Content)
					outcome = strings.TrimSuffix(strings.TrimPrefix(string(content), `[{"text":"`), `","type":"text"}]`)
				}
				got = append(got, m.Name+" "+m.Status+" "+outcome)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("mcp_call items %q, want %q", got, tc.want)
			}
			if r.Status != "completed" {
				t.Errorf("status %s", r.Status)
			}
		})
	}
}

func TestLoopResponsesWhole(t *testing.T) {
	srv := goldenServer(t)
	c := openai.NewClient(option.WithBaseURL(srv.URL+"/responses/server_tools_whole/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
	r, err := c.Responses.New(context.Background(), responses.ResponseNewParams{
		Model: "m", Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("q")},
	})
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, o := range r.Output {
		types = append(types, o.Type)
	}
	if want := []string{"reasoning", "message", "mcp_call", "mcp_call", "reasoning", "message"}; !reflect.DeepEqual(types, want) {
		t.Errorf("output %q, want %q", types, want)
	}
	if r.OutputText() != "Let me look.Caddy is a web server." {
		t.Errorf("output text %q", r.OutputText())
	}
}

func TestLoopChatCompletionAccumulator(t *testing.T) {
	srv := goldenServer(t)
	for _, tc := range []struct{ scenario, content, calls, finish string }{
		{"server_tools", "Let me look.\n\nCaddy is a web server.", "", "stop"},
		{"mixed_turn", "Both.", `call_c client_fn {"x":1}`, "tool_calls"},
	} {
		c := openai.NewClient(option.WithBaseURL(srv.URL+"/openai/"+tc.scenario+"/v1/"), option.WithAPIKey("k"), option.WithMaxRetries(0))
		stream := c.Chat.Completions.NewStreaming(context.Background(), openai.ChatCompletionNewParams{
			Model: "m", Messages: []openai.ChatCompletionMessageParamUnion{openai.UserMessage("q")},
		})
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			if !acc.AddChunk(stream.Current()) {
				t.Fatalf("%s: the accumulator refused a chunk", tc.scenario)
			}
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		m := acc.Choices[0].Message
		var calls []string
		for _, tcall := range m.ToolCalls {
			calls = append(calls, tcall.ID+" "+tcall.Function.Name+" "+tcall.Function.Arguments)
		}
		if m.Content != tc.content || strings.Join(calls, ";") != tc.calls || acc.Choices[0].FinishReason != tc.finish {
			t.Errorf("%s: %q %q %s, want %q %q %s", tc.scenario, m.Content, calls, acc.Choices[0].FinishReason, tc.content, tc.calls, tc.finish)
		}
		stream.Close()
	}
}

// accumulate reads an Anthropic stream to its end into msg with the SDK's
// own Accumulate (Message or BetaMessage), as a client assembles a reply,
// and fails on an error of either.
func accumulate[E any, M interface{ Accumulate(E) error }](t *testing.T, stream *ssestream.Stream[E], msg M) {
	t.Helper()
	defer stream.Close()
	for stream.Next() {
		if err := msg.Accumulate(stream.Current()); err != nil {
			t.Fatal(err)
		}
	}
	if err := stream.Err(); err != nil {
		t.Fatal(err)
	}
}
