package caddymodule

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/llmstream/llmstream/conversation"
)

// TestImages: a tool the route marks as an image tool is shown as
// image_generating then image_generation with its images, served by
// llmstream (CONTRACT.md §13, specs/002 §3.7); the block is stored as
// "[image_generation] "; POST …/image-select records the choice, which
// init replays; "__continue__" continues the turn with it, unstored.
func TestImages(t *testing.T) {
	if testing.Short() {
		t.Skip("runs Caddy in process")
	}
	dir := t.TempDir()
	s := startSite(t, "", `	handle /mock/* {
		llm_mock {
			record
			by_round
			interval 0
			reply_text "Drawing."
			tool_calls_file testdata/park/image_call.json
			reply_text "Here they are."
			tool_calls_file testdata/loop/no_calls.json
		}
	}
`+demoConvRoute(dir, "image generate_image single_select"))
	c := newChatClient(t, s.url("/conv"), "Bearer u1")
	evs := c.stream("p1", "draw a cat")
	if names := eventNames(evs); !strings.Contains(names, "tool_start image_generating tool_result image_generation round_start") {
		t.Fatalf("events: %s", names)
	}
	gen := gjson.Parse(eventNamed(evs, "image_generation"))
	block := gen.Get("id").String()
	if gen.Get("prompt").String() != "一只猫" || gen.Get("mode").String() != "single_select" || gen.Get("images.#").Int() != 2 ||
		gen.Get("maxSelect").Int() != 1 || block != gjson.Get(eventNamed(evs, "image_generating"), "id").String() {
		t.Fatalf("image_generation: %s", gen.Raw)
	}
	url := gen.Get("images.1.url").String()
	resp, err := newClient(t, "h1").Get(s.url(url))
	if err != nil {
		t.Fatal(err)
	}
	png, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "image/png" || !strings.HasPrefix(string(png), "\x89PNG") {
		t.Fatalf("GET the image: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	imageRecord := func() string {
		for _, m := range c.init("p1").Messages {
			if strings.Contains(m.Content, conversation.ImagePrefix) {
				return gjson.Get(m.Content, "body").String()
			}
		}
		return ""
	}
	if rec := imageRecord(); !strings.HasPrefix(rec, conversation.ImagePrefix+`{"id":"`+block+`"`) {
		t.Fatalf("the stored block: %q", rec)
	}

	sel := func(body string) (int, string) { return c.call(http.MethodPost, c.base+"/image-select/p1", body) }
	for _, bad := range []struct {
		body   string
		status int
	}{
		{`{"blockId":"` + block + `","selectedImageIds":["img-0","img-1"]}`, http.StatusBadRequest},
		{`{"blockId":"` + block + `","selectedImageIds":["img-9"]}`, http.StatusBadRequest},
		{`{"blockId":"img-nope","selectedImageIds":["img-0"]}`, http.StatusNotFound},
		{`{"blockId":"` + block + `"}`, http.StatusBadRequest},
	} {
		if status, body := sel(bad.body); status != bad.status {
			t.Errorf("%s: %d %s, want %d", bad.body, status, body, bad.status)
		}
	}
	other := newChatClient(t, s.url("/conv"), "Bearer u2")
	if status, _ := other.call(http.MethodPost, other.base+"/image-select/p1", `{"blockId":"`+block+`","selectedImageIds":["img-1"]}`); status != http.StatusNotFound {
		t.Errorf("another user's selection: %d", status)
	}
	if status, body := sel(`{"blockId":"` + block + `","selectedImageIds":["img-1"]}`); status != http.StatusOK || body != `{"success":true}` {
		t.Fatalf("image-select: %d %s", status, body)
	}
	rec := gjson.Parse(strings.TrimPrefix(imageRecord(), conversation.ImagePrefix))
	if rec.Get("status").String() != "selected" || rec.Get("selectedImageIds.0").String() != "img-1" || rec.Get("images.#").Int() != 2 {
		t.Fatalf("the block after the choice: %s", rec.Raw)
	}

	clearRecorded(t, s)
	evs = c.stream("p1", conversation.ContinueMessage)
	if lastEvent(evs) != "done" {
		t.Fatalf("__continue__: %+v", evs)
	}
	bodies := recorded(t, s)
	if len(bodies) == 0 {
		t.Fatal("no upstream request")
	}
	msgs := bodies[0].Messages
	if last := msgs[len(msgs)-1]; last.Role != "user" || last.text() != conversation.NoteContinue {
		t.Errorf("the continuation's last message: %+v", last)
	}
	var tool string
	for _, m := range msgs {
		if m.Role == "tool" {
			tool = m.text()
		}
	}
	if !strings.Contains(tool, "[The user chose images img-1 of the 2 generated ("+block+")") {
		t.Errorf("the model is not told the choice: %q", tool)
	}
	for _, m := range c.init("p1").Messages {
		if m.Role == "user" && m.Content == conversation.ContinueMessage {
			t.Error("__continue__ was stored")
		}
	}
}
