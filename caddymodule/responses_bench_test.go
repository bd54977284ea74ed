package caddymodule

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// BenchmarkCodexSession runs a Codex-shaped session of 50 turns (issue
// 20): each turn the model calls exec_command and the client sends the
// command's output back, with Codex's instructions and tools on every
// request. Over HTTP the client sends the whole conversation each turn,
// as Codex does with store false; over a WebSocket it sends only the new
// items with previous_response_id, served from the socket's memory. It
// reports the request bytes llmstream reads per turn, the process CPU per
// turn (llmstream, the in-process upstream and client together), and the
// time from sending a turn to its first event. Run it alone, in the
// isolated network namespace:
//
//	go test -c -o /tmp/cm.test ./caddymodule/ && cd caddymodule &&
//	/work/bin/isolated /tmp/cm.test -test.run XXX -test.bench CodexSession -test.benchtime 3x
func BenchmarkCodexSession(b *testing.B) {
	const turns = 50
	u := newRecordingUpstream(b, func(_ int, _ upstreamBody, w http.ResponseWriter, _ *http.Request) {
		sseHead(w)
		writeFlush(w, roleChunk, content("Running it."),
			chunk(`{"tool_calls":[{"index":0,"id":"call_x","type":"function","function":{"name":"exec_command","arguments":"{\"cmd\":\"ls -la\"}"}}]}`),
			strings.Replace(finishChunks, `"stop"`, `"tool_calls"`, 1))
	})
	s := startSite(b, "", respRoute(u.hostPort(), b.TempDir()))
	instructions := strings.Repeat("You are Codex, a coding agent. Follow the repository's conventions. ", 90) // ≈6KB, as Codex's prompt
	var tools []any
	for i := range 12 {
		tools = append(tools, map[string]any{"type": "function", "name": fmt.Sprintf("tool_%d", i), "description": strings.Repeat("d", 200),
			"parameters": map[string]any{"type": "object", "properties": map[string]any{"cmd": map[string]any{"type": "string"}}}})
	}
	output := strings.Repeat("drwxr-xr-x 2 user user 4096 Nov 26 12:00 dir\n", 25) // ≈1KB of command output

	for _, mode := range []string{"http", "websocket"} {
		b.Run(mode, func(b *testing.B) {
			var sent, ttfe int64
			var n int
			cpu0 := cpuTime()
			b.ResetTimer()
			for range b.N {
				s, f, c := codexSession(b, s, mode, turns, instructions, tools, output)
				sent += s
				ttfe += f
				n += c
			}
			b.StopTimer()
			b.ReportMetric(float64(sent)/float64(n), "req-bytes/turn")
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(n)/1e3, "cpu-µs/turn")
			b.ReportMetric(float64(ttfe)/float64(n)/1e3, "ttfe-µs")
		})
	}
}

// cpuTime returns the process's user and system CPU time, in ns.
func cpuTime() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// codexSession runs one session and returns the request bytes sent, the
// summed time to first event (ns) and the turns run.
func codexSession(b *testing.B, s site, mode string, turns int, instructions string, tools []any, output string) (int64, int64, int) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var conn *websocket.Conn
	if mode == "websocket" {
		var err error
		conn, _, err = websocket.Dial(ctx, "ws://"+s.addr+"/v1/responses", &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer bench"}}})
		if err != nil {
			b.Fatal(err)
		}
		defer conn.CloseNow()
		conn.SetReadLimit(64 << 20)
	}
	items := []any{map[string]any{"type": "message", "role": "user", "content": "List the files and explain them."}}
	var sent, ttfe int64
	prev := ""
	for turn := range turns {
		req := map[string]any{"model": "m", "instructions": instructions, "tools": tools, "store": false, "stream": true}
		var newItems []any
		if mode == "websocket" && prev != "" {
			req["previous_response_id"] = prev
			newItems = items[len(items)-1:]
			req["input"] = newItems
		} else {
			req["input"] = items
		}
		var body []byte
		start := time.Now()
		var first time.Duration
		var final map[string]any
		if mode == "websocket" {
			req["type"] = "response.create"
			delete(req, "stream")
			body, _ = json.Marshal(req)
			if err := conn.Write(ctx, websocket.MessageText, body); err != nil {
				b.Fatal(err)
			}
			for {
				_, data, err := conn.Read(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if first == 0 {
					first = time.Since(start)
				}
				if bytes.HasPrefix(data, []byte(`{"type":"response.completed"`)) {
					var ev map[string]any
					_ = json.Unmarshal(data, &ev)
					final, _ = ev["response"].(map[string]any)
					break
				}
				if bytes.HasPrefix(data, []byte(`{"type":"error"`)) {
					b.Fatalf("turn %d: %s", turn, data)
				}
			}
		} else {
			body, _ = json.Marshal(req)
			hreq, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.url("/v1/responses"), bytes.NewReader(body))
			hreq.Header.Set("Authorization", "Bearer bench")
			resp, err := http.DefaultClient.Do(hreq)
			if err != nil {
				b.Fatal(err)
			}
			sc := bufio.NewScanner(resp.Body)
			sc.Buffer(make([]byte, 1<<20), 64<<20)
			for sc.Scan() {
				line := sc.Bytes()
				if first == 0 && bytes.HasPrefix(line, []byte("data: ")) {
					first = time.Since(start)
				}
				if data, ok := bytes.CutPrefix(line, []byte(`data: {"type":"response.completed"`)); ok {
					var ev map[string]any
					_ = json.Unmarshal(append([]byte(`{"type":"response.completed"`), data...), &ev)
					final, _ = ev["response"].(map[string]any)
				}
			}
			resp.Body.Close()
		}
		if final == nil {
			b.Fatalf("turn %d: no response.completed", turn)
		}
		sent += int64(len(body))
		ttfe += int64(first)
		prev, _ = final["id"].(string)
		out, _ := final["output"].([]any)
		items = append(items, out...)
		items = append(items, map[string]any{"type": "function_call_output", "call_id": "call_x", "output": output})
	}
	return sent, ttfe, turns
}
