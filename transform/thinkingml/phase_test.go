package thinkingml

import (
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// TestPhaseTags covers the <phase> attribute forms beyond TM21: what is
// held as a tag, what stays text.
func TestPhaseTags(t *testing.T) {
	tests := []struct {
		name, tag, want string
	}{
		{"canonical", `<phase id="1">`, `P{1 "A"}`},
		{"leading_zero", `<phase id="01">`, `P{1 "A"}`},
		{"extra_attr", `<phase id="1" kind="x">`, `V(attr_syntax@10:<phase id="1" kind="x">) P{1 "A"}`},
		{"spaces_around_eq", `<phase id = "1">`, `V(attr_syntax@10:<phase id = "1">) P{1 "A"}`},
		{"valueless", `<phase id>`, `V(attr_syntax@10:<phase id>) V(bad_phase_id@10) P{1 "A"}`},
		{"zero", `<phase id="0">`, `V(bad_phase_id@10:0) P{1 "A"}`},
		{"negative", `<phase id="-1">`, `V(bad_phase_id@10:-1) P{1 "A"}`},
		{"huge", `<phase id="12345678901">`, `V(bad_phase_id@10:12345678901) P{1 "A"}`},
		{"case", `<phase ID="1">`, `V(attr_syntax@10:<phase ID="1">) V(bad_phase_id@10) P{1 "A"}`},
		// Not a <phase> tag: text, which opens an implicit phase; the
		// <title> after it is then text too, and </title> misplaced.
		{"not_attrs", `<phase 1 of 3>`, `V(text_outside_phase@10) P{1 "Thought"} P1"<phase 1 of 3>" V(title_after_text@24) P1"<title>A" V(misplaced_tag@32:/title) P1"</title>"`},
		{"lt_in_value", `<phase id="<1">`, `V(text_outside_phase@10) P{1 "Thought"} P1"<phase id=\"<1\">" V(title_after_text@25) P1"<title>A" V(misplaced_tag@33:/title) P1"</title>"`},
		{"selfclose", `<phase/>`, `V(misplaced_tag@10:phase) V(text_outside_phase@10) P{1 "Thought"} P1"<phase/>" V(title_after_text@18) P1"<title>A" V(misplaced_tag@26:/title) P1"</title>"`},
		// Case matters (TM18): a mis-cased <Phase …> is reported and stays
		// text, so its phase is an implicit one.
		{"upper", `<Phase id="1">`, `V(miscased_tag@10:Phase) V(text_outside_phase@10) P{1 "Thought"} P1"<Phase id=\"1\">" V(title_after_text@24) P1"<title>A" V(misplaced_tag@32:/title) P1"</title>"`},
		{"upper_not_attrs", `<PHASE 1 of 3>`, `V(text_outside_phase@10) P{1 "Thought"} P1"<PHASE 1 of 3>" V(title_after_text@24) P1"<title>A" V(misplaced_tag@32:/title) P1"</title>"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			input := "<thinking>" + tt.tag + "<title>A</title></phase></thinking>"
			evs := transformtest.RunStrings(New(transform.ParserOptions{}), input)
			norm, _ := transformtest.Normalize(evs)
			// Keep the events up to the phase's end.
			var keep []transform.Event
			for _, ev := range norm {
				if ev.Kind == transform.KindThinkingStart {
					continue
				}
				if ev.Kind == transform.KindPhaseEnd {
					break
				}
				keep = append(keep, ev)
			}
			if got := transformtest.Format(keep); got != tt.want {
				t.Errorf("%s:\n want %s\n  got %s", input, tt.want, got)
			}
			if err := transformtest.SplitInvariant(factory(transform.ParserOptions{}), []byte(input), 3, 20); err != nil {
				t.Error(err)
			}
		})
	}
}
