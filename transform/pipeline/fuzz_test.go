package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/format"
	"github.com/llmstream/llmstream/transform/parsekit"
	"github.com/llmstream/llmstream/transform/transformtest"
)

// FuzzRouter streams any upstream body through the router (format text;
// the first cut byte, when odd, adds think_tags prefilled and text_tools
// hermes),
// whole and cut where cuts says, and checks what holds whatever the
// upstream sent (CONTRACT.md §7): no panic, the same events for both cuts,
// well-formed events ending in exactly one finish or error, usage
// delivered at most once, a stray choice reported at most once, and no
// text delta that ends inside a UTF-8 sequence which the next delta of
// the same kind completes (the carries of reasoning and content).
func FuzzRouter(f *testing.F) {
	files, _ := filepath.Glob("../upstream/testdata/*.sse")
	for _, file := range files {
		body, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, []byte{7, 200, 31})
	}
	f.Add([]byte(sseBody(
		"{\"reasoning_content\":\"\xe6\x80\"}", "{\"reasoning\":\"\x9d\"}",
		`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"r"}]},{"type":"x","text":"t"},7]}`,
		`!{"choices":[{"index":1,"delta":{"content":"no"}},{"delta":{"content":"yes","tool_calls":[{"function":{"name":"f"}},{"id":"b","function":{"name":"g"}}]},"index":0}],"usage":{"a":1}}`,
		`{"tool_calls":[{"function":{"arguments":"{}"}},{"function":{"arguments":"[]"}}]}`,
		`!{"choices":[{"index":0,"delta":{},"finish_reason":"error","usage":{"b":2}}],"x_groq":{"usage":{"c":3}}}`)), []byte{40, 3})
	f.Add([]byte(sseBody(`{"content":"r</th"}`, `{"reasoning_content":"n"}`, `{"content":"ink>\n\nok <tool_call>{\"name\":\"f\",\"arguments\":{}}</tool_call>"}`, "finish:stop")), []byte{1, 30, 7})
	f.Fuzz(func(t *testing.T, body, cuts []byte) {
		cfg := Config{Format: format.Text}
		if len(cuts) > 0 && cuts[0]&1 != 0 {
			cfg.Parser = transform.ParserOptions{ThinkTags: transform.ThinkTagsPrefilled, TextTools: "hermes"}
		}
		whole := runConfigBytes(t, cfg, [][]byte{body})
		chunks := transformtest.CutsFromBytes(body, cuts)
		cut := runConfigBytes(t, cfg, chunks)
		if w, c := whole.notation(), cut.notation(); w != c {
			t.Fatalf("cut %s:\n got %s\nwant %s", transformtest.Describe(chunks), c, w)
		}
		evs := cut.events
		if err := transformtest.WellFormed(evs); err != nil {
			t.Fatal(err)
		}
		terminal := 0
		for _, ev := range evs {
			if ev.Kind == transform.KindFinish || ev.Kind == transform.KindError {
				terminal++
			}
		}
		if terminal != 1 || (evs[len(evs)-1].Kind != transform.KindFinish && evs[len(evs)-1].Kind != transform.KindError) {
			t.Fatalf("want exactly one finish or error, last: %s", transformtest.Format(evs))
		}
		checkCounts(t, evs, chunks)
		for i := 1; i < len(evs); i++ {
			prev, ev := evs[i-1], evs[i]
			if prev.Kind != ev.Kind || !ev.Kind.IsDelta() || prev.Index != ev.Index || len(ev.Text) == 0 {
				continue
			}
			if parsekit.IncompleteSuffix(prev.Text) > 0 && ev.Text[0]&0xC0 == 0x80 {
				t.Fatalf("a UTF-8 sequence split between two %s deltas %q and %q", ev.Kind, prev.Text, ev.Text)
			}
		}
	})
}
