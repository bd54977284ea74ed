package skillpet_test

import (
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/skillpet"
)

// TestNormalizeAskUserQuestions checks the ask_user event for tool
// arguments, rule by rule against specs/002 §5 normalizeAskUserQuestions
// (the expected outputs are what that TypeScript returns).
func TestNormalizeAskUserQuestions(t *testing.T) {
	tests := []struct {
		name, args, want string
	}{
		{"spec_example",
			`{"questions":[{"id":"genre","prompt":"你的故事是什么题材？","options":[{"id":"fantasy","label":"玄幻/修仙"},{"id":"other","label":"其他"}],"allowFreeText":true,"freeTextPlaceholder":"输入其他题材..."},{"id":"length","prompt":"目标篇幅","options":[{"id":"short","label":"短篇 5-10万字"}]}]}`,
			`[{"id":"genre","prompt":"你的故事是什么题材？","options":[{"id":"fantasy","label":"玄幻/修仙"},{"id":"other","label":"其他"}],"allowFreeText":true,"freeTextPlaceholder":"输入其他题材..."},{"id":"length","prompt":"目标篇幅","options":[{"id":"short","label":"短篇 5-10万字"}]}]`},
		{"prompt_aliases",
			`{"questions":[{"question":"a","options":["x"]},{"text":"b","options":["x"]},{"title":"c","options":["x"]},{"prompt":"","question":"d","options":["x"]}]}`,
			`[{"id":"q-0","prompt":"a","options":[{"id":"opt-0","label":"x"}]},{"id":"q-1","prompt":"b","options":[{"id":"opt-0","label":"x"}]},{"id":"q-2","prompt":"c","options":[{"id":"opt-0","label":"x"}]},{"id":"q-3","prompt":"d","options":[{"id":"opt-0","label":"x"}]}]`},
		{"no_prompt_skipped_index_kept",
			`{"questions":[{"options":["x"]},{"prompt":"b","options":["x"]}]}`,
			`[{"id":"q-1","prompt":"b","options":[{"id":"opt-0","label":"x"}]}]`},
		{"choices_alias",
			`{"questions":[{"prompt":"p","choices":["a","b"]}]}`,
			`[{"id":"q-0","prompt":"p","options":[{"id":"opt-0","label":"a"},{"id":"opt-1","label":"b"}]}]`},
		{"empty_options_array_is_truthy",
			`{"questions":[{"prompt":"p","options":[],"choices":["a"]}]}`,
			`[]`},
		{"options_not_array",
			`{"questions":[{"prompt":"p","options":"a,b","allowFreeText":true}]}`,
			`[{"id":"q-0","prompt":"p","options":[],"allowFreeText":true}]`},
		{"option_label_aliases",
			`{"questions":[{"prompt":"p","options":[{"text":"t"},{"name":"n","value":"v"},{"title":"ti","id":"i"},{"label":"","text":"l2"},{"id":"x"},7,null,["a"],{"label":3}]}]}`,
			`[{"id":"q-0","prompt":"p","options":[{"id":"opt-0","label":"t"},{"id":"v","label":"n"},{"id":"i","label":"ti"},{"id":"opt-3","label":"l2"},{"id":"opt-8","label":"3"}]}]`},
		{"string_option_empty_kept",
			`{"questions":[{"prompt":"p","options":["","a"]}]}`,
			`[{"id":"q-0","prompt":"p","options":[{"id":"opt-0","label":""},{"id":"opt-1","label":"a"}]}]`},
		{"free_text_aliases",
			`{"questions":[{"prompt":"a","allow_free_text":1},{"prompt":"b","freeText":"yes"},{"prompt":"c","allowFreeText":false,"options":["x"]},{"prompt":"d","allowFreeText":0}]}`,
			`[{"id":"q-0","prompt":"a","options":[],"allowFreeText":true},{"id":"q-1","prompt":"b","options":[],"allowFreeText":true},{"id":"q-2","prompt":"c","options":[{"id":"opt-0","label":"x"}]}]`},
		{"multiple_and_placeholder_aliases",
			`{"questions":[{"prompt":"p","options":["x"],"allow_multiple":true,"free_text_placeholder":"type"},{"prompt":"q","options":["x"],"allowMultiple":0,"freeTextPlaceholder":""}]}`,
			`[{"id":"q-0","prompt":"p","options":[{"id":"opt-0","label":"x"}],"allowMultiple":true,"freeTextPlaceholder":"type"},{"id":"q-1","prompt":"q","options":[{"id":"opt-0","label":"x"}]}]`},
		{"js_string_conversion",
			`{"questions":[{"id":12,"prompt":1.50,"options":[{"id":1e21,"label":true},{"value":1.5e-7,"label":[1,null,"a"]},{"label":{"a":1}}]}]}`,
			`[{"id":"12","prompt":"1.5","options":[{"id":"1e+21","label":"true"},{"id":"1.5e-7","label":"1,,a"},{"id":"opt-2","label":"[object Object]"}]}]`},
		{"non_object_questions_skipped",
			`{"questions":["q",null,3,[{"prompt":"x"}],{"prompt":"ok","options":["a"]}]}`,
			`[{"id":"q-4","prompt":"ok","options":[{"id":"opt-0","label":"a"}]}]`},
		{"bare_array", `[{"prompt":"p","options":["a"]}]`,
			`[{"id":"q-0","prompt":"p","options":[{"id":"opt-0","label":"a"}]}]`},
		{"questions_as_json_string", `{"questions":"[{\"prompt\":\"p\",\"options\":[\"a\"]}]"}`,
			`[{"id":"q-0","prompt":"p","options":[{"id":"opt-0","label":"a"}]}]`},
		{"questions_missing", `{"q":[]}`, `[]`},
		{"invalid_json", `{"questions":[`, `[]`},
		{"trailing_garbage", `{"questions":[]} x`, `[]`},
		{"duplicate_keys_last_wins", `{"questions":[{"prompt":"a","prompt":"b","options":["x"]}]}`,
			`[{"id":"q-0","prompt":"b","options":[{"id":"opt-0","label":"x"}]}]`},
		{"escapes", `{"questions":[{"prompt":"say \"hi\"\n\u2028","options":["<a>"]}]}`,
			`[{"id":"q-0","prompt":"say \"hi\"\n\u2028","options":[{"id":"opt-0","label":"<a>"}]}]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := encodertest.Run(skillpet.New(encodertest.Meta()), []transform.Event{encodertest.ToolEnd(0, "c", skillpet.AskUserTool, tt.args)})
			if err := checkStream(out); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			want := "event: ask_user\ndata: {\"questions\":" + tt.want + "}\n\n"
			if string(out) != want {
				t.Errorf("got\n%s\nwant\n%s", out, want)
			}
		})
	}
}

// TestNormalizeAskUserQuestionsGo checks the exported function on decoded
// values directly.
func TestNormalizeAskUserQuestionsGo(t *testing.T) {
	got := skillpet.NormalizeAskUserQuestions([]any{
		map[string]any{"question": "q", "choices": []any{"a", map[string]any{"label": "b", "id": "B"}}, "allowMultiple": true},
		"skip",
	})
	want := []skillpet.AskUserQuestion{{
		ID: "q-0", Prompt: "q", AllowMultiple: true,
		Options: []skillpet.AskUserOption{{ID: "opt-0", Label: "a"}, {ID: "B", Label: "b"}},
	}}
	if len(got) != 1 || got[0].ID != want[0].ID || got[0].Prompt != want[0].Prompt || !got[0].AllowMultiple ||
		len(got[0].Options) != 2 || got[0].Options[0] != want[0].Options[0] || got[0].Options[1] != want[0].Options[1] {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if got := skillpet.NormalizeAskUserQuestions(nil); len(got) != 0 {
		t.Errorf("nil questions gave %+v", got)
	}
}
