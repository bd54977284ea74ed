package playground

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/caddyserver/caddy/v2/caddytest"

	"github.com/llmstream/llmstream/caddymodule"
	_ "github.com/llmstream/llmstream/caddymodule/llmmock"
	"github.com/llmstream/llmstream/transform/protocol"
)

// TestEndpoint: the path the page posts to, from a route's config path.
func TestEndpoint(t *testing.T) {
	for _, c := range []struct {
		view caddymodule.RouteView
		want string
	}{
		{caddymodule.RouteView{Path: "/v1/chat/completions"}, "/v1/chat/completions"},
		{caddymodule.RouteView{Path: "/skillpet/*", Conversation: true}, "/skillpet/stream"},
		{caddymodule.RouteView{Path: "/api/*"}, ""},
		{caddymodule.RouteView{Path: "/a/*/b"}, ""},
		{caddymodule.RouteView{Path: "/{x}"}, ""},
		{caddymodule.RouteView{Path: ""}, ""},
	} {
		if got := endpoint(c.view); got != c.want {
			t.Errorf("endpoint(%+v) = %q, want %q", c.view, got, c.want)
		}
	}
}

// TestServed: through Caddy, the page and its files with their types and
// the policy that keeps them to their origin, and routes.json with the
// routes of the server, their facts and none of their secrets.
func TestServed(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	caddytest.NewTester(t).InitServer(`{
	skip_install_trust
	admin localhost:2999
	http_port 9080
	https_port 9443
	grace_period 1ns
}
http://localhost:9080 {
	handle /mock/* {
		llm_mock {
			reply_text "hi"
		}
	}
	handle /chat {
		llm_stream {
			protocol openai
			system_prompt_text "SECRET-PROMPT {env.HOME}"
			name chat
		}
		reverse_proxy 127.0.0.1:9080 {
			header_up Authorization "Bearer SECRET-KEY"
		}
	}
	handle /conv/* {
		llm_stream {
			request_format skillpet
			protocol skillpet
			model pinned
			conversation {
				store file `+t.TempDir()+`
			}
			tools {
				mcp secretive {
					command /bin/true SECRET-ARG
					env TOKEN SECRET-ENV
				}
			}
		}
		reverse_proxy 127.0.0.1:9080
	}
	handle /wild/* {
		llm_stream {
			protocol gymbro
		}
		reverse_proxy 127.0.0.1:9080
	}
	handle /playground/* {
		llm_stream_playground
	}
}
`, "caddyfile")

	get := func(path string) (*http.Response, string) {
		t.Helper()
		resp, err := http.Get("http://localhost:9080" + path)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(b)
	}

	for path, ctype := range map[string]string{
		"/playground/":             "text/html",
		"/playground/app.js":       "text/javascript",
		"/playground/protocols.js": "text/javascript",
		"/playground/app.css":      "text/css",
	} {
		resp, body := get(path)
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), ctype) || body == "" {
			t.Errorf("%s: %d %s", path, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") || !strings.Contains(csp, "connect-src 'self'") {
			t.Errorf("%s: Content-Security-Policy %q", path, csp)
		}
	}
	if resp, _ := get("/playground/nothing.js"); resp.StatusCode != http.StatusNotFound {
		t.Errorf("an unknown file: %d, want 404", resp.StatusCode)
	}

	resp, body := get("/playground/routes.json")
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("routes.json: %d", resp.StatusCode)
	}
	if strings.Contains(body, "SECRET") {
		t.Errorf("routes.json holds a secret: %s", body)
	}
	var routes []Route
	if err := json.Unmarshal([]byte(body), &routes); err != nil {
		t.Fatal(err)
	}
	byPath := map[string]Route{}
	for _, r := range routes {
		byPath[r.Path] = r
	}
	if len(routes) != 3 {
		t.Fatalf("routes %+v, want the three llm_stream routes", routes)
	}
	if r := byPath["/chat"]; r.Name != "chat" || r.Protocol != "openai" || r.RequestFormat != "openai" || r.Endpoint != "/chat" {
		t.Errorf("/chat: %+v", r)
	}
	if r := byPath["/conv/*"]; r.Name != "/conv/*" || r.Endpoint != "/conv/stream" || !r.Conversation || r.Model != "pinned" ||
		len(r.ToolServers) != 1 || r.ToolServers[0] != "secretive" {
		t.Errorf("/conv/*: %+v", r)
	}
	if r := byPath["/wild/*"]; r.Endpoint != "" || r.Protocol != "gymbro" {
		t.Errorf("/wild/*: %+v (a wildcard the page cannot post to has no endpoint)", r)
	}

	// Anything but GET and HEAD is not the page's.
	presp, err := http.Post("http://localhost:9080/playground/", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	presp.Body.Close()
	if presp.Header.Get("Content-Security-Policy") != "" {
		t.Error("a POST was answered by the playground")
	}
}

// TestPageKnowsEveryProtocol: the page reads every protocol a route can
// stream and sends every request format a route can read (protocols.js's
// adapters and buildRequest's cases), so that a protocol added to the
// table does not leave its routes off the page, which lists only the
// routes it can drive.
func TestPageKnowsEveryProtocol(t *testing.T) {
	js, err := assets.ReadFile("assets/protocols.js")
	if err != nil {
		t.Fatal(err)
	}
	src := string(js)
	for _, p := range protocol.Protocols() {
		if !strings.Contains(src, "\n  "+p.Name+"(reply) {\n") {
			t.Errorf("protocols.js has no adapter for protocol %s", p.Name)
		}
	}
	for _, f := range protocol.RequestFormats() {
		if f.Name != "openai" && !strings.Contains(src, "\n    case '"+f.Name+"':") {
			t.Errorf("protocols.js's buildRequest has no case for request format %s", f.Name)
		}
	}
}
