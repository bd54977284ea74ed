package gymbro_test

import (
	"bytes"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/gymbro"
)

// checkStream checks a GymBro stream against specs/000 §6: known events,
// one-line JSON data led by message_id and request_id, seq from 1 without
// gaps, status queued → working first, exactly one terminal event and it
// last (when complete, that is when the events ended with one), and
// reply_len equal to the characters of the assembled reply.
func checkStream(out []byte, meta transform.Meta, complete bool) error {
	evs, err := readSSE(out)
	if err != nil {
		return err
	}
	ids := `{"message_id":` + jsonString(meta.MessageID) + `,"request_id":` + jsonString(meta.RequestID)
	var seq float64
	var reply strings.Builder
	terminal := -1
	for i, e := range evs {
		if e.comment {
			return errorf("event %d: gymbro sends no comments", i)
		}
		if !strings.HasPrefix(e.data, ids) {
			return errorf("event %d %s: data does not start with message_id and request_id: %s", i, e.name, e.data)
		}
		m, err := decodeData(e)
		if err != nil {
			return err
		}
		if terminal >= 0 {
			return errorf("event %d %s after the terminal event", i, e.name)
		}
		switch e.name {
		case "status":
			if i < 2 && m["state"] != []string{"queued", "working"}[i] {
				return errorf("event %d: status %v, want queued then working", i, m["state"])
			}
		case "content_delta":
			seq++
			if m["seq"] != seq {
				return errorf("content_delta seq %v, want %v", m["seq"], seq)
			}
			reply.WriteString(m["delta"].(string))
		case "heartbeat":
			if _, ok := m["ts"].(float64); !ok {
				return errorf("heartbeat without ts: %s", e.data)
			}
		case "completed":
			terminal = i
			if n := float64(utf8.RuneCountInString(reply.String())); m["reply_len"] != n {
				return errorf("reply_len %v, want %v (the assembled reply's characters)", m["reply_len"], n)
			}
			md, ok := m["metadata"].(map[string]any)
			if !ok || md["finish_reason"] == nil {
				return errorf("completed without metadata.finish_reason: %s", e.data)
			}
			if _, ok := md["violations"].([]any); !ok {
				return errorf("completed.metadata.violations is not an array: %s", e.data)
			}
		case "error":
			terminal = i
			if m["message"] != m["error"] || m["code"] == "" {
				return errorf("error event: message and error differ or code empty: %s", e.data)
			}
		default:
			return errorf("event %d: unknown event %q", i, e.name)
		}
	}
	if complete && terminal < 0 {
		return errorf("no terminal event")
	}
	return nil
}

func jsonString(s string) string { return string(transform.AppendJSONStringS(nil, s)) }

func TestScenarios(t *testing.T) {
	for _, s := range scenarios {
		t.Run(s.name, func(t *testing.T) {
			meta := testMeta()
			out := run(gymbro.New(meta), s.evs)
			if err := checkStream(out, meta, true); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			golden(t, s.name, out)
		})
	}
}

// TestFields checks the values of the system events, beyond their shape.
func TestFields(t *testing.T) {
	tests := []struct {
		name string
		meta func(*transform.Meta)
		evs  []transform.Event
		want []string // substrings of the output, in order
	}{
		{"routed", nil,
			[]transform.Event{routed("vendor-x", "up-1"), finish("stop")},
			[]string{
				`event: status` + "\n" + `data: {"message_id":"msg-1","request_id":"req-1","state":"queued"}`,
				`"state":"working"}`,
				`"state":"routed","provider":"openai","resolved_model":"vendor-x","endpoint_id":3,"upstream_request_id":"up-1"}`,
				`event: completed` + "\n" + `data: {"message_id":"msg-1","request_id":"req-1","provider":"openai","resolved_model":"vendor-x","endpoint_id":3,"upstream_request_id":"up-1","reply_len":0,"metadata":{"finish_reason":"stop","usage":null,"violations":[]}}`,
			}},
		{"routed_without_names", nil,
			[]transform.Event{routed("", ""), finish("length")},
			[]string{`"resolved_model":"gpt-test","endpoint_id":3,"upstream_request_id":null}`, `"finish_reason":"length"`}},
		{"error_unknown_model", func(m *transform.Meta) { m.Model = "" },
			[]transform.Event{failure("provider_error", "no")},
			[]string{`event: error` + "\n" + `data: {"message_id":"msg-1","request_id":"req-1","code":"provider_error","message":"no","error":"no","provider":"openai","resolved_model":null,"endpoint_id":3}`}},
		{"error_without_text", nil,
			[]transform.Event{failure("upstream_timeout", "")},
			[]string{`"code":"upstream_timeout","message":"upstream_timeout","error":"upstream_timeout"`}},
		{"usage_not_object", nil,
			[]transform.Event{text(transform.KindUsage, `[1]`), finish("stop")},
			[]string{`"usage":null`}},
		{"usage_invalid", nil,
			[]transform.Event{text(transform.KindUsage, `{"a":`), finish("stop")},
			[]string{`"usage":null`}},
		{"usage_pretty", nil,
			[]transform.Event{text(transform.KindUsage, "{ \"a\" : 1 ,\n \"b\": {\"c\": 2} }"), finish("stop")},
			[]string{`"usage":{"a":1,"b":{"c":2}}`}},
		{"heartbeat_ms", nil,
			[]transform.Event{heartbeat()},
			[]string{`event: heartbeat` + "\n" + `data: {"message_id":"msg-1","request_id":"req-1","ts":1735787135000}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := testMeta()
			if tt.meta != nil {
				tt.meta(&meta)
			}
			out := string(run(gymbro.New(meta), tt.evs))
			rest := out
			for _, w := range tt.want {
				i := strings.Index(rest, w)
				if i < 0 {
					t.Fatalf("output lacks %s (in order)\n%s", w, out)
				}
				rest = rest[i+len(w):]
			}
		})
	}
}

// TestReplyLen checks that reply_len counts characters (Unicode code
// points) of the deltas as the client assembles them, also when a
// character is cut between two raw deltas or left incomplete.
func TestReplyLen(t *testing.T) {
	tests := []struct {
		name   string
		raws   []string
		deltas []string
		want   string
	}{
		{"chinese", []string{"你好，", "世界🌍"}, []string{"你好，", "世界🌍"}, `"reply_len":6`},
		{"rune_cut_between_deltas", []string{"a\xe4\xbd", "\xa0好"}, []string{"a", "你好"}, `"reply_len":3`},
		{"rune_cut_three_ways", []string{"\xf0\x9f", "\x8c", "\x8dx"}, []string{"🌍x"}, `"reply_len":2`},
		{"incomplete_at_end", []string{"ok\xe4\xbd"}, []string{"ok", "\ufffd\ufffd"}, `"reply_len":4`},
		{"invalid_bytes", []string{"\xff\xfe!"}, []string{"\ufffd\ufffd!"}, `"reply_len":3`},
		{"broken_sequence", []string{"\xe4", "x"}, []string{"\ufffdx"}, `"reply_len":2`},
		{"empty_deltas", []string{"", "a", ""}, []string{"a"}, `"reply_len":1`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := testMeta()
			var evs []transform.Event
			for _, r := range tt.raws {
				evs = append(evs, raw(r))
			}
			out := run(gymbro.New(meta), append(evs, finish("stop")))
			if err := checkStream(out, meta, true); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sse, _ := readSSE(out)
			var got []string
			for _, e := range sse {
				if e.name == "content_delta" {
					m, _ := decodeData(e)
					got = append(got, m["delta"].(string))
				}
			}
			if strings.Join(got, "|") != strings.Join(tt.deltas, "|") {
				t.Errorf("deltas %q, want %q", got, tt.deltas)
			}
			if !bytes.Contains(out, []byte(tt.want)) {
				t.Errorf("output lacks %s\n%s", tt.want, out)
			}
		})
	}
}

// TestNothingAfterTerminal checks that the terminal event ends the stream
// whatever the caller does next.
func TestNothingAfterTerminal(t *testing.T) {
	for _, term := range []transform.Event{finish("stop"), failure("upstream_error", "x")} {
		t.Run(term.Kind.String(), func(t *testing.T) {
			enc := gymbro.New(testMeta())
			enc.Begin(nil)
			enc.AppendEvent(nil, term)
			if out := enc.AppendEvent(nil, raw("late")); len(out) != 0 {
				t.Errorf("event after the terminal event wrote %q", out)
			}
			if out := enc.AppendHeartbeat(nil, time.Now()); len(out) != 0 {
				t.Errorf("heartbeat after the terminal event wrote %q", out)
			}
			if out := enc.AppendEvent(nil, finish("stop")); len(out) != 0 {
				t.Errorf("second terminal event wrote %q", out)
			}
		})
	}
}

// TestZeroAllocs checks that content deltas and heartbeats allocate nothing
// in steady state.
func TestZeroAllocs(t *testing.T) {
	tests := []struct {
		name string
		ev   transform.Event
	}{
		{"raw_ascii", raw("some reply text, with \"quotes\"\n")},
		{"raw_chinese", raw("三分化训练计划")},
		{"raw_cut_rune", raw("ab\xe4")}, // the carry completes with the next call's head
		{"ignored_kind", text(F, "answer text")},
		{"heartbeat", heartbeat()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			enc := gymbro.New(testMeta())
			buf := enc.Begin(make([]byte, 0, 64<<10))
			buf = enc.AppendEvent(buf, routed("m", "id"))
			now := time.Now()
			allocs := testing.AllocsPerRun(1000, func() {
				if tt.ev.Kind == kindHeartbeat {
					buf = enc.AppendHeartbeat(buf[:0], now)
					return
				}
				buf = enc.AppendEvent(buf[:0], tt.ev)
			})
			if allocs != 0 {
				t.Errorf("%v allocations per event, want 0", allocs)
			}
		})
	}
}

func BenchmarkEncoder(b *testing.B) {
	deltas := []transform.Event{
		raw("<final>Here is a "), raw("plan for the week"), raw(":\n- Day 1: push\n"),
		raw("- 第二天：拉\n"), raw("\"quoted\" \\ text"),
	}
	var size int64
	for _, d := range deltas {
		size += int64(len(d.Text))
	}
	b.SetBytes(size)
	b.ReportAllocs()
	enc := gymbro.New(testMeta())
	buf := enc.Begin(make([]byte, 0, 64<<10))
	buf = enc.AppendEvent(buf, routed("m", "id"))
	b.ResetTimer()
	for b.Loop() {
		for _, d := range deltas {
			buf = enc.AppendEvent(buf[:0], d)
		}
	}
	b.ReportMetric(float64(b.N*len(deltas))/b.Elapsed().Seconds(), "events/s")
}

// FuzzEncoder feeds arbitrary event sequences, kept promises or not: the
// encoder must not panic and must write a well-formed GymBro stream.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{0, 3, 0, 7, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{19, 1, 20, 2, 21, 3, 0, 9, 23, 4}, "{\"a\":1}")
	f.Add([]byte{24, 0, 0, 5, 0, 200, 22, 1}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		meta := testMeta()
		out := run(gymbro.New(meta), fuzzEvents(ops, pool))
		if err := checkStream(out, meta, false); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
