package thinkingml

import (
	"bytes"
	"strconv"
	"testing"

	"github.com/llmstream/llmstream/transform"
)

// realisticReply builds a well-formed reply of about size bytes: a short
// <think> and <serp>, phases of mixed Chinese and ASCII text (about half),
// then a Markdown answer with code, lists and stray '<', and the
// serp_queries comment.
func realisticReply(size int) []byte {
	const zh = "用户希望每周训练三天，目标是增肌；需要说明动作选择、训练容量与恢复。"
	const en = "Plan the split: push, pull, legs; keep volume near 10-20 sets per muscle per week. "
	var b bytes.Buffer
	b.WriteString("<think>\n先确认目标，再规划输出。Check the user's goal first.\n</think>\n")
	b.WriteString("<serp>三分化训练计划 增肌 频率</serp>\n<thinking>\n")
	for id := 1; b.Len() < size/2; id++ {
		b.WriteString(`  <phase id="` + strconv.Itoa(id) + `">` + "\n    <title>阶段 " + strconv.Itoa(id) + " 分析</title>\n")
		for range 12 {
			b.WriteString("    " + zh + en + "\n")
		}
		b.WriteString("  </phase>\n")
	}
	b.WriteString("</thinking>\n<final>\n# 三分化训练方案\n\n")
	for b.Len() < size-200 {
		b.WriteString("- **第 1 天（推）**：卧推 4×8、推举 3×10 — keep a < b && c > d in mind.\n")
		b.WriteString("```java\nList<String> days = List.of(\"push\", \"pull\");\n```\n\n")
		b.WriteString(zh + "\n\n")
	}
	b.WriteString("<!-- <serp_queries>\n[\"三分化训练计划怎么安排\",\"三分化训练动作选择\"]\n</serp_queries> -->\n</final>\n")
	return b.Bytes()
}

func BenchmarkParser(b *testing.B) {
	for _, bc := range []struct {
		size, delta int
	}{
		{1 << 20, 1}, {1 << 20, 16}, {1 << 20, 256}, {1 << 20, 4096},
		{4 << 20, 256}, {4 << 20, 4096},
	} {
		reply := realisticReply(bc.size)
		b.Run(strconv.Itoa(bc.size>>20)+"MiB/delta="+strconv.Itoa(bc.delta), func(b *testing.B) {
			p := New(transform.ParserOptions{})
			n := 0
			emit := func(ev transform.Event) { n += len(ev.Text) }
			b.SetBytes(int64(len(reply)))
			b.ReportAllocs()
			for b.Loop() {
				p.Reset()
				for rest := reply; len(rest) > 0; {
					k := min(bc.delta, len(rest))
					p.Feed(rest[:k], emit)
					rest = rest[k:]
				}
				p.Close(emit)
			}
			b.ReportMetric(float64(len(reply)/bc.delta), "deltas/op")
		})
	}
}

// TestSteadyStateAllocs checks that feeding deltas allocates nothing once
// the parser is inside a block (PARSING.md §5.8): text, tags that stay
// text, held tag candidates and runes cut across deltas.
func TestSteadyStateAllocs(t *testing.T) {
	emit := func(transform.Event) {}
	tests := []struct {
		name, prefix string
		deltas       []string
	}{
		{"think", "<think>", []string{"推理\xe4", "\xb8\xad文本 a <b>x</b> <fin", "al> y\n"}},
		{"phase", `<thinking><phase id="1"><title>T</title>`, []string{"正文 text \xe5", "\x85\xb6 <no", "te> a < b\n"}},
		{"final", head, []string{"答案 a <", "b && c > d\n\n", "  List<String> <!", "-- x --> ok\n"}},
		{"stray", "", []string{"plain \xe4", "\xbd\xa0 text <b>bold</b>\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := New(transform.ParserOptions{})
			p.Feed([]byte(tt.prefix), emit)
			deltas := make([][]byte, len(tt.deltas))
			for i, d := range tt.deltas {
				deltas[i] = []byte(d)
			}
			for _, d := range deltas { // warm up: violations, first growth
				p.Feed(d, emit)
			}
			allocs := testing.AllocsPerRun(200, func() {
				for _, d := range deltas {
					p.Feed(d, emit)
				}
			})
			if allocs != 0 {
				t.Errorf("%v allocations per round of %d deltas, want 0", allocs, len(deltas))
			}
		})
	}
}

// BenchmarkDecodeQueries decodes a serp_queries list as the comment holds
// it: escapes, Chinese, five queries.
func BenchmarkDecodeQueries(b *testing.B) {
	in := []byte(" [\"三分化训练计划怎么安排\", \"push pull legs\", \"caf\\u00e9 \\\"menu\\\"\",\n\"\\ud83d\\ude00 emoji\", \"q5\"] ")
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, ok := decodeQueries(in); !ok {
			b.Fatal("not decoded")
		}
	}
}
