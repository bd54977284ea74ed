package toolserver

import (
	"context"
	"fmt"
	"runtime"
	"testing"

	"github.com/llmstream/llmstream/config"
)

// BenchmarkCall measures one call of the demo server's get_weather
// through a Set: in-process (builtin demo) and over stdio (the same
// server in a child process). The difference is the stdio transport's
// cost per call.
func BenchmarkCall(b *testing.B) {
	stdio := selfServer("demo")
	stdio.Env[serveEnv] = "demo"
	for _, tc := range []struct {
		name string
		srv  config.MCPServer
	}{
		{"builtin", config.MCPServer{Name: "demo", Builtin: "demo"}},
		{"stdio", stdio},
	} {
		b.Run(tc.name, func(b *testing.B) {
			s, _ := newSet(b, tc.srv)
			args := []byte(`{"city":"Paris"}`)
			ctx := context.Background()
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if r := s.Call(ctx, "get_weather", args, CallOptions{}); r.IsError {
					b.Fatal(text(r))
				}
			}
		})
	}
}

// BenchmarkIdleSession measures the memory an idle connected session
// holds on llmstream's side (heap, after GC, divided by the sessions),
// for the in-process demo and for stdio servers (their own memory is the
// child process's, not counted).
func BenchmarkIdleSession(b *testing.B) {
	for _, transport := range []string{"builtin", "stdio"} {
		b.Run(transport, func(b *testing.B) {
			const n = 20
			var servers []config.MCPServer
			for i := range n {
				m := config.MCPServer{Name: fmt.Sprint("s", i), Builtin: "demo", Prefix: fmt.Sprint("p", i, "_")}
				if transport == "stdio" {
					m = selfServer(m.Name)
					m.Env[serveEnv] = "demo"
					m.Prefix = fmt.Sprint("p", i, "_")
				}
				servers = append(servers, m)
			}
			for b.Loop() {
				before := heap()
				g0 := runtime.NumGoroutine()
				s, _ := newSet(b, servers...)
				after := heap()
				b.ReportMetric(float64(after-before)/n, "heap-bytes/session")
				b.ReportMetric(float64(runtime.NumGoroutine()-g0)/n, "goroutines/session")
				_ = s.Close()
			}
		})
	}
}

func heap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// BenchmarkTools measures what listing the offered tools costs a request
// (three connected servers; nothing is read from them per request).
func BenchmarkTools(b *testing.B) {
	s, _ := newSet(b,
		config.MCPServer{Name: "a", Builtin: "demo"},
		config.MCPServer{Name: "b", Builtin: "demo", Prefix: "b_"},
		config.MCPServer{Name: "c", Builtin: "demo", Prefix: "c_"},
	)
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if len(s.Tools(ctx, nil)) != 9 {
			b.Fatal("want 9 tools")
		}
	}
}
