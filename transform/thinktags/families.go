package thinktags

import "strings"

// Family is a row of the table of model families whose chat template opens
// <think> in the prompt, so that their raw content starts inside the
// reasoning and only </think> appears (PARSING.md §3, item 5). Under think_tags
// auto, a reply from one of them is read as prefilled.
//
// A family belongs here when its template's generation prompt ends with
// <think> by default: always (R1, QwQ, the Thinking-2507 models,
// MiniMax-M2), or unless the request turns thinking off (Qwen3.5,
// DeepSeek-V3.2, whose default is on). A reply of the latter with thinking
// turned off has no </think>: it is reported as think_unclosed and
// repeated as the answer, so nothing is lost; a route that turns thinking
// off for such a model sets think_tags off. Families whose model writes
// its own <think> (Qwen3 hybrid, GLM-4.5/4.6, Kimi K2 Thinking), or whose
// template opens it only when the request asks (DeepSeek-V3.1, default
// off), are read by auto without help and are not here; gpt-oss writes
// Harmony channels, not <think>. A route adds a family with
// think_prefilled (transform.ParserOptions.ThinkPrefilled).
type Family struct {
	// Contains is matched, case-insensitively, against the model name the
	// upstream reports ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
	// "deepseek-r1:14b", "QwQ-32B-Q4_K_M.gguf").
	Contains string
	// Unless excludes names that contain it as well.
	Unless string
}

// Families is the table. Each row's comment says what its chat template's
// generation prompt ends with (the models' tokenizer_config.json or
// chat_template.jinja; llama.cpp keeps copies in models/templates).
var Families = []Family{
	{Contains: "deepseek-r1"},            // DeepSeek-R1, -0528, the R1-Distill models: "<｜Assistant｜><think>\n"
	{Contains: "r1-1776"},                // Perplexity's R1 post-training, R1's template
	{Contains: "qwq", Unless: "preview"}, // QwQ-32B: "<|im_start|>assistant\n<think>\n" (the preview wrote no tags)
	{Contains: "thinking-2507"},          // Qwen3-*-Thinking-2507: "<|im_start|>assistant\n<think>\n"
	{Contains: "qwen3.5"},                // Qwen3.5: "<|im_start|>assistant\n<think>\n" while enable_thinking (the default)
	{Contains: "deepseek-v3.2"},          // DeepSeek-V3.2 (-Exp): "<｜Assistant｜><think>" while enable_thinking (the default)
	{Contains: "minimax-m2"},             // MiniMax-M2 and later M2 releases: "]~b]ai\n<think>\n"
}

// PrefillsThink reports whether model belongs to a family of the table.
func PrefillsThink(model string) bool {
	if model == "" {
		return false
	}
	m := strings.ToLower(model)
	for _, f := range Families {
		if strings.Contains(m, f.Contains) && (f.Unless == "" || !strings.Contains(m, f.Unless)) {
			return true
		}
	}
	return false
}
