package agui

import (
	"encoding/json"
	"math"
	"strconv"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/jsonout"
)

// What AG-UI has no event for travels in CUSTOM events {name, value}
// (CONTRACT.md §16), the protocol's extension point, which a client
// without a handler for them ignores (HttpAgent passes them to
// onCustomEvent and nothing else). Their names are "llmstream." and the
// kind; their values are shaped as jsonseq's events and aisdk's data
// parts:
//
//	llmstream.serp_summary  {text}
//	llmstream.serp_queries  {queries}
//	llmstream.clarify       {question, options, hint}
//	llmstream.artifacts     {items}   (the model's JSON, or its text when it is not JSON)
//	llmstream.violation     {code, offset, detail}
//
// A violation is sent when it is found, not collected for the end: a
// client sees it next to what caused it.

// appendCustomHead appends a CUSTOM event up to its value.
func appendCustomHead(dst []byte, name string) []byte {
	dst = append(dst, `data: {"type":"CUSTOM","name":"llmstream.`...)
	dst = append(dst, name...)
	return append(dst, `","value":`...)
}

// appendSerpSummary appends llmstream.serp_summary.
func (e *Encoder) appendSerpSummary(dst, text []byte) []byte {
	dst = appendCustomHead(dst, "serp_summary")
	dst = append(dst, `{"text":`...)
	dst = jsonout.AppendString(dst, text)
	return append(dst, "}}\n\n"...)
}

// appendSerpQueries appends llmstream.serp_queries.
func (e *Encoder) appendSerpQueries(dst []byte, queries []string) []byte {
	dst = appendCustomHead(dst, "serp_queries")
	dst = append(dst, `{"queries":`...)
	dst = jsonout.AppendStrings(dst, queries)
	return append(dst, "}}\n\n"...)
}

// appendClarify appends llmstream.clarify.
func (e *Encoder) appendClarify(dst []byte, c *transform.Clarify) []byte {
	if c == nil {
		return dst
	}
	dst = appendCustomHead(dst, "clarify")
	dst = append(dst, '{')
	dst = jsonout.AppendClarifyFields(dst, c)
	return append(dst, "}}\n\n"...)
}

// appendArtifacts appends llmstream.artifacts.
func (e *Encoder) appendArtifacts(dst, raw []byte) []byte {
	dst = appendCustomHead(dst, "artifacts")
	dst = append(dst, `{"items":`...)
	dst = jsonout.AppendOrString(dst, raw)
	return append(dst, "}}\n\n"...)
}

// appendViolation appends llmstream.violation.
func (e *Encoder) appendViolation(dst []byte, ev transform.Event) []byte {
	dst = appendCustomHead(dst, "violation")
	dst = append(dst, `{"code":`...)
	dst = jsonout.AppendStringS(dst, ev.Code)
	dst = append(dst, `,"offset":`...)
	dst = strconv.AppendInt(dst, ev.Offset, 10)
	dst = append(dst, `,"detail":`...)
	dst = jsonout.AppendString(dst, ev.Text)
	return append(dst, "}}\n\n"...)
}

// chatUsage is what a chat-completions usage object says of tokens
// (numbers as floats: some servers write 12.0).
type chatUsage struct {
	PromptTokens        *float64 `json:"prompt_tokens"`
	CompletionTokens    *float64 `json:"completion_tokens"`
	TotalTokens         *float64 `json:"total_tokens"`
	PromptTokensDetails *struct {
		CachedTokens *float64 `json:"cached_tokens"`
	} `json:"prompt_tokens_details"`
	CompletionTokensDetails *struct {
		ReasoningTokens *float64 `json:"reasoning_tokens"`
	} `json:"completion_tokens_details"`
}

// appendUsage appends `,"usage":[…]`, the run's usage as one AG-UI
// TokenUsage {provider, model, inputTokens, outputTokens, totalTokens,
// reasoningTokens, cachedInputTokens} (summed over the agent loop's
// rounds by the pipeline), with only the counts the upstream gave; the
// schemas want non-negative integers. Nothing when the upstream sent no
// usage, or none of those counts. It runs once per stream.
func (e *Encoder) appendUsage(dst []byte) []byte {
	var u chatUsage
	if len(e.usage) == 0 || json.Unmarshal(e.usage, &u) != nil {
		return dst
	}
	var cached, reasoning *float64
	if u.PromptTokensDetails != nil {
		cached = u.PromptTokensDetails.CachedTokens
	}
	if u.CompletionTokensDetails != nil {
		reasoning = u.CompletionTokensDetails.ReasoningTokens
	}
	counts := [...]struct {
		name string
		n    *float64
	}{
		{"inputTokens", u.PromptTokens}, {"outputTokens", u.CompletionTokens}, {"totalTokens", u.TotalTokens},
		{"reasoningTokens", reasoning}, {"cachedInputTokens", cached},
	}
	if u.TotalTokens == nil && u.PromptTokens != nil && u.CompletionTokens != nil {
		total := *u.PromptTokens + *u.CompletionTokens
		counts[2].n = &total
	}
	mark := len(dst)
	dst = append(dst, `,"usage":[{`...)
	first := true
	field := func(name string) {
		if !first {
			dst = append(dst, ',')
		}
		first = false
		dst = jsonout.AppendStringS(dst, name)
		dst = append(dst, ':')
	}
	if e.meta.Provider != "" {
		field("provider")
		dst = jsonout.AppendStringS(dst, e.meta.Provider)
	}
	model := e.model
	if model == "" {
		model = e.meta.Model
	}
	if model != "" {
		field("model")
		dst = jsonout.AppendStringS(dst, model)
	}
	n := 0
	for _, c := range counts {
		if c.n == nil {
			continue
		}
		n++
		field(c.name)
		dst = strconv.AppendInt(dst, tokenCount(*c.n), 10)
	}
	if n == 0 {
		return dst[:mark]
	}
	return append(dst, "}]"...)
}

// tokenCount is f as a count the schemas accept: an integer from 0 to
// 2^53-1.
func tokenCount(f float64) int64 {
	switch {
	case f != f || f < 0:
		return 0
	case f > 1<<53-1:
		return 1<<53 - 1
	}
	return int64(math.Round(f))
}
