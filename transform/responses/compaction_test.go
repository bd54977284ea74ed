package responses_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/responses"
)

func sealer(t *testing.T, secret string) *responses.Sealer {
	t.Helper()
	s, err := responses.NewSealer([]byte(secret))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestSealer checks the compaction codec: a summary sealed opens to
// itself with the same key, and anything else is refused: another key
// (another deployment), a changed byte anywhere, OpenAI's own format, a
// truncation.
func TestSealer(t *testing.T) {
	s := sealer(t, "0123456789abcdef-key-one")
	summary := "Goal: ship v2. Done: tests. Next: docs \"é\"\n"
	enc := s.Seal([]byte(summary))
	if strings.Contains(enc, "ship") || !strings.HasPrefix(enc, "llmstream.c1.") {
		t.Fatalf("sealed %q shows the summary or lacks the prefix", enc)
	}
	if got, err := s.Open(enc); err != nil || string(got) != summary {
		t.Fatalf("Open: %q, %v", got, err)
	}
	if enc == s.Seal([]byte(summary)) {
		t.Error("two seals of one summary are equal: the nonce is not fresh")
	}
	other := sealer(t, "0123456789abcdef-key-two")
	bad := []string{"", "gAAAAABpM0Yj-abc=", "llmstream.c1.", "llmstream.c1.!!!", enc[:len(enc)-2]}
	for i := len("llmstream.c1."); i < len(enc); i += 7 {
		b := []byte(enc)
		b[i] ^= 1
		bad = append(bad, string(b))
	}
	for _, b := range bad {
		if _, err := s.Open(b); !errors.Is(err, responses.ErrForeignCompaction) {
			t.Errorf("Open(%q): %v, want ErrForeignCompaction", b, err)
		}
	}
	if _, err := other.Open(enc); !errors.Is(err, responses.ErrForeignCompaction) {
		t.Errorf("another key opened it: %v", err)
	}
	if _, err := responses.NewSealer([]byte("short")); err == nil {
		t.Error("a 5-byte secret was accepted")
	}
}

// TestPrepare checks the body Convert gets: the chain before the input,
// compaction items opened into the summary they sealed, and a compaction
// trigger turned into the request to summarise.
func TestPrepare(t *testing.T) {
	s := sealer(t, "0123456789abcdef-key-one")
	cmp := `{"type":"compaction","encrypted_content":` + strings.TrimSuffix(mustJSON(s.Seal([]byte("S1"))), "\n") + `}`
	prior := []json.RawMessage{json.RawMessage(`{"type":"message","role":"user","content":"old"}`),
		json.RawMessage(`{"type":"message","role":"assistant","content":[{"type":"output_text","text":"ok"}],"id":"msg_1","status":"completed"}`)}
	tests := []struct {
		name    string
		body    string
		prep    responses.Prep
		want    []string // the upstream messages, "role: content"
		trigger bool
		code    string
	}{
		{name: "chain_then_input", body: `{"model":"m","input":"new","previous_response_id":"resp_1"}`,
			prep: responses.Prep{Prior: prior, Resolved: true}, want: []string{"user: old", "assistant: ok", "user: new"}},
		{name: "unresolved_is_refused", body: `{"model":"m","input":"new","previous_response_id":"resp_1"}`,
			code: responses.CodePreviousResponseNotFound},
		{name: "compaction_item_is_its_summary", body: `{"model":"m","input":[` + cmp + `,{"role":"user","content":"go on"}]}`,
			prep: responses.Prep{Sealer: s}, want: []string{"user: [Summary of the earlier conversation, which was compacted. Continue from it.]\n\nS1", "user: go on"}},
		{name: "foreign_compaction", body: `{"model":"m","input":[{"type":"compaction","encrypted_content":"gAAAAB"}]}`,
			prep: responses.Prep{Sealer: s}, code: responses.CodeInvalidEncryptedContent},
		{name: "tampered_compaction", body: `{"model":"m","input":[` + strings.Replace(cmp, "llmstream.c1.", "llmstream.c1.A", 1) + `]}`,
			prep: responses.Prep{Sealer: s}, code: responses.CodeInvalidEncryptedContent},
		{name: "compaction_without_a_key", body: `{"model":"m","input":[` + cmp + `]}`, code: responses.CodeUnsupported},
		{name: "trigger", body: `{"model":"m","tools":[{"type":"function","name":"f"}],"input":[{"role":"user","content":"hi"},{"type":"compaction_trigger"}]}`,
			prep: responses.Prep{Sealer: s}, want: []string{"user: hi", "user: " + responses.SummaryPrompt}, trigger: true},
		{name: "compact", body: `{"model":"m","input":[{"role":"user","content":"hi"}]}`,
			prep: responses.Prep{Sealer: s, Compact: true}, want: []string{"user: hi", "user: " + responses.SummaryPrompt}, trigger: true},
		{name: "compact_without_model", body: `{"input":"hi"}`, prep: responses.Prep{Compact: true}, code: responses.CodeMissingModel},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, e := responses.Prepare([]byte(tt.body), tt.prep)
			if e == nil {
				_, _, e = responses.Convert(p.Body)
			}
			if tt.code != "" {
				if e == nil || e.Code != tt.code || e.Status != 400 {
					t.Fatalf("error %+v, want 400 %s", e, tt.code)
				}
				return
			}
			if e != nil {
				t.Fatal(e)
			}
			chat, _, _ := responses.Convert(p.Body)
			var req struct {
				Messages []struct {
					Role    string `json:"role"`
					Content string `json:"content"`
				} `json:"messages"`
				Tools []any `json:"tools"`
			}
			if err := json.Unmarshal(chat, &req); err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, m := range req.Messages {
				got = append(got, m.Role+": "+m.Content)
			}
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || p.Trigger != tt.trigger {
				t.Errorf("messages %q trigger %v, want %q %v", got, p.Trigger, tt.want, tt.trigger)
			}
			if tt.trigger && len(req.Tools) > 0 {
				t.Errorf("a compaction offers tools: %v", req.Tools)
			}
			for _, it := range p.Own {
				if strings.Contains(string(it), "compaction_trigger") {
					t.Errorf("own input keeps the trigger: %s", it)
				}
			}
		})
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// TestChain checks the history budget of a previous_response_id chain:
// the newest response whole, older ones while they fit, oldest left out
// first, and no tool output left without its call.
func TestChain(t *testing.T) {
	rec := func(id string, in ...string) responses.Stored {
		s := responses.Stored{ID: id, Response: json.RawMessage(`{"output":[{"type":"message","role":"assistant","content":"a-` + id + `"}]}`)}
		for _, i := range in {
			s.Input = append(s.Input, json.RawMessage(i))
		}
		return s
	}
	user := func(s string) string { return `{"role":"user","content":"` + s + `"}` }
	r3 := rec("resp_3", `{"type":"function_call_output","call_id":"c","output":"x"}`, user("u3"))
	r2 := rec("resp_2", user("u2"))
	r1 := rec("resp_1", user("u1"))
	c := responses.Chain{MaxItems: 5}
	if !c.Add(r3) || !c.Add(r2) || c.Add(r1) {
		t.Fatal("the budget of 5 items did not stop at the third response")
	}
	var got []string
	for _, it := range c.Items() {
		got = append(got, string(it))
	}
	want := []string{user("u2"), `{"type":"message","role":"assistant","content":"a-resp_2"}`,
		`{"type":"function_call_output","call_id":"c","output":"x"}`, user("u3"), `{"type":"message","role":"assistant","content":"a-resp_3"}`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("items\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// Cut right before a tool output: the output goes too.
	c = responses.Chain{MaxItems: 3}
	c.Add(r3)
	c.Add(r2)
	if items := c.Items(); len(items) != 2 || !strings.Contains(string(items[0]), "u3") {
		t.Errorf("items %s", items)
	}
	// The newest is taken whole whatever its size.
	c = responses.Chain{MaxBytes: 1}
	if c.Add(r2); len(c.Items()) != 2 {
		t.Errorf("the newest response was cut: %s", c.Items())
	}
}

// TestCompactionResponses checks both ways a compaction answers: one
// CompactResource for POST /v1/responses/compact, and a response whose
// only output item is the compaction for a compaction_trigger, its
// encrypted_content opening to what the model wrote (its reasoning and
// tool calls dropped).
func TestCompactionResponses(t *testing.T) {
	s := sealer(t, "0123456789abcdef-key-one")
	evs := []transform.Event{encodertest.Routed("up", ""), encodertest.Reasoning("thinking"),
		encodertest.Answer("  The user wants X. "), encodertest.Answer("Next: Y.\n"), encodertest.Event(transform.KindAnswerEnd),
		encodertest.Text(transform.KindUsage, `{"prompt_tokens":5,"completion_tokens":3}`), encodertest.Finish("stop")}
	open := func(item map[string]any) string {
		t.Helper()
		got, err := s.Open(item["encrypted_content"].(string))
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}

	meta := encodertest.Meta()
	meta.Stream = false
	meta.Request = responses.Request{Compaction: responses.CompactionEndpoint, Sealer: s}
	enc := responses.New(meta)
	out := encodertest.Run(enc, evs)
	var res map[string]any
	if err := json.Unmarshal(out, &res); err != nil || enc.Status() != 200 {
		t.Fatalf("%v %d: %s", err, enc.Status(), out)
	}
	items, _ := res["output"].([]any)
	if res["object"] != "response.compaction" || len(items) != 1 || res["usage"].(map[string]any)["total_tokens"] != 8.0 {
		t.Fatalf("compact resource %s", out)
	}
	if it := items[0].(map[string]any); it["type"] != "compaction" || open(it) != "The user wants X. Next: Y." {
		t.Errorf("item %v", it)
	}

	meta = encodertest.Meta()
	meta.Request = responses.Request{Compaction: responses.CompactionTrigger, Sealer: s}
	out = encodertest.Run(responses.New(meta), evs)
	if _, err := accumulate(out); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	last := lastResponse(t, out)
	items, _ = last["output"].([]any)
	if last["status"] != "completed" || len(items) != 1 {
		t.Fatalf("trigger response %v", last)
	}
	if it := items[0].(map[string]any); it["type"] != "compaction" || open(it) != "The user wants X. Next: Y." {
		t.Errorf("item %v", it)
	}

	// No summary: a failure, not an empty compaction.
	meta = encodertest.Meta()
	meta.Stream = false
	meta.Request = responses.Request{Compaction: responses.CompactionEndpoint, Sealer: s}
	enc = responses.New(meta)
	out = encodertest.Run(enc, []transform.Event{encodertest.Routed("up", ""), encodertest.Finish("stop")})
	if enc.Status() != 502 || !strings.Contains(string(out), "no summary") {
		t.Errorf("empty summary: %d %s", enc.Status(), out)
	}
}
