package request

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/golden/<name>.json, or writes it there
// with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading golden file (run with -update to create it): %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("rewritten body differs from %s\n got: %s\nwant: %s", path, got, want)
	}
}

// upstream is what the rewritten body means to an upstream that decodes it
// with a JSON parser. It is decoded through maps: encoding/json matches
// struct fields case-insensitively, an upstream does not.
type upstream struct {
	Model        string
	Messages     []json.RawMessage
	Tools        []json.RawMessage
	ToolChoice   json.RawMessage
	Stream       bool
	IncludeUsage bool
	top          map[string]json.RawMessage
}

func decodeUpstream(out []byte) (upstream, error) {
	var u upstream
	if err := json.Unmarshal(out, &u.top); err != nil {
		return u, err
	}
	var so map[string]json.RawMessage
	for _, f := range []struct {
		key string
		v   any
		// loose: a client value of another type may pass through.
		loose bool
	}{
		{"model", &u.Model, true}, {"messages", &u.Messages, false}, {"tools", &u.Tools, true},
		{"tool_choice", &u.ToolChoice, true}, {"stream", &u.Stream, false}, {"stream_options", &so, false},
	} {
		if raw, ok := u.top[f.key]; ok {
			if err := json.Unmarshal(raw, f.v); err != nil && !f.loose {
				return u, fmt.Errorf("%s: %w", f.key, err)
			}
		}
	}
	if raw, ok := so["include_usage"]; ok {
		if err := json.Unmarshal(raw, &u.IncludeUsage); err != nil {
			return u, fmt.Errorf("include_usage: %w", err)
		}
	}
	return u, nil
}

// message is one decoded upstream message.
type message struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	ToolCalls  []struct {
		ID       string `json:"id"`
		Type     string `json:"type"`
		Function struct {
			Name      string `json:"name"`
			Arguments string `json:"arguments"`
		} `json:"function"`
	} `json:"tool_calls,omitempty"`
}

// checkUpstream checks what every rewritten body must satisfy and returns
// it decoded: valid JSON, streaming with usage, the model when one is
// configured.
func checkUpstream(t testing.TB, s *Shaper, out []byte) upstream {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("rewritten body is not valid JSON: %q", out)
	}
	u, err := decodeUpstream(out)
	if err != nil {
		t.Fatalf("decoding rewritten body: %v\n%s", err, out)
	}
	if !u.Stream {
		t.Errorf(`rewritten body lacks "stream":true: %s`, out)
	}
	if !u.IncludeUsage {
		t.Errorf(`rewritten body lacks "stream_options":{"include_usage":true}: %s`, out)
	}
	if s.Model != "" && u.Model != s.Model {
		t.Errorf("model = %q, want %q", u.Model, s.Model)
	}
	return u
}

// roleContents returns the messages as "role:content" strings, content as
// the string it holds or as raw JSON when it is not a string.
func roleContents(t testing.TB, msgs []json.RawMessage) []string {
	t.Helper()
	var rc []string
	for _, raw := range msgs {
		var m message
		if err := json.Unmarshal(raw, &m); err != nil {
			rc = append(rc, "?:"+string(raw))
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) != nil && string(m.Content) != "null" {
			s = string(m.Content)
		}
		// A tool message names its call, an assistant message's calls
		// follow its content: "id name arguments" each, after a "|".
		if m.ToolCallID != "" {
			s = m.ToolCallID + ":" + s
		}
		for _, c := range m.ToolCalls {
			s += "|" + c.ID + " " + c.Function.Name + " " + c.Function.Arguments
		}
		rc = append(rc, m.Role+":"+s)
	}
	return rc
}

// topMembers returns the raw bytes of each top-level member of an object,
// key through value, in order, with the unescaped key. doc must be a valid
// JSON object. It decodes with encoding/json's tokenizer, independently of
// the scanner under test.
func topMembers(t testing.TB, doc []byte) (keys []string, raws [][]byte) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if _, err := dec.Token(); err != nil { // '{'
		t.Fatal(err)
	}
	for dec.More() {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, tok.(string))
		raws = append(raws, bytes.TrimLeft(doc[start:dec.InputOffset()], " \t\r\n,"))
	}
	return keys, raws
}

// checkUntouched checks that every top-level member of in that the rewrite
// does not own reaches out byte for byte, key, separator and value, in the
// same order.
func checkUntouched(t testing.TB, in, out []byte) {
	t.Helper()
	inKeys, inRaws := topMembers(t, in)
	outKeys, outRaws := topMembers(t, out)
	var want, got [][]byte
	for i, k := range inKeys {
		if !isTouched(k) {
			want = append(want, inRaws[i])
		}
	}
	for i, k := range outKeys {
		if !isTouched(k) {
			got = append(got, outRaws[i])
		}
	}
	if len(got) != len(want) {
		t.Fatalf("untouched members: got %d, want %d\n in: %s\nout: %s", len(got), len(want), in, out)
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("untouched member %d changed:\n got %q\nwant %q", i, got[i], want[i])
		}
	}
}

func isTouched(k string) bool {
	for _, name := range touched {
		if k == name {
			return true
		}
	}
	return false
}

// toolName returns the function name of a tool object.
func toolName(raw []byte) string {
	d := jsonDoc(raw)
	return functionName(d, d.root())
}
