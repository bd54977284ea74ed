package llmmock

import (
	"bytes"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/caddyserver/caddy/v2"
)

// TestMockPieces checks how llm_mock cuts a reply into deltas: nothing
// lost, never inside a UTF-8 sequence, chunk_size bytes and the rest of a
// rune at most, and with random_chunks sizes of 1 to chunk_size that
// differ per request but repeat for the same request number.
func TestMockPieces(t *testing.T) {
	reply := []byte(strings.Repeat("ab 三分化 😀 x", 40))
	cases := []struct {
		name   string
		size   int
		random bool
	}{
		{"one byte", 1, false},
		{"odd size", 13, false},
		{"random", 24, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cut := func(seed uint64) [][]byte {
				turn := &mockTurn{m: &Mock{ChunkSize: tc.size, RandomChunks: tc.random}}
				if tc.random {
					turn.rng = rand.New(rand.NewPCG(seed, 0x6c6c6d73))
				}
				return turn.pieces(reply)
			}
			pieces := cut(1)
			if got := bytes.Join(pieces, nil); !bytes.Equal(got, reply) {
				t.Fatalf("the pieces do not add up to the reply")
			}
			sizes := map[int]bool{}
			for _, p := range pieces {
				if !utf8.Valid(p) {
					t.Fatalf("piece %q cuts a UTF-8 sequence", p)
				}
				// A cut that falls inside a rune moves to its end: at most
				// three bytes more.
				if len(p) > tc.size+utf8.UTFMax-1 {
					t.Fatalf("piece %q is longer than %d bytes and the rest of a rune", p, tc.size)
				}
				sizes[len(p)] = true
			}
			if !tc.random {
				return
			}
			if len(sizes) < 5 {
				t.Errorf("random_chunks gave only the sizes %v", sizes)
			}
			if again := cut(1); len(again) != len(pieces) || !bytes.Equal(bytes.Join(again, []byte{0}), bytes.Join(pieces, []byte{0})) {
				t.Error("the same request number cut the reply differently")
			}
			if other := cut(2); bytes.Equal(bytes.Join(other, []byte{0}), bytes.Join(pieces, []byte{0})) {
				t.Error("two request numbers cut the reply the same way")
			}
		})
	}
}

// TestCallOfferedTool checks call_offered_tool: a request offering tools
// gets a call of the first one, a request whose last message is a tool
// result (or that offers none) the reply.
func TestCallOfferedTool(t *testing.T) {
	zero := caddy.Duration(0)
	m := &Mock{ReplyTexts: []string{"the answer"}, CallOfferedTool: true, Interval: &zero}
	if err := m.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	tools := `"tools":[{"type":"function","function":{"name":"get_weather","parameters":{}}}]`
	for _, tc := range []struct{ body, want string }{
		{`{"messages":[{"role":"user","content":"hi"}],` + tools + `}`, `"name":"get_weather"`},
		{`{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"c","type":"function","function":{"name":"get_weather","arguments":"{}"}}]},{"role":"tool","tool_call_id":"c","content":"sunny"}],` + tools + `}`, `"the answer"`},
		{`{"messages":[{"role":"user","content":"hi"}]}`, `"the answer"`},
	} {
		w := httptest.NewRecorder()
		r := httptest.NewRequest(http.MethodPost, "/v1/chat/completions", strings.NewReader(tc.body))
		if err := m.ServeHTTP(w, r, nil); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(w.Body.String(), tc.want) {
			t.Errorf("%s:\n%s\nwant %s", tc.body, w.Body, tc.want)
		}
	}
}

// TestMockByRound: with by_round the reply is chosen by the request's
// round of an agent loop, read from its messages, whatever other requests
// came before, and {{tool_result}} shows the last tool result.
func TestMockByRound(t *testing.T) {
	m := &Mock{ByRound: true,
		replies:   [][]byte{[]byte("Let me look."), []byte("Found: {{tool_result}}")},
		toolCalls: [][]mockCall{{{name: "search", args: `{"q":"x"}`}}, {}},
	}
	tests := []struct {
		name, body string
		reply      string
		calls      int
	}{
		{"round 1", `{"messages":[{"role":"system","content":"s"},{"role":"user","content":"hi"}]}`, "Let me look.", 1},
		{"round 2", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[]},` +
			`{"role":"tool","tool_call_id":"a","content":"Caddy is a web server."}]}`, "Found: Caddy is a web server.", 0},
		{"round 3 takes the last reply", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant"},{"role":"tool","content":"1"},` +
			`{"role":"assistant"},{"role":"tool","content":"2"}]}`, "Found: 2", 0},
		{"a new turn starts over", `{"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":"x"},{"role":"user","content":"again"}]}`,
			"Let me look.", 1},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// The request number n differs per case and must not matter.
			reply, calls := m.script(uint64(100+7*i), []byte(tt.body))
			if string(reply) != tt.reply || len(calls) != tt.calls {
				t.Errorf("got %q with %d calls, want %q with %d", reply, len(calls), tt.reply, tt.calls)
			}
		})
	}
	long := `{"messages":[{"role":"user","content":"q"},{"role":"assistant"},{"role":"tool","content":"` +
		`start` + strings.Repeat("é", 300) + `[cut: the marker]"}]}`
	reply, _ := m.script(1, []byte(long))
	if !utf8.Valid(reply) || len(reply) > len("Found: ")+400 {
		t.Errorf("a long tool result is not cut on character boundaries to 400 bytes: %d bytes", len(reply))
	}
	if got := string(reply); !strings.HasPrefix(got, "Found: startéé") || !strings.Contains(got, "é … é") || !strings.HasSuffix(got, "é[cut: the marker]") {
		t.Errorf("a long tool result is not its start and its end: %q", got)
	}
}
