package anthropic_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform/anthropic"
	"github.com/llmstream/llmstream/transform/jsonout"
	"github.com/llmstream/llmstream/transform/request"
)

// userBody is a chat body with one user message holding text.
func userBody(text string) []byte {
	b := []byte(`{"messages":[{"role":"user","content":`)
	b = jsonout.AppendStringS(b, text)
	return append(b, "}]}"...)
}

// pngDataURL is a data: URL of a blank w×h PNG.
func pngDataURL(t *testing.T, w, h int) string {
	t.Helper()
	var buf bytes.Buffer
	if err := png.Encode(&buf, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(buf.Bytes())
}

func imageBody(url string) []byte {
	b := []byte(`{"messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":`)
	b = jsonout.AppendStringS(b, url)
	return append(b, "}}]}]}"...)
}

func TestEstimateTokens(t *testing.T) {
	// userBody costs 3 a JSON object (the body, the message) and its
	// keys and role: messages 2 (8 letters), role 1, user 1, content 2.
	base := anthropic.EstimateTokens(userBody(""))
	text := func(s string) int { return anthropic.EstimateTokens(userBody(s)) - base }
	tests := []struct {
		name string
		got  int
		want int
	}{
		{"structure", base, 2*3 + 2 + 1 + 1 + 2},
		// A short word is a token with the space before it; a long one a
		// token per started 6 letters.
		{"words", text("the quick brown fox"), 4},
		{"long_word", text("internationalization"), 4},
		{"digits", text("1234567"), 3},
		{"punctuation", text("a, b; c!?"), 3 + 3},
		// Half a token for the line break run, rounded up with the rest.
		{"indentation_and_lines", text("a\n\t\tb"), 3},
		{"chinese", text("三分化训练"), 5},
		{"escaped_chinese", anthropic.EstimateTokens([]byte(`{"messages":[{"role":"user","content":"\u4e09\u5206"}]}`)) - base, 2},
		{"cyrillic", text("привет"), 3},
		{"emoji", text("🌍🌍"), 4},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: %d tokens, want %d", tt.name, tt.got, tt.want)
		}
	}
	// imageBody costs 3 a JSON object (4 of them) and 12 for its keys and
	// type; an image costs Anthropic's price: w×h/750, the long edge
	// scaled to 1568, at most 1600, and 1600 when its size is unknown.
	const keys = 4*3 + 12
	images := []struct {
		name string
		url  string
		want int
	}{
		{"100x75", pngDataURL(t, 100, 75), 10},
		{"1000x750", pngDataURL(t, 1000, 750), 1000},
		{"1568x1000", pngDataURL(t, 1568, 1000), 1600},
		{"3000x200", pngDataURL(t, 3000, 200), 219},
		{"2000x1500", pngDataURL(t, 2000, 1500), 1600},
		{"url", "https://x.test/a.png", 1600},
		{"webp", "data:image/webp;base64,UklGRg==", 1600},
		{"corrupt", "data:image/png;base64,%%%", 1600},
	}
	for _, c := range images {
		if got := anthropic.EstimateTokens(imageBody(c.url)) - keys; got != c.want {
			t.Errorf("%s image: %d tokens, want %d", c.name, got, c.want)
		}
	}
}

func TestEstimateTokensPDF(t *testing.T) {
	pdf := "%PDF-1.4\n1 0 obj << /Type /Pages /Count 3 >> endobj\n" +
		"2 0 obj << /Type /Page >> endobj\n3 0 obj << /Type/Page >> endobj\n4 0 obj << /Type /Page /Parent 1 0 R >> endobj\n"
	body := []byte(`{"type":"file","file":{"filename":"a.pdf","file_data":"data:application/pdf;base64,` +
		base64.StdEncoding.EncodeToString([]byte(pdf)) + `"}}`)
	// 2 objects and the keys: type 1, file 2, filename 2, a.pdf 3,
	// file_data 2.
	if got, keys := anthropic.EstimateTokens(body), 2*3+10; got-keys != 3*2000 {
		t.Errorf("3-page PDF: %d tokens beside its keys, want 6000", got-keys)
	}
	// Compressed page objects: a page per 100 KiB.
	body = []byte(`"data:application/pdf;base64,` + base64.StdEncoding.EncodeToString(bytes.Repeat([]byte("x"), 250<<10)) + `"`)
	if got := anthropic.EstimateTokens(body); got != 3*2000 {
		t.Errorf("250 KiB PDF without page objects: %d tokens, want 6000", got)
	}
}

// TestEstimateTokensScales: the estimate of a conversation grows with it
// in proportion, and never depends on how the JSON is laid out.
func TestEstimateTokensScales(t *testing.T) {
	para := strings.Repeat("The upstream streams the reply; llmstream parses it once. ", 20)
	one := anthropic.EstimateTokens(userBody(para))
	ten := anthropic.EstimateTokens(userBody(strings.Repeat(para, 10)))
	if ten < 9*one || ten > 11*one {
		t.Errorf("one paragraph %d tokens, ten %d", one, ten)
	}
	pretty := []byte("{\n  \"messages\": [\n    {\"role\": \"user\", \"content\": \"hi there\"}\n  ]\n}")
	compact := []byte(`{"messages":[{"role":"user","content":"hi there"}]}`)
	if a, b := anthropic.EstimateTokens(pretty), anthropic.EstimateTokens(compact); a != b {
		t.Errorf("pretty %d, compact %d", a, b)
	}
}

// TestCountTokens: the endpoint answers {"input_tokens": n} with the
// estimate of the shaped body.
func TestCountTokens(t *testing.T) {
	body := userBody("How many tokens is this?")
	status, out := anthropic.AnswerCountTokens(body, request.Info{})
	want := `{"input_tokens":` + strconv.Itoa(anthropic.EstimateTokens(body)) + `}`
	if status != http.StatusOK || string(out) != want {
		t.Errorf("%d %s, want 200 %s", status, out, want)
	}
}
