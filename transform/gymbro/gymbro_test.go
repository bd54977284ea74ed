package gymbro_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/encodertest"
	"github.com/llmstream/llmstream/transform/gymbro"
)

// checkStream checks a GymBro stream against specs/000 §6: known events,
// one-line JSON data led by message_id and request_id, seq from 1 without
// gaps, status queued → working first, exactly one terminal event and it
// last (when complete, that is when the events ended with one), and
// reply_len equal to the characters of the assembled reply.
func checkStream(out []byte, meta transform.Meta, complete bool) error {
	evs, err := encodertest.ReadGymBroSSE(out, meta)
	if err != nil {
		return err
	}
	var seq float64
	var reply strings.Builder
	terminal := -1
	for i, e := range evs {
		m := e.Fields
		switch e.Name {
		case "status":
			if i < 2 && m["state"] != []string{"queued", "working"}[i] {
				return fmt.Errorf("event %d: status %v, want queued then working", i, m["state"])
			}
		case "content_delta":
			seq++
			if m["seq"] != seq {
				return fmt.Errorf("content_delta seq %v, want %v", m["seq"], seq)
			}
			reply.WriteString(m["delta"].(string))
		case "heartbeat":
			if _, ok := m["ts"].(float64); !ok {
				return fmt.Errorf("heartbeat without ts: %s", e.Data)
			}
		case "completed":
			terminal = i
			if n := float64(utf8.RuneCountInString(reply.String())); m["reply_len"] != n {
				return fmt.Errorf("reply_len %v, want %v (the assembled reply's characters)", m["reply_len"], n)
			}
			md, ok := m["metadata"].(map[string]any)
			if !ok || md["finish_reason"] == nil {
				return fmt.Errorf("completed without metadata.finish_reason: %s", e.Data)
			}
			if _, ok := md["violations"].([]any); !ok {
				return fmt.Errorf("completed.metadata.violations is not an array: %s", e.Data)
			}
		case "error":
			terminal = i
			if m["message"] != m["error"] || m["code"] == "" {
				return fmt.Errorf("error event: message and error differ or code empty: %s", e.Data)
			}
		default:
			return fmt.Errorf("event %d: unknown event %q", i, e.Name)
		}
	}
	if complete && terminal < 0 {
		return fmt.Errorf("no terminal event")
	}
	return nil
}

func TestScenarios(t *testing.T) {
	encodertest.CheckScenarios(t, "", func(evs []transform.Event) ([]byte, error) {
		meta := encodertest.Meta()
		out := encodertest.Run(gymbro.New(meta), evs)
		return out, checkStream(out, meta, true)
	})
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
			[]transform.Event{encodertest.Routed("vendor-x", "up-1"), encodertest.Finish("stop")},
			[]string{
				`event: status` + "\n" + `data: {"message_id":"msg-1","request_id":"req-1","state":"queued"}`,
				`"state":"working"}`,
				`"state":"routed","provider":"openai","resolved_model":"vendor-x","endpoint_id":3,"upstream_request_id":"up-1"}`,
				`event: completed` + "\n" + `data: {"message_id":"msg-1","request_id":"req-1","provider":"openai","resolved_model":"vendor-x","endpoint_id":3,"upstream_request_id":"up-1","reply_len":0,"metadata":{"finish_reason":"stop","usage":null,"violations":[]}}`,
			}},
		{"routed_without_names", nil,
			[]transform.Event{encodertest.Routed("", ""), encodertest.Finish("length")},
			[]string{`"resolved_model":"gpt-test","endpoint_id":3,"upstream_request_id":null}`, `"finish_reason":"length"`}},
		{"error_unknown_model", func(m *transform.Meta) { m.Model = "" },
			[]transform.Event{encodertest.Failure("provider_error", "no")},
			[]string{`event: error` + "\n" + `data: {"message_id":"msg-1","request_id":"req-1","code":"provider_error","message":"no","error":"no","provider":"openai","resolved_model":null,"endpoint_id":3}`}},
		{"error_without_text", nil,
			[]transform.Event{encodertest.Failure("upstream_timeout", "")},
			[]string{`"code":"upstream_timeout","message":"upstream_timeout","error":"upstream_timeout"`}},
		{"usage_not_object", nil,
			[]transform.Event{encodertest.Text(transform.KindUsage, `[1]`), encodertest.Finish("stop")},
			[]string{`"usage":null`}},
		{"usage_invalid", nil,
			[]transform.Event{encodertest.Text(transform.KindUsage, `{"a":`), encodertest.Finish("stop")},
			[]string{`"usage":null`}},
		{"usage_pretty", nil,
			[]transform.Event{encodertest.Text(transform.KindUsage, "{ \"a\" : 1 ,\n \"b\": {\"c\": 2} }"), encodertest.Finish("stop")},
			[]string{`"usage":{"a":1,"b":{"c":2}}`}},
		{"heartbeat_ms", nil,
			[]transform.Event{encodertest.Heartbeat()},
			[]string{`event: heartbeat` + "\n" + `data: {"message_id":"msg-1","request_id":"req-1","ts":1735787135000}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			meta := encodertest.Meta()
			if tt.meta != nil {
				tt.meta(&meta)
			}
			out := string(encodertest.Run(gymbro.New(meta), tt.evs))
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
			meta := encodertest.Meta()
			var evs []transform.Event
			for _, r := range tt.raws {
				evs = append(evs, encodertest.Raw(r))
			}
			out := encodertest.Run(gymbro.New(meta), append(evs, encodertest.Finish("stop")))
			if err := checkStream(out, meta, true); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			sse, _ := encodertest.ReadSSE(out)
			var got []string
			for _, e := range sse {
				if e.Name == "content_delta" {
					m, _ := e.DecodeData()
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

// newEncoder returns a gymbro encoder for encodertest's checks.
func newEncoder() transform.Encoder { return gymbro.New(encodertest.Meta()) }

func TestNothingAfterTerminal(t *testing.T) {
	encodertest.CheckNothingAfterTerminal(t, newEncoder)
}

// TestZeroAllocs checks that content deltas and heartbeats allocate nothing
// in steady state.
func TestZeroAllocs(t *testing.T) {
	encodertest.CheckZeroAllocs(t, newEncoder, []transform.Event{encodertest.Routed("m", "id")},
		encodertest.AllocsCase{Name: "raw_chinese", Event: encodertest.Raw("三分化训练计划")},
		// The carry holds the cut character, and the next call completes it
		// with the head of the same text.
		encodertest.AllocsCase{Name: "raw_cut_rune", Event: encodertest.Raw("ab\xe4")},
	)
}

func BenchmarkEncoder(b *testing.B) {
	encodertest.BenchmarkReply(b, newEncoder(), []transform.Event{encodertest.Routed("m", "id")}, transform.KindRaw, transform.KindRaw)
}

// FuzzEncoder feeds arbitrary event sequences, kept promises or not: the
// encoder must not panic and must write a well-formed GymBro stream.
func FuzzEncoder(f *testing.F) {
	f.Add([]byte{0, 3, 0, 7, 22, 0}, "hello 世界 \xff \"x\"")
	f.Add([]byte{19, 1, 20, 2, 21, 3, 0, 9, 23, 4}, "{\"a\":1}")
	f.Add([]byte{24, 0, 0, 5, 0, 200, 22, 1}, "\xe4\xbd\xa0好")
	f.Fuzz(func(t *testing.T, ops []byte, pool string) {
		meta := encodertest.Meta()
		out := encodertest.Run(gymbro.New(meta), encodertest.FuzzEvents(ops, pool))
		if err := checkStream(out, meta, false); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	})
}
