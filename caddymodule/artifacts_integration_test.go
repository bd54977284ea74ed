package caddymodule

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/llmstream/llmstream/toolserver/demo"
)

// The FinalResult loop's artifacts through Caddy (CONTRACT.md §13,
// specs/004 §7.3): an aisdk route with validate and the demo's tools, in
// front of a scripted model that calls a tool in round 1 and answers
// artifact_ready in round 2.

// artifactSite serves /aisdk (final_result, validate with the artifact
// tools make_report and get_weather) in front of u.
func artifactSite(t *testing.T, u *recordingUpstream) site {
	t.Helper()
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	return startSite(t, "", `	handle /aisdk {
		llm_stream {
			request_format aisdk
			protocol aisdk
			format final_result
			model m
			validate {
				artifact_tools make_report get_weather
			}
			tools {
				mcp demo {
					builtin demo
				}
				park {
					store file `+t.TempDir()+`
				}
			}
		}
		rewrite * /v1/chat/completions
		reverse_proxy `+u.hostPort()+` {
			flush_interval -1
		}
	}
`)
}

// scriptedLoop is a model that calls tool in its first request, claims
// artifact_ready in its second, and answers answer_ready in a third (a
// retry).
func scriptedLoop(t *testing.T, tool, args string) *recordingUpstream {
	return newRecordingUpstream(t, func(n int, b upstreamBody, w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		switch n {
		case 1:
			writeFlush(w, roleChunk,
				chunk(`{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"`+tool+`","arguments":`+args+`}}]}`)+
					`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n"+
					"data: [DONE]\n\n")
		case 2:
			writeFlush(w, roleChunk, content(`{"status":"artifact_ready","message":"Here is your file.","artifacts":["file-ready"]}`), finishChunks)
		default:
			writeFlush(w, roleChunk, content(`{"status":"answer_ready","message":"There is no file after all."}`), finishChunks)
		}
	})
}

const aisdkAsk = `{"id":"c1","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"make it"}]}],"trigger":"submit-message"}`

// TestArtifactEvidenceRetry: a tool that ran but produced no artifact
// event (its result is text) does not back artifact_ready: the reply is
// retried (artifact_tool_failed), the retry carries the loop's messages
// with the tool's result, and the tool is not run again.
func TestArtifactEvidenceRetry(t *testing.T) {
	u := scriptedLoop(t, "get_weather", `"{\"city\":\"Oslo\"}"`)
	s := artifactSite(t, u)
	before := demo.Calls("get_weather")
	_, evs := loopPost(t, s, "/aisdk", aisdkAsk)
	if n := demo.Calls("get_weather") - before; n != 1 {
		t.Errorf("the tool ran %d times, want once", n)
	}
	if u.count() != 3 {
		t.Fatalf("%d upstream requests, want 3 (the call, the refused reply, the retry)", u.count())
	}
	retry := u.last(t)
	if got := roles(retry.Messages); got != "user,assistant,tool,assistant,user" {
		t.Errorf("the retry's messages: %s", got)
	}
	if tool := retry.Messages[2].text(); !strings.Contains(tool, "Oslo:") {
		t.Errorf("the retry does not carry the tool's result: %q", tool)
	}
	if c := retry.Messages[4].text(); !strings.Contains(c, "artifact_ready") {
		t.Errorf("the correction: %q", c)
	}
	var text strings.Builder
	for _, e := range evs {
		text.WriteString(gjson.Get(e.Data, "delta").String())
	}
	if got := text.String(); got != "There is no file after all." {
		t.Errorf("the answer: %q", got)
	}
}

// TestArtifactFileReady: a tool whose result carries a file (an embedded
// resource) is data-file-ready {url, name, type}, the artifact event that
// backs artifact_ready; llmstream serves the file at the URL, to the
// scope that made it.
func TestArtifactFileReady(t *testing.T) {
	u := scriptedLoop(t, "make_report", `"{\"topic\":\"otters\"}"`)
	s := artifactSite(t, u)
	_, evs := loopPost(t, s, "/aisdk", aisdkAsk)
	if u.count() != 2 {
		t.Fatalf("%d upstream requests, want 2: the file backs artifact_ready", u.count())
	}
	var file gjson.Result
	var types []string
	for _, e := range evs {
		d := gjson.Parse(e.Data)
		types = append(types, d.Get("type").String())
		if d.Get("type").String() == "data-file-ready" {
			file = d.Get("data")
		}
	}
	if !file.Exists() || file.Get("name").String() != "report.md" || file.Get("type").String() != "text/markdown" ||
		!strings.HasPrefix(file.Get("url").String(), "/aisdk?llmstream_file=") {
		t.Fatalf("data-file-ready: %s (%s)", file.Raw, strings.Join(types, " "))
	}
	get := func(auth string) (int, string, http.Header) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, s.url(file.Get("url").String()), nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := newClient(t, "h1").Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b), resp.Header
	}
	status, body, h := get("")
	if status != http.StatusOK || !strings.HasPrefix(body, "# otters") || h.Get("Content-Type") != "text/markdown" ||
		h.Get("X-Content-Type-Options") != "nosniff" || !strings.Contains(h.Get("Content-Security-Policy"), "sandbox") {
		t.Errorf("GET the file: %d %q %v", status, body, h)
	}
	if status, _, _ := get("Bearer someone-else"); status != http.StatusNotFound {
		t.Errorf("another scope's GET: %d, want 404", status)
	}
	if status, _, _ := get(""); status != http.StatusOK {
		t.Errorf("a second GET: %d", status)
	}
}
