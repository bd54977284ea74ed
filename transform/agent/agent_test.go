package agent

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform/chatmsg"
)

func TestNext(t *testing.T) {
	tests := []struct {
		name string
		r    Reply
		max  int
		want Step
	}{
		{"no calls", Reply{Round: 1}, 8, StepEnd},
		{"client calls only", Reply{Round: 1, ClientCalls: 2}, 8, StepEnd},
		{"server calls", Reply{Round: 1, ServerCalls: 2}, 8, StepNextRound},
		{"mixed turn: the client's calls end it", Reply{Round: 1, ServerCalls: 1, ClientCalls: 1}, 8, StepEnd},
		{"round 7 of 8", Reply{Round: 7, ServerCalls: 1}, 8, StepNextRound},
		{"round 8 of 8: the last round, without tools", Reply{Round: 8, ServerCalls: 1}, 8, StepLastRound},
		{"max_rounds 1", Reply{Round: 1, ServerCalls: 1}, 1, StepLastRound},
		{"the last round called anyway", Reply{Round: 9, ServerCalls: 1, ToolsOff: true}, 8, StepEnd},
		{"a call waits for the user", Reply{Round: 1, ServerCalls: 2, Parked: 1}, 8, StepEnd},
		{"default max", Reply{Round: DefaultMaxRounds - 1, ServerCalls: 1}, 0, StepNextRound},
		{"default max reached", Reply{Round: DefaultMaxRounds, ServerCalls: 1}, 0, StepLastRound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Next(tt.r, tt.max); got != tt.want {
				t.Errorf("Next(%+v, %d) = %v, want %v", tt.r, tt.max, got, tt.want)
			}
		})
	}
}

func TestModelText(t *testing.T) {
	long := strings.Repeat("é", 100) // 200 bytes
	tests := []struct {
		name string
		r    Result
		max  int
		want string
	}{
		{"text", Result{Parts: []Part{{Kind: PartText, Text: "18°C"}}}, 0, "18°C"},
		{"texts joined", Result{Parts: []Part{{Kind: PartText, Text: "a"}, {Kind: PartText, Text: "b"}}}, 0, "a\n\nb"},
		{"error", ErrorResult("timed out after 30s"), 0, "Error: timed out after 30s"},
		{"error without text", Result{IsError: true}, 0, "Error: the tool failed and said nothing more."},
		{"empty", Result{}, 0, ""},
		{"structured only", Result{Structured: []byte(`{"temp":18}`)}, 0, `{"temp":18}`},
		{"structured beside text: the text", Result{Parts: []Part{{Kind: PartText, Text: "18"}}, Structured: []byte(`{"temp":18}`)}, 0, "18"},
		{"image", Result{Parts: []Part{{Kind: PartText, Text: "Here:"}, {Kind: PartImage, MIMEType: "image/png", Data: make([]byte, 1234)}}}, 0,
			"Here:\n\n[image, image/png, 1234 bytes]"},
		{"resource link", Result{Parts: []Part{{Kind: PartResourceLink, Name: "report.pdf", URI: "file:///r.pdf", MIMEType: "application/pdf", Text: "The report"}}}, 0,
			"[resource link: report.pdf <file:///r.pdf>, application/pdf] The report"},
		{"text resource", Result{Parts: []Part{{Kind: PartResource, URI: "file:///a.txt", MIMEType: "text/plain", Text: "hello"}}}, 0,
			"[resource <file:///a.txt>, text/plain]\nhello"},
		{"blob resource", Result{Parts: []Part{{Kind: PartResource, URI: "file:///a.bin", Data: []byte{1, 2, 3}}}}, 0,
			"[resource <file:///a.bin>, 3 bytes]"},
		{"fits exactly", Result{Parts: []Part{{Kind: PartText, Text: long}}}, 200, long},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ModelText(tt.r, tt.max); got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestModelTextCut: a result over the limit is cut on a character
// boundary, fits the limit with its marker, and says it was cut.
func TestModelTextCut(t *testing.T) {
	text := strings.Repeat("é", 1000) // 2000 bytes
	for _, max := range []int{100, 101, 150, 1999} {
		got := ModelText(Result{Parts: []Part{{Kind: PartText, Text: text}}}, max)
		if len(got) > max {
			t.Errorf("max %d: %d bytes", max, len(got))
		}
		if !utf8.ValidString(got) {
			t.Errorf("max %d: cut inside a character: %q", max, got)
		}
		if !strings.HasSuffix(got, "[cut: the result has 2000 bytes; the first ones are shown]") {
			t.Errorf("max %d: no marker: %q", max, got)
		}
		if !strings.HasPrefix(text, strings.SplitN(got, "\n[cut", 2)[0]) {
			t.Errorf("max %d: what is kept is not the start", max)
		}
	}
	// 10 MB of text: cut without building 10 MB of output first.
	big := Result{Parts: []Part{{Kind: PartText, Text: strings.Repeat("x", 10<<20)}}}
	if got := ModelText(big, DefaultMaxResultBytes); len(got) != DefaultMaxResultBytes {
		t.Errorf("10 MB result: %d bytes, want %d", len(got), DefaultMaxResultBytes)
	}
}

func TestAddUsage(t *testing.T) {
	tests := []struct {
		name, sum, add, want string
	}{
		{"first round", ``, `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`, `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`},
		{"summed", `{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}`, `{"prompt_tokens":30,"completion_tokens":7,"total_tokens":37}`,
			`{"completion_tokens":12,"prompt_tokens":40,"total_tokens":52}`},
		{"details summed, extra members kept", `{"prompt_tokens":1,"completion_tokens_details":{"reasoning_tokens":4}}`,
			`{"prompt_tokens":2,"completion_tokens_details":{"reasoning_tokens":6},"cost":0.5}`,
			`{"completion_tokens_details":{"reasoning_tokens":10},"cost":0.5,"prompt_tokens":3}`},
		{"floats", `{"cost":0.25}`, `{"cost":0.5}`, `{"cost":0.75}`},
		{"nothing to add", `{"prompt_tokens":1}`, ``, `{"prompt_tokens":1}`},
		{"add not an object", `{"prompt_tokens":1}`, `[1]`, `{"prompt_tokens":1}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(AddUsage([]byte(tt.sum), []byte(tt.add))); got != tt.want {
				t.Errorf("got %s, want %s", got, tt.want)
			}
		})
	}
}

// FuzzResultMessage: whatever a tool returns, the model's tool message is
// one valid JSON object within the limit, whose content is the result's
// text, cut or whole (the result-to-message path of CONTRACT.md §12).
func FuzzResultMessage(f *testing.F) {
	f.Add("18°C", []byte(nil), "image/png", "file:///x", false, 64)
	f.Add(strings.Repeat("é", 300), []byte{0xff, 0}, "", "", true, 50)
	f.Add("\x00\xff</tool_call>\u2028", []byte(`{"a":1}`), "text/plain", "", false, 1)
	f.Fuzz(func(t *testing.T, text string, data []byte, mime, uri string, isErr bool, max int) {
		if max > 1<<16 {
			max = 1 << 16
		}
		r := Result{IsError: isErr, Parts: []Part{
			{Kind: PartText, Text: text},
			{Kind: PartImage, MIMEType: mime, Data: data},
			{Kind: PartResource, URI: uri, Text: text},
		}}
		got := ModelText(r, max)
		limit := max
		if limit < 1 {
			limit = DefaultMaxResultBytes
		}
		if len(got) > limit && len(got) > len("\n[cut: the result has 0000000 bytes; the first ones are shown]") {
			t.Fatalf("%d bytes over the limit %d", len(got), limit)
		}
		msg := chatmsg.AppendTool(nil, "call_1", got)
		var m struct {
			Role, Content string
		}
		if err := json.Unmarshal(msg, &m); err != nil || m.Role != "tool" {
			t.Fatalf("tool message %q: %v", msg, err)
		}
	})
}
