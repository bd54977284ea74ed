// Package e2e consumes llmstream's normalised OpenAI protocol with the
// official Go SDK, github.com/openai/openai-go: streaming through
// openai.ChatCompletionAccumulator, non-streaming, and a broken upstream.
// e2e/run.sh starts the gateway (e2e/Caddyfile) first.
package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
)

const mockModel = "e2e-mock"

// base is the gateway e2e/run.sh starts.
func base() string {
	if b := os.Getenv("LLMSTREAM_E2E_BASE"); b != "" {
		return b
	}
	return "http://127.0.0.1:18080"
}

// client talks to the openai route of a format, a mock and a chunk size.
func client(format, mock string, chunk int) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(fmt.Sprintf("%s/openai/%s/%s/%s/v1/", base(), format, mock, chunkPath(chunk))),
		option.WithAPIKey("sk-e2e"),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(30*time.Second),
	)
}

func params() openai.ChatCompletionNewParams {
	return openai.ChatCompletionNewParams{
		Model: "gpt-e2e",
		Messages: []openai.ChatCompletionMessageParamUnion{
			openai.SystemMessage("Be brief."),
			openai.UserMessage("三分化训练怎么安排？"),
		},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
}

// extraString decodes a field the SDK does not know (reasoning_content):
// such a field is kept raw (Valid reports false for it: it has no type).
func extraString(t *testing.T, f respjson.Field) string {
	t.Helper()
	if f.Raw() == "" || f.Raw() == "null" {
		return ""
	}
	var s string
	if err := json.Unmarshal([]byte(f.Raw()), &s); err != nil {
		t.Fatalf("reasoning_content %s: %v", f.Raw(), err)
	}
	return s
}

// calls turns the accumulated tool calls into {name, input}, checking ids.
func calls(t *testing.T, list []openai.ChatCompletionMessageToolCallUnion) []toolCall {
	t.Helper()
	out := []toolCall{}
	ids := map[string]bool{}
	for _, c := range list {
		if c.ID == "" || ids[c.ID] {
			t.Errorf("tool call id %q empty or repeated", c.ID)
		}
		ids[c.ID] = true
		if c.Type != "function" {
			t.Errorf("tool call type %q", c.Type)
		}
		var in any
		if err := json.Unmarshal([]byte(c.Function.Arguments), &in); err != nil {
			t.Errorf("tool call %s arguments %q: %v", c.Function.Name, c.Function.Arguments, err)
		}
		out = append(out, toolCall{c.Function.Name, in})
	}
	return out
}

type routeCase struct {
	format, mock string
	chunk        int
	want         want
}

// routeCases is every mock at every chunk size, plus format auto.
func routeCases(t *testing.T) []routeCase {
	loadMocks(t)
	var out []routeCase
	for _, name := range []string{"thinkingml", "thinkingml_violation", "jsonl", "aiplan", "aiplan_tools", "final_result", "final_result_clarify", "final_result_artifacts", "text", "native_tools", "ask_user"} {
		w := mocks[name]
		for _, c := range chunks {
			out = append(out, routeCase{w.Format, name, c, w})
		}
		out = append(out, routeCase{"auto", name, 13, w})
	}
	return out
}

func TestNewStreamingAccumulator(t *testing.T) {
	for _, tc := range routeCases(t) {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.format, tc.mock, chunkPath(tc.chunk)), func(t *testing.T) {
			t.Parallel()
			c := client(tc.format, tc.mock, tc.chunk)
			stream := c.Chat.Completions.NewStreaming(context.Background(), params())
			defer stream.Close()
			var acc openai.ChatCompletionAccumulator
			var reasoning strings.Builder
			var finished []toolCall
			n := 0
			for stream.Next() {
				chunk := stream.Current()
				n++
				if !acc.AddChunk(chunk) {
					t.Fatalf("the accumulator rejected chunk %d: %s", n, chunk.RawJSON())
				}
				if len(chunk.Choices) > 0 {
					reasoning.WriteString(extraString(t, chunk.Choices[0].Delta.JSON.ExtraFields["reasoning_content"]))
				}
				if tool, ok := acc.JustFinishedToolCall(); ok {
					var in any
					if err := json.Unmarshal([]byte(tool.Arguments), &in); err != nil {
						t.Errorf("finished tool call %s: %v", tool.Name, err)
					}
					finished = append(finished, toolCall{tool.Name, in})
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			if len(acc.Choices) != 1 {
				t.Fatalf("%d choices", len(acc.Choices))
			}
			choice := acc.Choices[0]
			wantContent := ""
			if tc.want.Answer != nil {
				wantContent = *tc.want.Answer
			}
			if choice.Message.Content != wantContent {
				t.Errorf("content:\n%q\nwant:\n%q", choice.Message.Content, wantContent)
			}
			if got := reasoning.String(); got != tc.want.Reasoning {
				t.Errorf("reasoning_content:\n%q\nwant:\n%q", got, tc.want.Reasoning)
			}
			if got := calls(t, choice.Message.ToolCalls); !reflect.DeepEqual(got, tc.want.Tools) {
				t.Errorf("tool calls %#v, want %#v", got, tc.want.Tools)
			}
			if len(tc.want.Tools) > 0 && !reflect.DeepEqual(finished, tc.want.Tools) {
				t.Errorf("JustFinishedToolCall saw %#v, want %#v", finished, tc.want.Tools)
			}
			if choice.FinishReason != tc.want.Finish {
				t.Errorf("finish_reason %q, want %q", choice.FinishReason, tc.want.Finish)
			}
			if acc.Model != mockModel {
				t.Errorf("model %q, want %q", acc.Model, mockModel)
			}
			if u := acc.Usage; u.PromptTokens <= 0 || u.CompletionTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("usage %+v", u)
			}
		})
	}
}

func TestNew(t *testing.T) {
	for _, tc := range routeCases(t) {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.format, tc.mock, chunkPath(tc.chunk)), func(t *testing.T) {
			t.Parallel()
			c := client(tc.format, tc.mock, tc.chunk)
			var res *http.Response
			completion, err := c.Chat.Completions.New(context.Background(), params(), option.WithResponseInto(&res))
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Errorf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			if completion.Object != "chat.completion" || completion.Model != mockModel {
				t.Errorf("object %q model %q", completion.Object, completion.Model)
			}
			if len(completion.Choices) != 1 {
				t.Fatalf("%d choices", len(completion.Choices))
			}
			msg := completion.Choices[0].Message
			if tc.want.Answer == nil {
				if msg.JSON.Content.Raw() != "null" {
					t.Errorf("content %s, want null", msg.JSON.Content.Raw())
				}
			} else if msg.Content != *tc.want.Answer {
				t.Errorf("content:\n%q\nwant:\n%q", msg.Content, *tc.want.Answer)
			}
			if got := extraString(t, msg.JSON.ExtraFields["reasoning_content"]); got != tc.want.Reasoning {
				t.Errorf("reasoning_content:\n%q\nwant:\n%q", got, tc.want.Reasoning)
			}
			if got := calls(t, msg.ToolCalls); !reflect.DeepEqual(got, tc.want.Tools) {
				t.Errorf("tool calls %#v, want %#v", got, tc.want.Tools)
			}
			if f := completion.Choices[0].FinishReason; f != tc.want.Finish {
				t.Errorf("finish_reason %q, want %q", f, tc.want.Finish)
			}
			if u := completion.Usage; u.PromptTokens <= 0 || u.TotalTokens != u.PromptTokens+u.CompletionTokens {
				t.Errorf("usage %+v", u)
			}
			// The message goes back into the next request as is.
			next := params()
			next.Messages = append(next.Messages, msg.ToParam())
			if _, err := json.Marshal(next); err != nil {
				t.Errorf("ToParam: %v", err)
			}
		})
	}
}

func TestTruncatedUpstream(t *testing.T) {
	loadMocks(t)
	for name, c := range cuts {
		format := mocks[c.Full].Format
		for _, chunk := range cutChunks {
			t.Run(fmt.Sprintf("NewStreaming/%s/%s/%d", format, name, chunk), func(t *testing.T) {
				t.Parallel()
				c := client(format, name, chunk)
				stream := c.Chat.Completions.NewStreaming(context.Background(), params())
				defer stream.Close()
				var acc openai.ChatCompletionAccumulator
				for stream.Next() {
					acc.AddChunk(stream.Current())
				}
				err := stream.Err()
				if err == nil {
					t.Fatal("stream.Err() is nil after a broken upstream")
				}
				if !strings.Contains(err.Error(), "upstream: the connection broke off mid-reply") {
					t.Errorf("stream.Err() = %v", err)
				}
				got := ""
				if len(acc.Choices) > 0 {
					got = acc.Choices[0].Message.Content
					if f := acc.Choices[0].FinishReason; f != "" {
						t.Errorf("finish_reason %q after a cut", f)
					}
				}
				if want := partialAnswer(t, name, chunk); want == "" || !matchesPartial(got, want) {
					t.Errorf("content up to the cut %q, want %q", got, want)
				}
			})
		}
	}

	t.Run("New", func(t *testing.T) {
		// The SDK turns only a non-2xx status into an error, so a broken
		// upstream must be a 5xx, not a 200 with an error body.
		c := client("text", "text_cut", 13)
		completion, err := c.Chat.Completions.New(context.Background(), params())
		if err == nil {
			t.Fatalf("New returned no error but %d choices and body %s", len(completion.Choices), completion.RawJSON())
		}
		var apiErr *openai.Error
		if !errorsAs(err, &apiErr) || apiErr.StatusCode < 500 {
			t.Errorf("New: %v, want a 5xx *openai.Error", err)
		}
	})
}

func errorsAs(err error, target any) bool { return errors.As(err, target) }
