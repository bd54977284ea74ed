package toolserver

import (
	"bytes"
	"io"
	"strings"
	"sync"
	"testing"
	"testing/iotest"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/llmstream/llmstream/transform/agent"
)

func TestSkimmer(t *testing.T) {
	big := strings.Repeat("x", 1000)
	tests := []struct {
		name, msg, want string // want: the replacement, "" = dropped
	}{
		{"id_after_result", `{"result":{"content":[{"type":"text","text":"` + big + `"}]},"jsonrpc":"2.0","id":7}`, `7`},
		{"id_first", `{"jsonrpc":"2.0","id":"abc","result":{"x":"` + big + `"}}`, `"abc"`},
		{"string_id_with_escapes", `{"id":"a\"b","result":"` + big + `"}`, `"a\"b"`},
		{"nested_ids_ignored", `{"result":{"id":99,"items":[{"id":5}],"t":"` + big + `"},"id":3}`, `3`},
		{"keys_in_strings_ignored", `{"result":"\"id\":42 ` + big + `","id":1}`, `1`},
		{"notification_dropped", `{"jsonrpc":"2.0","method":"notifications/message","params":{"data":"` + big + `"}}`, ``},
		{"request_dropped", `{"jsonrpc":"2.0","id":4,"method":"sampling/createMessage","params":{"x":"` + big + `"}}`, ``},
		{"no_id_dropped", `{"result":"` + big + `"}`, ``},
		{"null_id_dropped", `{"id":null,"error":{"message":"` + big + `"}}`, ``},
		{"spaces", `{ "id" : 12 , "result" : "` + big + `" }`, `12`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Any split of the message gives the same answer.
			for _, step := range []int{1, 7, len(tt.msg)} {
				var s skimmer
				for i := 0; i < len(tt.msg); i += step {
					s.feed([]byte(tt.msg[i:min(i+step, len(tt.msg))]))
				}
				got := s.replacement()
				if tt.want == "" {
					if got != nil {
						t.Errorf("step %d: replacement %s, want none", step, got)
					}
					continue
				}
				if want := string(tooLargeResponse([]byte(tt.want))); string(got) != want {
					t.Errorf("step %d: replacement %s, want %s", step, got, want)
				}
			}
		})
	}
}

func TestLineFrames(t *testing.T) {
	big := `{"result":{"t":"` + strings.Repeat("x", 5000) + `"},"jsonrpc":"2.0","id":9}`
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n" +
		"a log line, not JSON\n" +
		"\n" +
		big + "\n" +
		"{\"method\":\"notifications/x\",\"params\":{\"t\":\"" + strings.Repeat("y", 5000) + "\"}}\n" +
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}" // no final newline
	var drops []string
	f := newLineFrames(io.NopCloser(iotest.HalfReader(strings.NewReader(in))), 1000, func(what string, n int) {
		drops = append(drops, what)
	})
	out, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n" + string(tooLargeResponse([]byte("9"))) + "\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"
	if string(out) != want {
		t.Errorf("out =\n%s\nwant\n%s", out, want)
	}
	if len(drops) != 3 {
		t.Errorf("drops = %v, want the log line and two large messages", drops)
	}
	// What comes out is what the SDK reads: every line a message.
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if _, err := decodeMessage(line); err != nil {
			t.Errorf("line %q: %v", line, err)
		}
	}
}

func TestLineFramesBrokenMessage(t *testing.T) {
	in := "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n{\"jsonrpc\":\"2.0\",\"id\":\n{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{}}\n"
	f := newLineFrames(io.NopCloser(strings.NewReader(in)), 1000, func(string, int) {})
	out, err := io.ReadAll(f)
	if err != errBrokenMessage || string(out) != "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n" {
		t.Errorf("out %q, err %v", out, err)
	}
}

func TestSSEFrames(t *testing.T) {
	small := "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{}}\n\n"
	big := "event: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"result\":{\"t\":\"" + strings.Repeat("x", 200000) + "\"},\"id\":5}\n\n"
	after := "id: 3\ndata: {\"jsonrpc\":\"2.0\",\"result\":{},\"id\":6}\n\n"
	for _, bufSmall := range []bool{false, true} {
		var r io.Reader = strings.NewReader(small + big + after)
		if bufSmall {
			r = iotest.OneByteReader(r)
		}
		n := 0
		f := newSSEFrames(io.NopCloser(r), 1000, func(string, int) { n++ })
		out, err := io.ReadAll(f)
		if err != nil {
			t.Fatal(err)
		}
		want := small + "id: 2\ndata: " + string(tooLargeResponse([]byte("5"))) + "\n\n" + after
		if string(out) != want {
			t.Errorf("out =\n%.300s\nwant\n%.300s", out, want)
		}
		if n != 1 {
			t.Errorf("%d drops, want 1", n)
		}
	}
}

func decodeMessage(line string) (any, error) {
	return jsonrpcDecode([]byte(line))
}

func TestConvert(t *testing.T) {
	size := int64(12)
	res := &mcp.CallToolResult{
		IsError: true,
		Content: []mcp.Content{
			&mcp.TextContent{Text: "hello"},
			&mcp.ImageContent{Data: []byte("png!"), MIMEType: "image/png"},
			&mcp.ImageContent{Data: bytes.Repeat([]byte{1}, 11), MIMEType: "image/jpeg"},
			&mcp.AudioContent{Data: []byte("wav"), MIMEType: "audio/wav"},
			&mcp.ResourceLink{URI: "file:///a.txt", Name: "a.txt", Description: "a file", MIMEType: "text/plain", Size: &size},
			&mcp.ResourceLink{URI: "file:///b", Title: "B"},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://t", MIMEType: "text/plain", Text: "inline"}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://b", MIMEType: "application/zip", Blob: []byte("zip")}},
			&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "mem://big", MIMEType: "application/zip", Blob: bytes.Repeat([]byte{1}, 11)}},
			&mcp.EmbeddedResource{},
		},
		StructuredContent: map[string]any{"n": 1},
	}
	got := convert(res, 10)
	want := []agent.Part{
		{Kind: agent.PartText, Text: "hello"},
		{Kind: agent.PartImage, Data: []byte("png!"), MIMEType: "image/png"},
		{Kind: agent.PartText, Text: "[image (image/jpeg, 11 bytes) left out: larger than 10 bytes]"},
		{Kind: agent.PartAudio, Data: []byte("wav"), MIMEType: "audio/wav"},
		{Kind: agent.PartResourceLink, URI: "file:///a.txt", Name: "a.txt", MIMEType: "text/plain", Text: "a file"},
		{Kind: agent.PartResourceLink, URI: "file:///b", Name: "B"},
		{Kind: agent.PartResource, URI: "mem://t", MIMEType: "text/plain", Text: "inline"},
		{Kind: agent.PartResource, URI: "mem://b", MIMEType: "application/zip", Data: []byte("zip")},
		{Kind: agent.PartText, Text: "[resource mem://big (application/zip, 11 bytes) left out: larger than 10 bytes]"},
		{Kind: agent.PartText, Text: "[an embedded resource without contents]"},
	}
	if !got.IsError || string(got.Structured) != `{"n":1}` || len(got.Parts) != len(want) {
		t.Fatalf("convert = %+v", got)
	}
	for i := range want {
		g, w := got.Parts[i], want[i]
		if g.Kind != w.Kind || g.Text != w.Text || !bytes.Equal(g.Data, w.Data) || g.MIMEType != w.MIMEType || g.URI != w.URI || g.Name != w.Name {
			t.Errorf("part %d = %+v, want %+v", i, g, w)
		}
	}
	if r := convert(&mcp.CallToolResult{}, 10); r.IsError || len(r.Parts) != 0 || r.Structured != nil {
		t.Errorf("empty result = %+v", r)
	}
}

// TestRelay: the first progress goes at once, those within the interval
// are held with the latest winning, and nothing comes after stop.
func TestRelay(t *testing.T) {
	var mu sync.Mutex
	var got []float64
	r := &relay{fn: func(p agent.Progress) {
		mu.Lock()
		got = append(got, p.Progress)
		mu.Unlock()
	}}
	r.push(agent.Progress{Progress: 1})
	r.push(agent.Progress{Progress: 2})
	r.push(agent.Progress{Progress: 3})
	snapshot := func() []float64 {
		mu.Lock()
		defer mu.Unlock()
		return append([]float64(nil), got...)
	}
	if g := snapshot(); len(g) != 1 || g[0] != 1 {
		t.Fatalf("at once: %v, want [1]", g)
	}
	waitFor(t, "the held progress", func() bool { return len(snapshot()) == 2 })
	if g := snapshot(); g[1] != 3 {
		t.Errorf("held: %v, want the latest (3)", g)
	}
	r.push(agent.Progress{Progress: 4}) // within the interval: held
	r.stop()
	r.push(agent.Progress{Progress: 5})
	time.Sleep(2 * progressInterval) // nothing may come; waiting proves it
	if g := snapshot(); len(g) != 2 {
		t.Errorf("after stop: %v", g)
	}
}

func jsonrpcDecode(b []byte) (any, error) { return jsonrpc.DecodeMessage(b) }

// FuzzFrames: whatever a server writes, the frame readers never panic,
// never pass on a line or event over the bound (plus the replacement's
// size), and give the same output for any split of their input.
func FuzzFrames(f *testing.F) {
	f.Add([]byte("{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\nnot json\n{\"id\":\"" + strings.Repeat("x", 300) + "\"}\n"))
	f.Add([]byte("id: 1\ndata: {\"id\":2,\"result\":\"" + strings.Repeat("y", 300) + "\"}\n\ndata: {}\n\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		const max = 64
		for _, mk := range []func(io.Reader) io.Reader{
			func(r io.Reader) io.Reader { return newLineFrames(io.NopCloser(r), max, func(string, int) {}) },
			func(r io.Reader) io.Reader { return newSSEFrames(io.NopCloser(r), max, func(string, int) {}) },
		} {
			whole, err1 := io.ReadAll(mk(bytes.NewReader(in)))
			split, err2 := io.ReadAll(mk(iotest.OneByteReader(bytes.NewReader(in))))
			if err1 != err2 || !bytes.Equal(whole, split) {
				t.Fatalf("whole %q (%v) != split %q (%v)", whole, err1, split, err2)
			}
			bound := max + 64<<10 + 300 // bufio's chunk, the replacement
			for _, line := range bytes.Split(whole, []byte("\n\n")) {
				if len(line) > bound {
					t.Fatalf("a unit of %d bytes passed", len(line))
				}
			}
		}
	})
}
