package e2e

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// Recorded provider streams (issue 9; e2e/testdata/providers/*.sse) replayed
// through llm_stream's openai protocol to openai-go: what the client
// assembles must be exactly what the fixture holds by CONTRACT §7, as
// test/providers.mjs derives it into e2e/testdata/providers/expected.json
// (the node suite checks that file against the fixtures).

// providerCall is an assembled tool call.
type providerCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

// providerUsage is the part of a provider's usage every client reads.
type providerUsage struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// providerWant is one entry of expected.json.
type providerWant struct {
	Model     string         `json:"model"`
	Answer    string         `json:"answer"`
	Reasoning string         `json:"reasoning"`
	ToolCalls []providerCall `json:"toolCalls"`
	Finish    *string        `json:"finish"`
	Usage     *providerUsage `json:"usage"`
	Error     *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// loadProviders reads expected.json: the fixture names, sorted, and what
// each must give.
func loadProviders(t *testing.T) ([]string, map[string]providerWant) {
	t.Helper()
	var m map[string]providerWant
	decodeJSON(t, readTestdata(t, "providers/expected.json"), &m)
	if len(m) == 0 {
		t.Fatal("expected.json lists no fixture")
	}
	return slices.Sorted(maps.Keys(m)), m
}

// providerClient talks to the openai route in front of a provider fixture.
func providerClient(name string, chunk int) openai.Client {
	return client("text", "prov_"+name, chunk)
}

// gotCalls is the accumulated tool calls as {id, name, arguments}.
func gotCalls(t *testing.T, list []openai.ChatCompletionMessageToolCallUnion) []providerCall {
	t.Helper()
	out := []providerCall{}
	for _, c := range list {
		if c.Type != "function" {
			t.Errorf("tool call type %q", c.Type)
		}
		out = append(out, providerCall{c.ID, c.Function.Name, c.Function.Arguments})
	}
	return out
}

func checkProviderUsage(t *testing.T, got openai.CompletionUsage, want *providerUsage) {
	t.Helper()
	if want == nil {
		if got.JSON.PromptTokens.Valid() {
			t.Errorf("usage %s, but the provider sent none", got.RawJSON())
		}
		return
	}
	if g := (providerUsage{got.PromptTokens, got.CompletionTokens, got.TotalTokens}); g != *want {
		t.Errorf("usage %+v, want %+v (the provider's, counted once)", g, *want)
	}
}

func TestProvidersNewStreaming(t *testing.T) {
	names, wants := loadProviders(t)
	for _, name := range names {
		want := wants[name]
		for _, chunk := range chunks {
			t.Run(fmt.Sprintf("%s/%s", name, chunkPath(chunk)), func(t *testing.T) {
				t.Parallel()
				c := providerClient(name, chunk)
				stream := c.Chat.Completions.NewStreaming(context.Background(), params())
				defer stream.Close()
				var acc openai.ChatCompletionAccumulator
				var reasoning strings.Builder
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
				}
				content, finish := "", ""
				var tools []openai.ChatCompletionMessageToolCallUnion
				if len(acc.Choices) > 0 {
					content, finish, tools = acc.Choices[0].Message.Content, acc.Choices[0].FinishReason, acc.Choices[0].Message.ToolCalls
				}
				if want.Error != nil {
					if err := stream.Err(); err == nil || !strings.Contains(err.Error(), want.Error.Message) {
						t.Errorf("stream.Err() = %v, want the upstream's %q", err, want.Error.Message)
					}
				} else if err := stream.Err(); err != nil {
					t.Fatalf("stream: %v", err)
				} else if len(acc.Choices) != 1 {
					t.Fatalf("%d choices", len(acc.Choices))
				}
				if content != want.Answer {
					t.Errorf("content:\n%q\nwant:\n%q", content, want.Answer)
				}
				if got := reasoning.String(); got != want.Reasoning {
					t.Errorf("reasoning_content:\n%q\nwant:\n%q", got, want.Reasoning)
				}
				if got := gotCalls(t, tools); !reflect.DeepEqual(got, want.ToolCalls) {
					t.Errorf("tool calls %+v, want %+v", got, want.ToolCalls)
				}
				if want.Finish != nil && finish != *want.Finish {
					t.Errorf("finish_reason %q, want %q", finish, *want.Finish)
				}
				if want.Error == nil {
					checkProviderUsage(t, acc.Usage, want.Usage)
				}
				if acc.Model != want.Model {
					t.Errorf("model %q, want the provider's %q", acc.Model, want.Model)
				}
			})
		}
	}
}

func TestProvidersNew(t *testing.T) {
	names, wants := loadProviders(t)
	for _, name := range names {
		want := wants[name]
		for _, chunk := range chunks {
			t.Run(fmt.Sprintf("%s/%s", name, chunkPath(chunk)), func(t *testing.T) {
				t.Parallel()
				c := providerClient(name, chunk)
				completion, err := c.Chat.Completions.New(context.Background(), params())
				if want.Error != nil {
					var apiErr *openai.Error
					if !errors.As(err, &apiErr) || apiErr.StatusCode < 500 || !strings.Contains(apiErr.Message, want.Error.Message) {
						t.Errorf("New: %v, want a 5xx *openai.Error with the upstream's %q", err, want.Error.Message)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(completion.Choices) != 1 {
					t.Fatalf("%d choices", len(completion.Choices))
				}
				msg := completion.Choices[0].Message
				// content is null when the model only called tools.
				if want.Answer == "" {
					if msg.JSON.Content.Raw() != "null" {
						t.Errorf("content %s, want null", msg.JSON.Content.Raw())
					}
				} else if msg.Content != want.Answer {
					t.Errorf("content:\n%q\nwant:\n%q", msg.Content, want.Answer)
				}
				if got := extraString(t, msg.JSON.ExtraFields["reasoning_content"]); got != want.Reasoning {
					t.Errorf("reasoning_content:\n%q\nwant:\n%q", got, want.Reasoning)
				}
				if got := gotCalls(t, msg.ToolCalls); !reflect.DeepEqual(got, want.ToolCalls) {
					t.Errorf("tool calls %+v, want %+v", got, want.ToolCalls)
				}
				if f := completion.Choices[0].FinishReason; f != *want.Finish {
					t.Errorf("finish_reason %q, want %q", f, *want.Finish)
				}
				checkProviderUsage(t, completion.Usage, want.Usage)
				if completion.Model != want.Model {
					t.Errorf("model %q, want the provider's %q", completion.Model, want.Model)
				}
			})
		}
	}
}
