package e2e

// The Anthropic Messages API (request_format and protocol anthropic),
// consumed with the official Go SDK github.com/anthropics/anthropic-sdk-go:
// Messages.NewStreaming with Message.Accumulate, Messages.New,
// Messages.CountTokens, and a broken upstream.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/anthropics/anthropic-sdk-go"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/option"
)

// anthropicClient talks to the anthropic route of a format, a mock and a
// chunk size; the SDK posts to …/v1/messages under it.
func anthropicClient(format, mock string, chunk int) anthropic.Client {
	return anthropic.NewClient(
		anthropicoption.WithBaseURL(fmt.Sprintf("%s/anthropic/%s/%s/%s/", base(), format, mock, chunkPath(chunk))),
		anthropicoption.WithAPIKey("sk-ant-e2e"),
		anthropicoption.WithMaxRetries(0),
		anthropicoption.WithRequestTimeout(30*time.Second),
	)
}

func anthropicParams() anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "claude-e2e",
		MaxTokens: 4096,
		System:    []anthropic.TextBlockParam{{Text: "Be brief."}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("三分化训练怎么安排？"))},
		Thinking:  anthropic.ThinkingConfigParamOfEnabled(2048),
	}
}

// block is a content block as the tests compare it.
type block struct {
	Type, Text string
	Tool       *toolCall
}

// wantBlocks is what a client assembles from a mock: its reasoning as one
// thinking block, its answer as one text block, then a tool_use block per
// call.
func wantBlocks(w want) []block {
	var out []block
	if w.Reasoning != "" {
		out = append(out, block{Type: "thinking", Text: w.Reasoning})
	}
	if w.Answer != nil && *w.Answer != "" {
		out = append(out, block{Type: "text", Text: *w.Answer})
	}
	for _, c := range w.Tools {
		out = append(out, block{Type: "tool_use", Tool: &toolCall{c.Name, c.Input}})
	}
	return out
}

// gotBlocks turns a Message's content into blocks, checking tool ids.
func gotBlocks(t *testing.T, content []anthropic.ContentBlockUnion) []block {
	t.Helper()
	var out []block
	ids := map[string]bool{}
	for _, b := range content {
		switch b.Type {
		case "thinking":
			out = append(out, block{Type: b.Type, Text: b.Thinking})
		case "text":
			out = append(out, block{Type: b.Type, Text: b.Text})
		case "tool_use":
			if b.ID == "" || ids[b.ID] {
				t.Errorf("tool_use id %q empty or repeated", b.ID)
			}
			ids[b.ID] = true
			var in any
			if err := json.Unmarshal(b.Input, &in); err != nil {
				t.Errorf("tool_use %s input %s: %v", b.Name, b.Input, err)
			}
			out = append(out, block{Type: b.Type, Tool: &toolCall{b.Name, in}})
		default:
			t.Errorf("block type %q", b.Type)
		}
	}
	return out
}

func stopReason(w want) anthropic.StopReason {
	if w.Finish == "tool_calls" {
		return anthropic.StopReasonToolUse
	}
	return anthropic.StopReasonEndTurn
}

func checkMessage(t *testing.T, tc routeCase, m *anthropic.Message) {
	t.Helper()
	if got, want := gotBlocks(t, m.Content), wantBlocks(tc.want); !reflect.DeepEqual(got, want) {
		t.Errorf("content\n%s\nwant\n%s", jsonOf(got), jsonOf(want))
	}
	if m.StopReason != stopReason(tc.want) {
		t.Errorf("stop_reason %q, want %q", m.StopReason, stopReason(tc.want))
	}
	if string(m.Model) != mockModel || m.Role != "assistant" || !strings.HasPrefix(m.ID, "msg_") {
		t.Errorf("model %q role %q id %q", m.Model, m.Role, m.ID)
	}
	if m.Usage.InputTokens <= 0 || m.Usage.OutputTokens <= 0 {
		t.Errorf("usage %+v", m.Usage)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func TestAnthropicNewStreamingAccumulate(t *testing.T) {
	for _, tc := range routeCases(t) {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.format, tc.mock, chunkPath(tc.chunk)), func(t *testing.T) {
			t.Parallel()
			c := anthropicClient(tc.format, tc.mock, tc.chunk)
			stream := c.Messages.NewStreaming(context.Background(), anthropicParams())
			defer stream.Close()
			var m anthropic.Message
			events := 0
			for stream.Next() {
				events++
				if err := m.Accumulate(stream.Current()); err != nil {
					t.Fatalf("Accumulate event %d (%s): %v", events, stream.Current().Type, err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			checkMessage(t, tc, &m)
			// The accumulated Message goes back into the next request.
			next := anthropicParams()
			next.Messages = append(next.Messages, m.ToParam())
			if _, err := json.Marshal(next); err != nil {
				t.Errorf("ToParam: %v", err)
			}
		})
	}
}

func TestAnthropicNew(t *testing.T) {
	for _, tc := range routeCases(t) {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.format, tc.mock, chunkPath(tc.chunk)), func(t *testing.T) {
			t.Parallel()
			var res *http.Response
			c := anthropicClient(tc.format, tc.mock, tc.chunk)
			m, err := c.Messages.New(context.Background(), anthropicParams(), anthropicoption.WithResponseInto(&res))
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Errorf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			checkMessage(t, tc, m)
		})
	}
}

func TestAnthropicCountTokens(t *testing.T) {
	c := anthropicClient("text", "text", 13)
	p := anthropicParams()
	short, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{Model: p.Model, Messages: p.Messages})
	if err != nil {
		t.Fatal(err)
	}
	long, err := c.Messages.CountTokens(context.Background(), anthropic.MessageCountTokensParams{
		Model: p.Model, Messages: p.Messages,
		System: anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String(strings.Repeat("word ", 500))},
	})
	if err != nil {
		t.Fatal(err)
	}
	if short.InputTokens <= 0 || long.InputTokens < short.InputTokens+400 {
		t.Errorf("estimates %d, then %d with 500 more words", short.InputTokens, long.InputTokens)
	}
}

func TestAnthropicTruncatedUpstream(t *testing.T) {
	loadMocks(t)
	for name, cut := range cuts {
		format := mocks[cut.Full].Format
		for _, chunk := range cutChunks {
			t.Run(fmt.Sprintf("NewStreaming/%s/%s/%d", format, name, chunk), func(t *testing.T) {
				t.Parallel()
				c := anthropicClient(format, name, chunk)
				stream := c.Messages.NewStreaming(context.Background(), anthropicParams())
				defer stream.Close()
				var m anthropic.Message
				for stream.Next() {
					if err := m.Accumulate(stream.Current()); err != nil {
						t.Fatal(err)
					}
				}
				err := stream.Err()
				var apiErr *anthropic.Error
				if !errors.As(err, &apiErr) || apiErr.Type() != "api_error" || !strings.Contains(err.Error(), "upstream: the connection broke off mid-reply") {
					t.Fatalf("stream.Err() = %v, want an api_error *anthropic.Error", err)
				}
				got := ""
				for _, b := range m.Content {
					got += b.Text
				}
				if want := partialAnswer(t, name, chunk); want == "" || !matchesPartial(got, want) {
					t.Errorf("text up to the cut %q, want %q", got, want)
				}
				if m.StopReason != "" {
					t.Errorf("stop_reason %q after a cut", m.StopReason)
				}
			})
		}
	}

	t.Run("New", func(t *testing.T) {
		c := anthropicClient("text", "text_cut", 13)
		_, err := c.Messages.New(context.Background(), anthropicParams())
		var apiErr *anthropic.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway || apiErr.Type() != "api_error" {
			t.Errorf("New: %v, want a 502 api_error *anthropic.Error", err)
		}
	})
}
