// Package demo is llmstream's built-in demo MCP server (`builtin demo` in a
// route's tools block, or `caddy llmstream-demo-mcp` over stdio): a few
// small deterministic tools that show a tool round trip with no Node, no
// network and no API key (issue 18 item 6), and that the toolserver tests
// call. Every answer is a function of the arguments alone.
//
// To add a tool (issue 19 adds elicitation, image and resource tools),
// append it to Tools: a name, a description, an input schema and a
// handler. sleep (a call that takes time) serves the loop's timeout,
// cancellation and load tests.
package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"image"
	"image/color"
	"image/png"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Version is the demo server's version, as it reports it in initialize.
const Version = "1.0.0"

// SearchStepDelay is how long search_knowledge "searches" between its
// progress notifications (three of them): long enough for a client to see
// the progress, short enough for a demo.
var SearchStepDelay = 300 * time.Millisecond

// Tool is one tool of the demo server.
type Tool struct {
	// Tool is its definition as listed (name, description, schema).
	Tool *mcp.Tool
	// Handler runs it.
	Handler mcp.ToolHandler
}

// Tools returns the demo server's tools (the SDK lists them sorted by name).
func Tools() []Tool {
	return []Tool{
		{Tool: &mcp.Tool{
			Name:        "search_knowledge",
			Title:       "Search the knowledge base",
			Description: "Search a small built-in knowledge base about llmstream and MCP. Returns the snippets that match words of the query.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"What to search for"}},"required":["query"]}`),
		}, Handler: searchKnowledge},
		{Tool: &mcp.Tool{
			Name:        "get_weather",
			Title:       "Weather",
			Description: "Get the current weather of a city (demo data: deterministic, not real).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string","description":"City name"}},"required":["city"]}`),
		}, Handler: getWeather},
		{Tool: &mcp.Tool{
			Name:        "choose_direction",
			Title:       "选择方向",
			Description: "Ask the user to choose the story's direction (fantasy, sci-fi or urban) before writing it. Returns the user's choice.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","description":"What the story is about"}}}`),
		}, Handler: chooseDirection},
		{Tool: &mcp.Tool{
			Name:        "make_report",
			Title:       "生成报告",
			Description: "Write a short report on a topic as a Markdown file. Returns the file (an embedded resource).",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"topic":{"type":"string","description":"What the report is about"}},"required":["topic"]}`),
		}, Handler: makeReport},
		{Tool: &mcp.Tool{
			Name:        "update_plan",
			Title:       "更新计划",
			Description: "Update the story plan (the resource " + PlanURI + "): its title and its status. Subscribers are told it changed.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"title":{"type":"string"},"status":{"type":"string","enum":["planning","writing","done"]}}}`),
		}, Handler: func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return errorResult("update_plan needs its server's state: serve the demo with demo.New"), nil
		}},
		{Tool: &mcp.Tool{
			Name:        "generate_image",
			Title:       "生成图片",
			Description: "Generate images for a prompt (demo: deterministic colour swatches, not real pictures). Returns 1 to 4 PNG images.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"prompt":{"type":"string"},"count":{"type":"integer","minimum":1,"maximum":4}},"required":["prompt"]}`),
		}, Handler: generateImage},
		{Tool: &mcp.Tool{
			Name:        "always_fail",
			Title:       "Always fails",
			Description: "A tool that always reports an error, to show how a failed tool looks.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"reason":{"type":"string"}}}`),
		}, Handler: alwaysFail},
		{Tool: &mcp.Tool{
			Name:        "sleep",
			Title:       "Sleep",
			Description: "Wait the given number of seconds (at most 60), reporting progress every second, then say so: a call that takes time, to show progress, timeouts and cancellation.",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"seconds":{"type":"number","minimum":0,"maximum":60,"description":"How long to wait"}},"required":["seconds"]}`),
		}, Handler: sleep},
	}
}

// PlanURI is the demo's one resource: the story plan, JSON, which
// update_plan changes and whose subscribers are told.
const PlanURI = "demo://story/plan"

// New returns the demo server with its tools and its resource.
func New() *mcp.Server {
	st := &state{plan: plan{Title: "未命名", Status: "planning"}}
	s := mcp.NewServer(&mcp.Implementation{Name: "llmstream-demo", Version: Version}, &mcp.ServerOptions{
		// Subscriptions are kept by the SDK; these only accept them.
		SubscribeHandler:   func(context.Context, *mcp.SubscribeRequest) error { return nil },
		UnsubscribeHandler: func(context.Context, *mcp.UnsubscribeRequest) error { return nil },
	})
	st.server = s
	for _, t := range Tools() {
		h := t.Handler
		if t.Tool.Name == "update_plan" {
			h = st.updatePlan
		}
		s.AddTool(t.Tool, counted(t.Tool.Name, h))
	}
	s.AddResource(&mcp.Resource{URI: PlanURI, Name: "plan", Title: "故事计划", MIMEType: "application/json"}, st.readPlan)
	return s
}

// plan is the story plan resource.
type plan struct {
	Title   string `json:"title"`
	Status  string `json:"status"`
	Version int    `json:"version"`
}

// state is one demo server's state: its plan.
type state struct {
	server *mcp.Server
	mu     sync.Mutex
	plan   plan
}

// readPlan serves the plan resource.
func (st *state) readPlan(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	st.mu.Lock()
	b, _ := json.Marshal(st.plan)
	st.mu.Unlock()
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: PlanURI, MIMEType: "application/json", Text: string(b)}}}, nil
}

// updatePlan changes the plan and tells its subscribers.
func (st *state) updatePlan(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Title  string `json:"title"`
		Status string `json:"status"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &in)
	st.mu.Lock()
	if in.Title != "" {
		st.plan.Title = in.Title
	}
	switch in.Status {
	case "planning", "writing", "done":
		st.plan.Status = in.Status
	}
	st.plan.Version++
	b, _ := json.Marshal(st.plan)
	st.mu.Unlock()
	_ = st.server.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: PlanURI})
	return textResult("The plan is now " + string(b) + "."), nil
}

// generateImage returns count PNG swatches whose colours depend only on
// the prompt (a stand-in for an image model).
func generateImage(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Prompt string `json:"prompt"`
		Count  int    `json:"count"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || strings.TrimSpace(in.Prompt) == "" {
		return errorResult("generate_image needs a prompt"), nil
	}
	n := min(max(in.Count, 1), 4)
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("Generated %d image(s) for %q.", n, in.Prompt)}}}
	for i := range n {
		res.Content = append(res.Content, &mcp.ImageContent{MIMEType: "image/png", Data: swatch(in.Prompt, i)})
	}
	return res, nil
}

// swatch draws a 64×64 PNG: two colours from the prompt and i.
func swatch(prompt string, i int) []byte {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s\x00%d", prompt, i)
	v := h.Sum32()
	img := image.NewRGBA(image.Rect(0, 0, 64, 64))
	a := color.RGBA{uint8(v), uint8(v >> 8), uint8(v >> 16), 255}
	b := color.RGBA{255 - a.R, 255 - a.G, 255 - a.B, 255}
	for y := range 64 {
		for x := range 64 {
			if (x/16+y/16)%2 == 0 {
				img.Set(x, y, a)
			} else {
				img.Set(x, y, b)
			}
		}
	}
	var buf bytes.Buffer
	_ = png.Encode(&buf, img)
	return buf.Bytes()
}

// calls counts the calls each tool served in this process.
var calls sync.Map // name → *atomic.Int64

// counted counts h's calls under name.
func counted(name string, h mcp.ToolHandler) mcp.ToolHandler {
	v, _ := calls.LoadOrStore(name, new(atomic.Int64))
	n := v.(*atomic.Int64)
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n.Add(1)
		return h(ctx, req)
	}
}

// Calls returns how many calls tool name served in this process, by
// every demo server in it: what a gateway's loop really ran (a retry
// must not run a tool twice, specs/004 §7.3.2).
func Calls(name string) int64 {
	if v, ok := calls.Load(name); ok {
		return v.(*atomic.Int64).Load()
	}
	return 0
}

// snippet is one entry of the knowledge base.
type snippet struct{ title, text string }

// knowledge is what search_knowledge searches.
var knowledge = []snippet{
	{"llmstream", "llmstream is a Caddy module that sits in front of an OpenAI-compatible endpoint, parses the model's streamed reply incrementally and re-emits it in the client's protocol."},
	{"MCP", "The Model Context Protocol (MCP) lets an application offer tools, resources and prompts to a model; servers speak it over stdio or streamable HTTP."},
	{"agent loop", "In an agent loop the gateway runs the model's tool calls itself, appends the results and calls the model again until it answers."},
	{"progress", "MCP progress notifications tell the client how far a long-running tool call is; llmstream passes them on while the call runs."},
	{"Caddy", "Caddy is a web server with automatic HTTPS, configured with a Caddyfile or JSON, extended with Go modules."},
	{"streaming", "Streaming sends each token as soon as it is produced: Server-Sent Events carry it to the browser."},
}

// searchKnowledge returns the snippets that share a word with the query,
// after three progress notifications.
func searchKnowledge(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Query string `json:"query"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || strings.TrimSpace(in.Query) == "" {
		return errorResult("search_knowledge needs a non-empty query string"), nil
	}
	steps := []string{"Reading the index", "Matching the query", "Ranking the snippets"}
	for i, msg := range steps {
		notifyProgress(ctx, req, float64(i+1), float64(len(steps)), msg)
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(SearchStepDelay):
		}
	}
	words := strings.FieldsFunc(strings.ToLower(in.Query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var b strings.Builder
	n := 0
	for _, s := range knowledge {
		hay := strings.ToLower(s.title + " " + s.text)
		for _, w := range words {
			if len(w) > 2 && strings.Contains(hay, w) {
				n++
				fmt.Fprintf(&b, "%d. %s: %s\n", n, s.title, s.text)
				break
			}
		}
	}
	if n == 0 {
		return textResult(fmt.Sprintf("No snippet matches %q.", in.Query)), nil
	}
	return textResult(fmt.Sprintf("%d snippet(s) for %q:\n%s", n, in.Query, b.String())), nil
}

// getWeather returns made-up weather that depends only on the city name.
func getWeather(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		City string `json:"city"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || strings.TrimSpace(in.City) == "" {
		return errorResult("get_weather needs a city"), nil
	}
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(strings.TrimSpace(in.City))))
	v := h.Sum32()
	conditions := []string{"sunny", "cloudy", "light rain", "windy", "snow"}
	w := struct {
		City       string `json:"city"`
		TempC      int    `json:"temperature_c"`
		Conditions string `json:"conditions"`
		Humidity   int    `json:"humidity_percent"`
	}{in.City, int(v%35) - 5, conditions[v/35%uint32(len(conditions))], int(v/7%60) + 30}
	structured, _ := json.Marshal(w)
	return &mcp.CallToolResult{
		Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprintf("%s: %d°C, %s, humidity %d%% (demo data)", w.City, w.TempC, w.Conditions, w.Humidity)}},
		// Structured content as the MCP spec 2025-06-18 "Structured
		// Content" gives it, beside the text.
		StructuredContent: json.RawMessage(structured),
	}, nil
}

// directions are choose_direction's options.
var directions = []struct{ id, title string }{{"fantasy", "玄幻/修仙"}, {"scifi", "科幻/未来"}, {"urban", "都市/现实"}}

// chooseDirection asks the user to pick a direction, as the current MCP
// revision asks (multi-round-trip requests, 2026-07-28): the first call
// answers "input required" with one elicitation and a request state; the
// call made again with the answer returns the choice. The state names
// the topic only (a demo: a real server signs it). A client of an earlier
// revision gets the same question as an elicitation/create, asked by the
// SDK while the call waits.
func chooseDirection(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Topic string `json:"topic"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &in)
	if resp, ok := req.Params.InputResponses["direction"].(*mcp.ElicitResult); ok {
		if resp.Action != "accept" {
			return textResult("The user did not choose a direction (" + resp.Action + ")."), nil
		}
		picked, _ := resp.Content["direction"].(string)
		for _, d := range directions {
			if d.id == picked {
				return textResult(fmt.Sprintf("The user chose the direction %s (%s) for %q.", d.title, d.id, in.Topic)), nil
			}
		}
		return errorResult(fmt.Sprintf("unknown direction %q", picked)), nil
	}
	var oneOf []map[string]string
	for _, d := range directions {
		oneOf = append(oneOf, map[string]string{"const": d.id, "title": d.title})
	}
	return &mcp.CallToolResult{
		InputRequests: mcp.InputRequestMap{"direction": &mcp.ElicitParams{
			Message: "请选择故事方向",
			RequestedSchema: map[string]any{"type": "object", "required": []string{"direction"},
				"properties": map[string]any{"direction": map[string]any{"type": "string", "title": "方向", "oneOf": oneOf}}},
		}},
		RequestState: "choose_direction:" + in.Topic,
	}, nil
}

// makeReport returns a Markdown report on the topic as an embedded
// resource (a file the client can download), beside a line of text.
func makeReport(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Topic string `json:"topic"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || strings.TrimSpace(in.Topic) == "" {
		return errorResult("make_report needs a topic"), nil
	}
	body := fmt.Sprintf("# %s\n\nA short demo report on %s, written by llmstream's demo server.\n\n- It is deterministic.\n- It is a file.\n", in.Topic, in.Topic)
	return &mcp.CallToolResult{Content: []mcp.Content{
		&mcp.TextContent{Text: fmt.Sprintf("Wrote report.md (%d bytes) on %q.", len(body), in.Topic)},
		&mcp.EmbeddedResource{Resource: &mcp.ResourceContents{URI: "demo://reports/report.md", MIMEType: "text/markdown", Text: body}},
	}}, nil
}

// alwaysFail reports an error as a tool result (isError), as MCP wants
// tool failures reported, so that the model can read them.
func alwaysFail(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Reason string `json:"reason"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &in)
	msg := "always_fail failed, as it always does"
	if in.Reason != "" {
		msg += ": " + in.Reason
	}
	return errorResult(msg), nil
}

// MaxSleep bounds the sleep tool's wait.
const MaxSleep = 60 * time.Second

// sleep waits the given seconds, with a progress notification at the
// start of each second, and answers how long it slept; a cancelled call
// ends at once.
func sleep(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var in struct {
		Seconds *float64 `json:"seconds"`
	}
	if err := json.Unmarshal(req.Params.Arguments, &in); err != nil || in.Seconds == nil || *in.Seconds < 0 || *in.Seconds > MaxSleep.Seconds() {
		return errorResult("sleep needs seconds, a number from 0 to 60"), nil
	}
	total := time.Duration(*in.Seconds * float64(time.Second))
	steps := int(total / time.Second)
	if total%time.Second != 0 {
		steps++
	}
	deadline := time.Now().Add(total)
	for i := 0; i < steps; i++ {
		notifyProgress(ctx, req, float64(i), float64(steps), fmt.Sprintf("slept %d of %gs", i, *in.Seconds))
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(min(time.Second, time.Until(deadline))):
		}
	}
	return textResult(fmt.Sprintf("Slept %g seconds.", *in.Seconds)), nil
}

// notifyProgress sends a progress notification when the caller asked for
// them (a progress token in the request's _meta).
func notifyProgress(ctx context.Context, req *mcp.CallToolRequest, progress, total float64, msg string) {
	token := req.Params.GetProgressToken()
	if token == nil {
		return
	}
	_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: token, Progress: progress, Total: total, Message: msg,
	})
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

func errorResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}
