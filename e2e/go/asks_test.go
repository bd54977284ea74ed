package e2e

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/openai/openai-go/v3"
)

// Clients get only what they asked for (CONTRACT §7, issue 9), with
// openai-go: "n" other than 1 is refused with a 400 naming n, and the usage
// chunk (no choices) goes only to a client that set
// stream_options.include_usage.

// checkRefusesN asserts the error of a request with "n": 2.
func checkRefusesN(t *testing.T, err error) {
	t.Helper()
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) {
		t.Fatalf("err %v, want an *openai.Error", err)
	}
	if apiErr.StatusCode != 400 || apiErr.Code != "unsupported_n" || !strings.Contains(apiErr.Message, `"n"`) {
		t.Errorf("status %d code %q message %q, want 400 unsupported_n naming \"n\"", apiErr.StatusCode, apiErr.Code, apiErr.Message)
	}
}

func TestN(t *testing.T) {
	_, wants := loadProviders(t)
	want := wants["mistral_magistral"]
	c := providerClient("mistral_magistral", 13)
	with := func(n int64) openai.ChatCompletionNewParams {
		p := params()
		p.N = openai.Int(n)
		return p
	}

	t.Run("NewStreaming/n=2", func(t *testing.T) {
		stream := c.Chat.Completions.NewStreaming(context.Background(), with(2))
		defer stream.Close()
		for stream.Next() {
			t.Fatalf("a chunk for n=2: %s", stream.Current().RawJSON())
		}
		checkRefusesN(t, stream.Err())
	})
	t.Run("New/n=2", func(t *testing.T) {
		_, err := c.Chat.Completions.New(context.Background(), with(2))
		checkRefusesN(t, err)
	})
	t.Run("NewStreaming/n=1", func(t *testing.T) {
		stream := c.Chat.Completions.NewStreaming(context.Background(), with(1))
		defer stream.Close()
		var acc openai.ChatCompletionAccumulator
		for stream.Next() {
			acc.AddChunk(stream.Current())
		}
		if err := stream.Err(); err != nil {
			t.Fatal(err)
		}
		if len(acc.Choices) != 1 || acc.Choices[0].Message.Content != want.Answer {
			t.Errorf("choices %+v, want one with %q", acc.Choices, want.Answer)
		}
	})
	t.Run("New/n=1", func(t *testing.T) {
		completion, err := c.Chat.Completions.New(context.Background(), with(1))
		if err != nil {
			t.Fatal(err)
		}
		if len(completion.Choices) != 1 || completion.Choices[0].Message.Content != want.Answer {
			t.Errorf("choices %+v, want one with %q", completion.Choices, want.Answer)
		}
	})
}

// TestUsageOnlyWhenAsked streams every provider fixture without
// include_usage, the way most client code reads a stream: Choices[0],
// unguarded. No chunk may come without its choice or with usage.
func TestUsageOnlyWhenAsked(t *testing.T) {
	names, wants := loadProviders(t)
	for _, name := range names {
		want := wants[name]
		for _, chunk := range chunks {
			t.Run(fmt.Sprintf("%s/%s", name, chunkPath(chunk)), func(t *testing.T) {
				t.Parallel()
				c := providerClient(name, chunk)
				p := params()
				p.StreamOptions = openai.ChatCompletionStreamOptionsParam{} // not asked
				stream := c.Chat.Completions.NewStreaming(context.Background(), p)
				defer stream.Close()
				var content strings.Builder
				for stream.Next() {
					ch := stream.Current()
					if len(ch.Choices) != 1 {
						t.Fatalf("a chunk with %d choices (Choices[0] would panic): %s", len(ch.Choices), ch.RawJSON())
					}
					if ch.JSON.Usage.Valid() {
						t.Errorf("usage in a chunk for a client that did not ask: %s", ch.RawJSON())
					}
					content.WriteString(ch.Choices[0].Delta.Content)
				}
				if err := stream.Err(); (err != nil) != (want.Error != nil) {
					t.Errorf("stream.Err() = %v, want an error: %v", err, want.Error != nil)
				}
				if content.String() != want.Answer {
					t.Errorf("content %q, want %q", content.String(), want.Answer)
				}
			})
		}
	}
}
