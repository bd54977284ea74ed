package thinktags

import (
	"regexp"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// step is one call the pipeline makes: content, or (when native is set)
// native reasoning arriving.
type step struct {
	content string
	native  bool
	routed  string
}

func runSteps(mode transform.ThinkTags, steps []step) string {
	p := New(format.NewText(), mode, false, transform.Limits{})
	var evs []transform.Event
	emit := func(ev transform.Event) { evs = append(evs, ev.Clone()) }
	for _, s := range steps {
		switch {
		case s.native:
			p.NativeReasoning()
		case s.routed != "":
			p.Routed(s.routed)
		default:
			p.Feed([]byte(s.content), emit)
		}
	}
	p.Close(emit)
	norm, _ := transformtest.Normalize(evs)
	return transformtest.Format(norm)
}

// TestNativeReasoning: what the content's tags mean when the upstream also
// sent reasoning in its own field (PARSING.md OA04, OA05).
func TestNativeReasoning(t *testing.T) {
	cases := []struct {
		name  string
		mode  transform.ThinkTags
		steps []step
		want  string
	}{
		{"OA04 an echoed <think> is dropped", transform.ThinkTagsAuto,
			[]step{{content: "<think>"}, {native: true}, {content: "Hello"}}, `F{ F"Hello" F}`},
		{"OA04 split inside the tag", transform.ThinkTagsAuto,
			[]step{{content: "<thi"}, {native: true}, {content: "nk>\nHello"}}, `F{ F"Hello" F}`},
		{"an echoed empty block", transform.ThinkTagsPrefilled,
			[]step{{content: "<think>"}, {native: true}, {content: "\n</think>\n\nHello"}}, `F{ F"Hello" F}`},
		{"OA05 an orphan closer is dropped", transform.ThinkTagsAuto,
			[]step{{native: true}, {content: "</th"}, {content: "ink>\n\nHello"}}, `F{ F"Hello" F}`},
		{"a block after native reasoning is reasoning", transform.ThinkTagsAuto,
			[]step{{native: true}, {content: "<think>t</think>a"}}, `R{ R"t" R} F{ F"a" F}`},
		{"native first: prefilled content is the answer", transform.ThinkTagsPrefilled,
			[]step{{native: true}, {content: "The answer."}}, `F{ F"The answer." F}`},
		{"native later joins the reasoning", transform.ThinkTagsPrefilled,
			[]step{{content: "r"}, {native: true}, {content: "</think>a"}}, `R{ R"r" R} F{ F"a" F}`},
		{"an echo at the end", transform.ThinkTagsAuto,
			[]step{{content: "<think>"}, {native: true}}, ``},
		{"an echo whose closer was cut", transform.ThinkTagsAuto,
			[]step{{content: "<think>"}, {native: true}, {content: "</th"}}, `F{ F"</th" F}`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := runSteps(tc.mode, tc.steps); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}

// TestFamilies: under auto, the models whose template opens <think> are
// read as prefilled; others, and every model under prefilled or off, as
// configured.
func TestFamilies(t *testing.T) {
	const reply = "r</think>\n\na"
	prefilled := `R{ R"r" R} F{ F"a" F}`
	asText := `F{ F"r</think>\n\na" F}`
	cases := []struct {
		model string
		want  string
	}{
		{"deepseek-ai/DeepSeek-R1-Distill-Qwen-7B", prefilled},
		{"deepseek-r1:14b", prefilled},
		{"DeepSeek-R1-0528-Qwen3-8B-Q4_K_M.gguf", prefilled},
		{"perplexity-ai/r1-1776", prefilled},
		{"Qwen/QwQ-32B", prefilled},
		{"qwq:32b", prefilled},
		{"Qwen/QwQ-32B-Preview", asText},
		{"Qwen/Qwen3-235B-A22B-Thinking-2507", prefilled},
		{"Qwen/Qwen3-8B", asText},
		// Issue 22: the families served today whose template opens <think>.
		{"Qwen/Qwen3.5-397B-A17B", prefilled},
		{"qwen3.5:35b-a3b", prefilled},
		{"deepseek-ai/DeepSeek-V3.2-Exp", prefilled},
		{"MiniMaxAI/MiniMax-M2", prefilled},
		{"deepseek-ai/DeepSeek-V3.1", asText},
		{"zai-org/GLM-4.6", asText},
		{"moonshotai/Kimi-K2-Thinking", asText},
		{"openai/gpt-oss-120b", asText},
		{"deepseek-chat", asText},
		{"gpt-4o-mini", asText},
		{"", asText},
	}
	for _, tc := range cases {
		t.Run(tc.model, func(t *testing.T) {
			if got := runSteps(transform.ThinkTagsAuto, []step{{routed: tc.model}, {content: reply}}); got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
	// A route adds a family by pattern (think_prefilled).
	p := New(format.NewText(), transform.ThinkTagsAuto, false, transform.Limits{}).AddPrefilled([]*regexp.Regexp{regexp.MustCompile("(?i)acme-reasoner-v[0-9]")})
	for model, want := range map[string]string{"ACME-Reasoner-V2-GGUF": prefilled, "acme-reasoner": asText, "": asText} {
		p.Reset()
		var evs []transform.Event
		emit := func(ev transform.Event) { evs = append(evs, ev.Clone()) }
		p.Routed(model)
		p.Feed([]byte(reply), emit)
		p.Close(emit)
		norm, _ := transformtest.Normalize(evs)
		if got := transformtest.Format(norm); got != want {
			t.Errorf("route pattern, model %q: got %s, want %s", model, got, want)
		}
	}
	// The model is known before the content or not at all.
	if got := runSteps(transform.ThinkTagsAuto, []step{{content: "r"}, {routed: "deepseek-r1"}, {content: "</think>a"}}); got != `F{ F"r</think>a" F}` {
		t.Errorf("routed after the content: %s", got)
	}
}
