package toolserver

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
)

// TestElicitRetried: a server of the current revision asks through an
// "input required" result (multi-round-trip requests): the call comes
// back parked with the question and the server's state (no process
// holds anything), and Resume makes it again with the user's answer,
// from any Set that reaches the server. A caller that cannot show the
// question has it declined, and the tool answers for itself.
func TestElicitRetried(t *testing.T) {
	s, _ := newSet(t, config.MCPServer{Name: "demo", Builtin: "demo"})
	args := []byte(`{"topic":"dragons"}`)
	r := s.Call(context.Background(), "choose_direction", args, CallOptions{Ask: AskChoice})
	if r.Park == nil {
		t.Fatalf("not parked: %+v", r)
	}
	p := r.Park
	if p.Await.Kind != transform.AwaitChoice || p.Await.Message != "请选择故事方向" || len(p.Await.Options) != 3 ||
		p.Await.Options[1].ID != "scifi" || p.Await.Options[1].Label != "科幻/未来" {
		t.Fatalf("await = %+v", p.Await)
	}
	if p.Resume.Mode != agent.ResumeRetry || p.Resume.InputID != "direction" || p.Resume.RequestState != "choose_direction:dragons" {
		t.Fatalf("resume = %+v", p.Resume)
	}
	// Another Set (another Caddy) resumes it.
	other, _ := newSet(t, config.MCPServer{Name: "demo", Builtin: "demo"})
	res, err := other.Resume(context.Background(), "choose_direction", args, p, agent.Answer{OptionID: "scifi"}, CallOptions{Ask: AskChoice})
	if err != nil || res.Park != nil || !strings.Contains(text(res), "科幻/未来 (scifi)") {
		t.Fatalf("resumed: %+v, %v", res, err)
	}
	if r := s.Call(context.Background(), "choose_direction", args, CallOptions{}); r.Park != nil || !strings.Contains(text(r), "did not choose") {
		t.Errorf("without Ask the question is declined: %+v", r)
	}
	if r := s.Call(context.Background(), "choose_direction", args, CallOptions{Ask: AskForm}); r.Park != nil {
		t.Errorf("a choice parked for a caller that shows forms only: %+v", r)
	}
}

// TestElicitHeld: a server of an earlier revision asks while it holds the
// call open (elicitation/create): the call comes back parked, held by
// this process (Holds), and Resume gives it the answer there. A hold that
// is not answered within its TTL is cancelled (the server is told) and
// cannot be resumed.
func TestElicitHeld(t *testing.T) {
	s, _ := newSet(t, selfServer("held"))
	var mu sync.Mutex
	var progress int
	opt := CallOptions{Ask: AskChoice, Progress: func(agent.Progress) { mu.Lock(); progress++; mu.Unlock() }}
	r := s.Call(context.Background(), "ask", []byte(`{}`), opt)
	if r.Park == nil || r.Park.Resume.Mode != agent.ResumeHeld || r.Park.Await.Kind != transform.AwaitChoice ||
		len(r.Park.Await.Options) != 2 || r.Park.Await.Message != "Pick a color" {
		t.Fatalf("not parked as held: %+v", r)
	}
	if !Holds(r.Park) {
		t.Fatal("Holds = false for the process that holds it")
	}
	res, err := s.Resume(context.Background(), "ask", []byte(`{}`), r.Park, agent.Answer{OptionID: "blue"}, opt)
	if err != nil || text(res) != `accept {"color":"blue"}` {
		t.Fatalf("resumed: %q, %v", text(res), err)
	}
	if Holds(r.Park) {
		t.Error("still held after the answer")
	}
	if _, err := s.Resume(context.Background(), "ask", []byte(`{}`), r.Park, agent.Answer{OptionID: "red"}, opt); !errors.Is(err, ErrNotHeld) {
		t.Errorf("a second answer: %v, want ErrNotHeld", err)
	}

	// Not answered in time.
	marker := filepath.Join(t.TempDir(), "marker")
	r = s.Call(context.Background(), "ask", []byte(`{"marker":`+quote(marker)+`}`), CallOptions{Ask: AskChoice, HoldTTL: 50 * time.Millisecond})
	if r.Park == nil {
		t.Fatalf("not parked: %+v", r)
	}
	waitFor(t, "the hold to expire", func() bool { return !Holds(r.Park) })
	waitFor(t, "the server to be told", func() bool { b, _ := os.ReadFile(marker); return string(b) == "cancelled" })
	if _, err := s.Resume(context.Background(), "ask", nil, r.Park, agent.Answer{OptionID: "red"}, opt); !errors.Is(err, ErrNotHeld) {
		t.Errorf("answered after the TTL: %v, want ErrNotHeld", err)
	}
	// A call the caller cannot show the question of: declined.
	if r := s.Call(context.Background(), "ask", []byte(`{}`), CallOptions{}); r.Park != nil || text(r) != "decline null" {
		t.Errorf("without Ask: %+v", r)
	}
}

// TestElicitHeldAmbiguous: an elicitation on a session where two calls
// run cannot be told apart: it is declined, never shown to the wrong
// user.
func TestElicitHeldAmbiguous(t *testing.T) {
	s, _ := newSet(t, selfServer("held"))
	var wg sync.WaitGroup
	hang := make(chan agent.Result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	wg.Add(1)
	go func() {
		defer wg.Done()
		hang <- s.Call(ctx, "hang", []byte(`{}`), CallOptions{})
	}()
	waitFor(t, "the first call to run", func() bool { return s.activeCount() == 1 })
	r := s.Call(context.Background(), "ask", []byte(`{}`), CallOptions{Ask: AskChoice})
	cancel()
	wg.Wait()
	if r.Park != nil || text(r) != "decline null" {
		t.Errorf("an ambiguous elicitation: %+v", r)
	}
}

// TestCloseEndsHolds: a config reload (Close) ends the calls held open
// for their users.
func TestCloseEndsHolds(t *testing.T) {
	s, err := New(&config.ToolServers{MCP: []config.MCPServer{selfServer("held")}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := s.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	r := s.Call(context.Background(), "ask", []byte(`{}`), CallOptions{Ask: AskChoice})
	if r.Park == nil {
		t.Fatalf("not parked: %+v", r)
	}
	_ = s.Close()
	if Holds(r.Park) {
		t.Error("the hold outlived its Set")
	}
}

func quote(s string) string { return `"` + strings.ReplaceAll(s, `\`, `\\`) + `"` }
