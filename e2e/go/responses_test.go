package e2e

// The OpenAI Responses API (request_format and protocol responses) with
// openai-go: Responses.NewStreaming, every event fed to
// responses.ResponseAccumulator (the SDK's accumulator, which takes the
// same response.* events its WebSocket mode receives), Responses.New,
// and a broken upstream.

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

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/responses"
)

// responsesClient talks to the responses route of a format, a mock and a
// chunk size.
func responsesClient(format, mock string, chunk int) openai.Client {
	return openai.NewClient(
		option.WithBaseURL(fmt.Sprintf("%s/responses/%s/%s/%s/v1/", base(), format, mock, chunkPath(chunk))),
		option.WithAPIKey("sk-e2e"),
		option.WithMaxRetries(0),
		option.WithRequestTimeout(30*time.Second),
	)
}

// responsesParams is a request with instructions, a developer and a user
// message, and web_search, a hosted tool the route leaves out.
func responsesParams() responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model:        "gpt-e2e",
		Instructions: openai.String("Be brief."),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage("Answer in the format you were told.", responses.EasyInputMessageRoleDeveloper),
			responses.ResponseInputItemParamOfMessage("三分化训练怎么安排？", responses.EasyInputMessageRoleUser),
		}},
		Tools: []responses.ToolUnionParam{responses.ToolParamOfWebSearch(responses.WebSearchToolTypeWebSearch)},
	}
}

// assembledOutput is what a client reads from a Response's output.
type assembledOutput struct {
	answer    string
	reasoning []string // summary and reasoning_text parts, in order
	tools     []toolCall
}

func readOutput(t *testing.T, out []responses.ResponseOutputItemUnion) assembledOutput {
	t.Helper()
	got := assembledOutput{tools: []toolCall{}}
	ids := map[string]bool{}
	for _, item := range out {
		if item.Status != "completed" {
			t.Errorf("%s item %s is %q", item.Type, item.ID, item.Status)
		}
		switch item.Type {
		case "message":
			m := item.AsMessage()
			for _, c := range m.Content {
				if c.Type != "output_text" {
					t.Errorf("message content %q", c.Type)
				}
				got.answer += c.Text
			}
		case "reasoning":
			r := item.AsReasoning()
			for _, s := range r.Summary {
				if !strings.HasPrefix(s.Text, "**") {
					t.Errorf("summary part %q is not a titled phase", s.Text)
				}
				got.reasoning = append(got.reasoning, s.Text)
			}
			for _, c := range r.Content {
				if c.Type != "reasoning_text" {
					t.Errorf("reasoning content %q", c.Type)
				}
				got.reasoning = append(got.reasoning, c.Text)
			}
		case "function_call":
			fc := item.AsFunctionCall()
			if fc.CallID == "" || ids[fc.CallID] || !strings.HasPrefix(fc.ID, "fc_") {
				t.Errorf("function call id %q call_id %q", fc.ID, fc.CallID)
			}
			ids[fc.CallID] = true
			var in any
			if err := json.Unmarshal([]byte(fc.Arguments), &in); err != nil {
				t.Errorf("function call %s arguments %q: %v", fc.Name, fc.Arguments, err)
			}
			got.tools = append(got.tools, toolCall{fc.Name, in})
		default:
			t.Errorf("output item of type %q", item.Type)
		}
	}
	return got
}

// checkResponseOutput compares a completed Response with the mock's reply.
func checkResponseOutput(t *testing.T, r *responses.Response, w want) {
	t.Helper()
	if r.Status != "completed" || r.Model != mockModel || !strings.HasPrefix(r.ID, "resp_") {
		t.Errorf("response %s status %q model %q", r.ID, r.Status, r.Model)
	}
	got := readOutput(t, r.Output)
	wantAnswer := ""
	if w.Answer != nil {
		wantAnswer = *w.Answer
	}
	if got.answer != wantAnswer || r.OutputText() != wantAnswer {
		t.Errorf("output text:\n%q\nwant:\n%q", got.answer, wantAnswer)
	}
	if strings.Join(got.reasoning, "\n\n") != w.Reasoning {
		t.Errorf("reasoning parts %q, want joined %q", got.reasoning, w.Reasoning)
	}
	if !reflect.DeepEqual(got.tools, w.Tools) {
		t.Errorf("function calls %#v, want %#v", got.tools, w.Tools)
	}
	u := r.Usage
	if u.InputTokens <= 0 || u.OutputTokens <= 0 || u.TotalTokens != u.InputTokens+u.OutputTokens {
		t.Errorf("usage %+v", u)
	}
	// The hosted web_search tool is left out of the tools offered, so the
	// Response repeats none (Open Responses: its tools are function tools).
	if r.Instructions.OfString != "Be brief." || len(r.Tools) != 0 || !strings.Contains(r.RawJSON(), `"store":true`) {
		t.Errorf("the request is not echoed: instructions %q tools %+v", r.Instructions.OfString, r.Tools)
	}
}

func TestResponsesNewStreamingAccumulator(t *testing.T) {
	for _, tc := range routeCases(t) {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.format, tc.mock, chunkPath(tc.chunk)), func(t *testing.T) {
			t.Parallel()
			c := responsesClient(tc.format, tc.mock, tc.chunk)
			stream := c.Responses.NewStreaming(context.Background(), responsesParams())
			defer stream.Close()
			var acc responses.ResponseAccumulator
			var answer strings.Builder
			n := int64(0)
			for stream.Next() {
				ev := stream.Current()
				if ev.SequenceNumber != n {
					t.Errorf("event %s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, n)
				}
				n++
				if ev.Type == "response.output_text.delta" {
					answer.WriteString(ev.Delta)
				}
				var wsEvent responses.ResponsesServerEventUnion
				if err := json.Unmarshal([]byte(ev.RawJSON()), &wsEvent); err != nil {
					t.Fatalf("event %s: %v", ev.Type, err)
				}
				if err := acc.AddEvent(wsEvent); err != nil {
					t.Fatalf("the accumulator rejected event %d %s: %v: %s", n-1, ev.Type, err, ev.RawJSON())
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatalf("stream: %v", err)
			}
			snap := acc.Snapshot()
			if snap.TerminalEvent != "response.completed" {
				t.Fatalf("terminal event %q", snap.TerminalEvent)
			}
			wantAnswer := ""
			if tc.want.Answer != nil {
				wantAnswer = *tc.want.Answer
			}
			if snap.OutputText() != wantAnswer || answer.String() != wantAnswer {
				t.Errorf("accumulated text %q, deltas %q, want %q", snap.OutputText(), answer.String(), wantAnswer)
			}
			var calls []toolCall
			for _, o := range snap.Output {
				if o.Type == "function_call" {
					var in any
					if err := json.Unmarshal([]byte(o.Arguments), &in); err != nil {
						t.Errorf("accumulated arguments of %s: %v", o.Name, err)
					}
					calls = append(calls, toolCall{o.Name, in})
				}
			}
			if len(calls) != len(tc.want.Tools) || len(calls) > 0 && !reflect.DeepEqual(calls, tc.want.Tools) {
				t.Errorf("accumulated calls %#v, want %#v", calls, tc.want.Tools)
			}
			r, err := acc.ReconstructedResponse()
			if err != nil {
				t.Fatal(err)
			}
			checkResponseOutput(t, r, tc.want)
		})
	}
}

func TestResponsesNew(t *testing.T) {
	for _, tc := range routeCases(t) {
		t.Run(fmt.Sprintf("%s/%s/%s", tc.format, tc.mock, chunkPath(tc.chunk)), func(t *testing.T) {
			t.Parallel()
			c := responsesClient(tc.format, tc.mock, tc.chunk)
			var res *http.Response
			r, err := c.Responses.New(context.Background(), responsesParams(), option.WithResponseInto(&res))
			if err != nil {
				t.Fatal(err)
			}
			if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") {
				t.Errorf("status %d, Content-Type %q", res.StatusCode, res.Header.Get("Content-Type"))
			}
			checkResponseOutput(t, r, tc.want)
		})
	}
}

func TestResponsesTruncatedUpstream(t *testing.T) {
	loadMocks(t)
	for name, c := range cuts {
		format := mocks[c.Full].Format
		for _, chunk := range cutChunks {
			t.Run(fmt.Sprintf("NewStreaming/%s/%s/%d", format, name, chunk), func(t *testing.T) {
				t.Parallel()
				c := responsesClient(format, name, chunk)
				stream := c.Responses.NewStreaming(context.Background(), responsesParams())
				defer stream.Close()
				var acc responses.ResponseAccumulator
				var answer strings.Builder
				for stream.Next() {
					ev := stream.Current()
					if ev.Type == "response.output_text.delta" {
						answer.WriteString(ev.Delta)
					}
					var wsEvent responses.ResponsesServerEventUnion
					if err := json.Unmarshal([]byte(ev.RawJSON()), &wsEvent); err == nil {
						_ = acc.AddEvent(wsEvent)
					}
				}
				// response.failed ends the turn; the error event after it
				// makes the stream fail.
				var se *ssestream.StreamError
				if err := stream.Err(); !errors.As(err, &se) || !strings.Contains(err.Error(), "upstream: the connection broke off mid-reply") {
					t.Errorf("stream.Err() = %v, want a StreamError naming the cut", err)
				}
				if got := acc.Snapshot().TerminalEvent; got != "response.failed" {
					t.Errorf("terminal event %q, want response.failed", got)
				}
				if want := partialAnswer(t, name, chunk); want == "" || !matchesPartial(answer.String(), want) {
					t.Errorf("answer up to the cut %q, want %q", answer.String(), want)
				}
			})
		}
	}

	t.Run("New", func(t *testing.T) {
		c := responsesClient("text", "text_cut", 13)
		r, err := c.Responses.New(context.Background(), responsesParams())
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadGateway || apiErr.Code != "upstream_error" {
			t.Errorf("New: %v (response %v), want a 502 *openai.Error", err, r)
		}
	})

	t.Run("previous_response_id", func(t *testing.T) {
		p := responsesParams()
		p.PreviousResponseID = openai.String("resp_unknown")
		c := responsesClient("text", "text", 13)
		_, err := c.Responses.New(context.Background(), p)
		var apiErr *openai.Error
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusBadRequest || apiErr.Code != "previous_response_not_found" || apiErr.Param != "previous_response_id" {
			t.Errorf("New: %v, want 400 previous_response_not_found", err)
		}
	})
}

// TestResponsesChainGetDeleteCompact: openai-go continues a stored
// response with previous_response_id, gets and deletes it, compacts a
// conversation and continues from the compaction item (CONTRACT §14).
func TestResponsesChainGetDeleteCompact(t *testing.T) {
	ctx := context.Background()
	c := responsesClient("text", "text", 13)
	first, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-e2e",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("Remember: cobalt.")}})
	if err != nil {
		t.Fatal(err)
	}
	second, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-e2e", PreviousResponseID: openai.String(first.ID),
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String("What was it?")}})
	if err != nil || second.PreviousResponseID != first.ID {
		t.Fatalf("continuing: %v %+v", err, second)
	}
	got, err := c.Responses.Get(ctx, first.ID, responses.ResponseGetParams{})
	if err != nil || got.ID != first.ID || got.OutputText() != first.OutputText() {
		t.Fatalf("Get: %v %+v", err, got)
	}
	if err := c.Responses.Delete(ctx, first.ID); err != nil {
		t.Fatal(err)
	}
	var apiErr *openai.Error
	if _, err := c.Responses.Get(ctx, first.ID, responses.ResponseGetParams{}); !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusNotFound {
		t.Errorf("Get after Delete: %v", err)
	}
	compacted, err := c.Responses.Compact(ctx, responses.ResponseCompactParams{Model: "gpt-e2e",
		Input: responses.ResponseCompactParamsInputUnion{OfString: openai.String("We launch on Tuesday.")}})
	if err != nil || len(compacted.Output) != 1 || compacted.Output[0].Type != "compaction" || compacted.Output[0].EncryptedContent == "" {
		t.Fatalf("Compact: %v %+v", err, compacted)
	}
	var item responses.ResponseInputItemUnionParam
	if err := json.Unmarshal([]byte(compacted.Output[0].RawJSON()), &item); err != nil {
		t.Fatal(err)
	}
	next, err := c.Responses.New(ctx, responses.ResponseNewParams{Model: "gpt-e2e",
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{item,
			responses.ResponseInputItemParamOfMessage("When?", responses.EasyInputMessageRoleUser)}}})
	if err != nil || next.Status != responses.ResponseStatusCompleted {
		t.Errorf("continuing from the compaction: %v %+v", err, next)
	}
}
