// Command go-client asks llmstream's normalised OpenAI route a question
// with the official Go SDK (github.com/openai/openai-go) and prints the
// answer as it streams: content holds only the answer, reasoning_content
// the model's reasoning, tool_calls its tool calls, whatever format the
// model wrote in.
//
// With the default Caddyfile served (`./xcaddy.sh run` at the repository
// root), from this folder:
//
//	go run . "三分化训练怎么安排？"
//	go run . -stream=false "hi"
//	go run . -base http://127.0.0.1:8080/v1 -model gpt-4o-mini "hi"
//
// The answer goes to stdout, then a "---" line, one "tool_call <name>
// <arguments JSON>" line per tool call and "finish_reason <reason>". The
// reasoning and the token usage go to stderr.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/respjson"
)

func main() {
	base := flag.String("base", "http://localhost:8080/v1", "the gateway's OpenAI base URL (…/chat/completions is appended)")
	model := flag.String("model", "llm-mock", "the model to ask for (a route may override it)")
	key := flag.String("key", os.Getenv("OPENAI_API_KEY"), "the API key sent as a Bearer token (the gateway may set its own)")
	stream := flag.Bool("stream", true, "stream the reply; false asks for one chat.completion")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go-client [flags] prompt\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if flag.NArg() != 1 {
		flag.Usage()
		os.Exit(2)
	}
	if *key == "" {
		*key = "unused"
	}
	client := openai.NewClient(
		option.WithBaseURL(strings.TrimSuffix(*base, "/")+"/"),
		option.WithAPIKey(*key),
		option.WithRequestTimeout(5*time.Minute),
	)
	params := openai.ChatCompletionNewParams{
		Model:         *model,
		Messages:      []openai.ChatCompletionMessageParamUnion{openai.UserMessage(flag.Arg(0))},
		StreamOptions: openai.ChatCompletionStreamOptionsParam{IncludeUsage: openai.Bool(true)},
	}
	ask := askStreaming
	if !*stream {
		ask = askOnce
	}
	completion, err := ask(context.Background(), client, params, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-client:", err)
		os.Exit(1)
	}
	report(completion, os.Stdout, os.Stderr)
}

// askStreaming streams the reply, writing the answer to out and the
// reasoning to log as they arrive, and returns what
// openai.ChatCompletionAccumulator assembled.
func askStreaming(ctx context.Context, client openai.Client, params openai.ChatCompletionNewParams, out, log io.Writer) (*openai.ChatCompletion, error) {
	stream := client.Chat.Completions.NewStreaming(ctx, params)
	defer stream.Close()
	var acc openai.ChatCompletionAccumulator
	thinking := false
	for stream.Next() {
		chunk := stream.Current()
		acc.AddChunk(chunk)
		if len(chunk.Choices) == 0 {
			continue
		}
		delta := chunk.Choices[0].Delta
		// reasoning_content is not part of the SDK's types: it is kept as
		// an extra field.
		if r := extraString(delta.JSON.ExtraFields["reasoning_content"]); r != "" {
			if !thinking {
				fmt.Fprint(log, "[reasoning] ")
				thinking = true
			}
			fmt.Fprint(log, r)
		}
		fmt.Fprint(out, delta.Content)
	}
	if thinking {
		fmt.Fprintln(log)
	}
	if err := stream.Err(); err != nil {
		fmt.Fprintln(out)
		return nil, err
	}
	return &acc.ChatCompletion, nil
}

// askOnce asks for one chat.completion and writes its answer to out.
func askOnce(ctx context.Context, client openai.Client, params openai.ChatCompletionNewParams, out, log io.Writer) (*openai.ChatCompletion, error) {
	completion, err := client.Chat.Completions.New(ctx, params)
	if err != nil {
		return nil, err
	}
	if len(completion.Choices) == 0 {
		return nil, fmt.Errorf("no choices in %s", completion.RawJSON())
	}
	msg := completion.Choices[0].Message
	if r := extraString(msg.JSON.ExtraFields["reasoning_content"]); r != "" {
		fmt.Fprintf(log, "[reasoning] %s\n", r)
	}
	fmt.Fprint(out, msg.Content)
	return completion, nil
}

// report writes the tool calls and the finish reason to out, the usage to log.
func report(c *openai.ChatCompletion, out, log io.Writer) {
	fmt.Fprintln(out, "\n---")
	if len(c.Choices) > 0 {
		for _, call := range c.Choices[0].Message.ToolCalls {
			fmt.Fprintf(out, "tool_call %s %s\n", call.Function.Name, oneLine(call.Function.Arguments))
		}
		fmt.Fprintf(out, "finish_reason %s\n", c.Choices[0].FinishReason)
	}
	fmt.Fprintf(log, "[usage] prompt %d, completion %d, total %d tokens\n", c.Usage.PromptTokens, c.Usage.CompletionTokens, c.Usage.TotalTokens)
}

// oneLine compacts JSON arguments onto one line (others are kept as is).
func oneLine(args string) string {
	var b bytes.Buffer
	if json.Compact(&b, []byte(args)) != nil {
		return args
	}
	return b.String()
}

// extraString decodes a string field the SDK keeps raw.
func extraString(f respjson.Field) string {
	var s string
	if f.Raw() == "" || json.Unmarshal([]byte(f.Raw()), &s) != nil {
		return ""
	}
	return s
}
