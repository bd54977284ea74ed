package thinktags

import "strings"

// Family is a row of the table of model families whose chat template opens
// <think> in the prompt, so that their raw content starts inside the
// reasoning and only </think> appears (PARSING.md §3, item 5). Under think_tags
// auto, a reply from one of them is read as prefilled.
//
// Only families that always reason belong here: a hybrid model (Qwen3,
// DeepSeek V3.1) whose template opens <think> only when thinking is on
// writes its own tags or none, which auto reads without help, and reading
// a reply that has no reasoning as prefilled would show its answer as
// reasoning first.
type Family struct {
	// Contains is matched, case-insensitively, against the model name the
	// upstream reports ("deepseek-ai/DeepSeek-R1-Distill-Qwen-7B",
	// "deepseek-r1:14b", "QwQ-32B-Q4_K_M.gguf").
	Contains string
	// Unless excludes names that contain it as well.
	Unless string
}

// Families is the table. Each row's template adds <think>\n after the
// assistant header (the models' tokenizer_config.json chat_template).
var Families = []Family{
	{Contains: "deepseek-r1"},            // DeepSeek-R1, -0528, the R1-Distill models
	{Contains: "r1-1776"},                // Perplexity's R1 post-training
	{Contains: "qwq", Unless: "preview"}, // QwQ-32B (the preview wrote no tags)
	{Contains: "thinking-2507"},          // Qwen3-*-Thinking-2507
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
