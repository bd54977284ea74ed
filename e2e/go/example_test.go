package e2e

import (
	"bytes"
	"errors"
	"fmt"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestGoClientExample builds examples/go-client (its own module) and runs
// it against the gateway: its stdout must be the answer, a "---" line, the
// tool calls and the finish reason; its stderr the reasoning and usage.
func TestGoClientExample(t *testing.T) {
	loadMocks(t)
	bin := filepath.Join(t.TempDir(), "go-client")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Dir = filepath.Join("..", "..", "examples", "go-client")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building examples/go-client: %v\n%s", err, out)
	}

	run := func(t *testing.T, args ...string) (stdout, stderr string, err error) {
		var o, e bytes.Buffer
		cmd := exec.Command(bin, args...)
		cmd.Stdout, cmd.Stderr = &o, &e
		err = cmd.Run()
		return o.String(), e.String(), err
	}

	tests := []struct {
		format, mock string
		chunk        int
		stream       bool
	}{
		{"thinkingml", "thinkingml", 1, true},
		{"auto", "ask_user", 13, true},
		{"aiplan", "aiplan_tools", 13, true},
		{"text", "native_tools", 1, false},
		{"final_result", "final_result", 13, false},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s/%s/%d/stream=%v", tt.format, tt.mock, tt.chunk, tt.stream), func(t *testing.T) {
			t.Parallel()
			w := mocks[tt.mock]
			stdout, stderr, err := run(t,
				"-base", fmt.Sprintf("%s/openai/%s/%s/%d/v1", base(), tt.format, tt.mock, tt.chunk),
				fmt.Sprintf("-stream=%v", tt.stream), "三分化训练怎么安排？")
			if err != nil {
				t.Fatalf("go-client: %v\n%s", err, stderr)
			}
			answer, tools, finish := parseOutput(t, stdout)
			if w.Answer != nil && answer != *w.Answer || w.Answer == nil && answer != "" {
				t.Errorf("answer on stdout:\n%q\nwant:\n%v", answer, w.Answer)
			}
			if !reflect.DeepEqual(tools, w.Tools) {
				t.Errorf("tool_call lines %#v, want %#v", tools, w.Tools)
			}
			if finish != w.Finish {
				t.Errorf("finish_reason %q, want %q", finish, w.Finish)
			}
			if w.Reasoning != "" && !strings.Contains(stderr, "[reasoning] "+w.Reasoning) {
				t.Errorf("stderr lacks the reasoning:\n%s", stderr)
			}
			if !strings.Contains(stderr, "[usage] prompt ") {
				t.Errorf("stderr lacks the usage:\n%s", stderr)
			}
		})
	}

	t.Run("truncated upstream exits 1", func(t *testing.T) {
		t.Parallel()
		stdout, stderr, err := run(t, "-base", base()+"/openai/text/text_cut/13/v1", "hi")
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Fatalf("exit: %v, want status 1", err)
		}
		if !strings.Contains(stderr, "upstream: the connection broke off mid-reply") {
			t.Errorf("stderr:\n%s", stderr)
		}
		if want := partialAnswer(t, "text_cut", 13); !strings.HasPrefix(stdout, strings.TrimRight(want, " \n")) {
			t.Errorf("stdout %q, want the answer so far %q", stdout, want)
		}
	})
}

// parseOutput splits the example's stdout: the answer, a "---" line,
// "tool_call <name> <arguments>" lines, "finish_reason <reason>".
func parseOutput(t *testing.T, out string) (answer string, tools []toolCall, finish string) {
	t.Helper()
	answer, rest, ok := strings.Cut(out, "\n---\n")
	if !ok {
		t.Fatalf("no --- line in %q", out)
	}
	tools = []toolCall{}
	lines := strings.Split(strings.TrimSuffix(rest, "\n"), "\n")
	for _, l := range lines[:len(lines)-1] {
		f := strings.SplitN(l, " ", 3)
		if len(f) != 3 || f[0] != "tool_call" {
			t.Fatalf("line %q", l)
		}
		var in any
		decodeJSON(t, f[2], &in)
		tools = append(tools, toolCall{f[1], in})
	}
	finish, ok = strings.CutPrefix(lines[len(lines)-1], "finish_reason ")
	if !ok {
		t.Fatalf("last line %q", lines[len(lines)-1])
	}
	return answer, tools, finish
}
