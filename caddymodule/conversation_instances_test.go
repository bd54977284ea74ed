package caddymodule

import (
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/conversation/storetest"
)

// instance is a Caddy process of its own (the test binary run as Caddy,
// TestMain) serving a conversation route.
type instance struct {
	cmd  *exec.Cmd
	base string // http://127.0.0.1:port/skillpet
	log  string
}

// startInstance starts a Caddy process whose conversation route at
// /skillpet/ keeps its conversations in the Redis at redisURL and proxies
// to upstream, and waits until it answers.
func startInstance(t *testing.T, redisURL, upstream string) *instance {
	t.Helper()
	return startInstanceRoute(t, convRoute(upstream, "", "store redis "+redisURL, "lease 1s"))
}

// startInstanceRoute starts a Caddy process serving the site body route
// (whose conversation route is at /skillpet/), and waits until it
// answers.
func startInstanceRoute(t *testing.T, route string) *instance {
	t.Helper()
	dir := t.TempDir()
	addr := freePort(t)
	caddyfile := `{
	admin off
	persist_config off
	auto_https off
	storage file_system ` + filepath.Join(dir, "data") + `
}
http://` + addr + ` {
` + route + `}
`
	cfg := filepath.Join(dir, "Caddyfile")
	if err := os.WriteFile(cfg, []byte(caddyfile), 0o600); err != nil {
		t.Fatal(err)
	}
	logFile, err := os.Create(filepath.Join(dir, "caddy.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer logFile.Close()
	// Not os.Args[0]: caddytest rewrites os.Args to "caddy run …" when it
	// starts its in-process Caddy, and an earlier test in this package may
	// have done so.
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childConfigEnv+"="+cfg, "HOME="+dir,
		"XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{cmd: cmd, base: "http://" + addr + "/skillpet", log: logFile.Name()}
	t.Cleanup(func() {
		in.kill()
		if t.Failed() {
			b, _ := os.ReadFile(in.log)
			t.Logf("%s's log:\n%s", addr, b)
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		req, _ := http.NewRequest(http.MethodGet, in.base+"/init/ready", nil)
		req.Header.Set("Authorization", "Bearer ready")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return in
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(in.log)
			t.Fatalf("the Caddy instance did not answer: %v\n%s", err, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill stops the process at once, as a crash would (SIGKILL).
func (in *instance) kill() {
	if in.cmd.ProcessState == nil {
		_ = in.cmd.Process.Kill()
		_ = in.cmd.Wait()
	}
}

// askUserChunks is a native ask_user call and its finish.
var askUserChunks = chunk(`{"tool_calls":[{"index":0,"id":"call_ask","type":"function","function":{"name":"ask_user","arguments":""}}]}`) +
	chunk(`{"tool_calls":[{"index":0,"function":{"arguments":"{\"questions\":[{\"id\":\"genre\",\"prompt\":\"题材？\",\"options\":[\"玄幻\",\"科幻\"]}]}"}}]}`) +
	`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}` + "\n\n" +
	"data: [DONE]\n\n"

// TestConversationTwoInstancesShareRedis: two Caddy processes share one
// Redis and continue one conversation alternately; one is killed
// mid-stream, and the history stays consistent: the other continues it
// once the dead one's lease expires, with every turn in order, the killed
// turn's message kept without a reply, and a valid upstream request.
func TestConversationTwoInstancesShareRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy processes")
	}
	redisURL := storetest.StartRedis(t)
	reply := func(n int) string { return "第" + strconv.Itoa(n) + "轮。" }
	u := newRecordingUpstream(t, func(n int, _ upstreamBody, w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		switch n {
		case 1:
			writeFlush(w, roleChunk, content(reply(1)), askUserChunks)
		case 5: // the instance serving it is killed mid-reply
			writeFlush(w, roleChunk, content("第五轮"))
			<-r.Context().Done()
		default:
			writeFlush(w, roleChunk, content(reply(n)), finishChunks)
		}
	})
	a := startInstance(t, redisURL, u.hostPort())
	b := startInstance(t, redisURL, u.hostPort())
	ca := newChatClient(t, a.base, "Bearer shared")
	cb := newChatClient(t, b.base, "Bearer shared")

	if evs := ca.stream("p", "写个故事"); tokens(t, evs) != reply(1) || lastEvent(evs) != "done" {
		t.Fatalf("turn 1 on A: %+v", evs)
	}
	if evs := cb.stream("p", "题材：玄幻"); tokens(t, evs) != reply(2) {
		t.Fatalf("turn 2 on B: %+v", evs)
	}
	// B continued A's turn: the ask_user call answered by the answers.
	if up := u.last(t); roles(up.Messages) != "system,user,assistant,tool" || up.Messages[3].ToolCallID != "call_ask" || up.Messages[3].text() != "题材：玄幻" {
		t.Fatalf("turn 2's upstream request %s: %+v", roles(up.Messages), up.Messages)
	}
	ca.stream("p", "第三问")
	cb.stream("p", "第四问")

	// Turn 5 on A: A dies after the first token.
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp := ca.do(ctx, http.MethodPost, a.base+"/stream", `{"projectId":"p","message":"第五问"}`)
	er := readEvents(resp.Body, false)
	if ev, ok := er.next(t, 5); !ok || ev.Name != "token" {
		t.Fatalf("turn 5: %+v", ev)
	}
	a.kill()
	resp.Body.Close()

	// Turn 6 on B: refused while A's lock lives (409), then served once
	// its lease (1s, no longer renewed) runs out.
	var evs []sseEvent
	busy := 0
	deadline := time.Now().Add(15 * time.Second)
	for {
		evs = cb.stream("p", "第六问", http.StatusConflict)
		if evs[0].Name != ":body" {
			break
		}
		busy++
		if !strings.Contains(evs[0].Data, "CONVERSATION_BUSY") || time.Now().After(deadline) {
			t.Fatalf("turn 6 on B: %s", evs[0].Data)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if tokens(t, evs) != reply(6) || lastEvent(evs) != "done" {
		t.Fatalf("turn 6 on B: %+v", evs)
	}
	t.Logf("turn 6 was refused %d times while the dead instance's lease lived", busy)
	up := u.last(t)
	if got, want := roles(up.Messages), "system,user,assistant,tool,assistant,user,assistant,user,assistant,user,assistant,user"; got != want {
		t.Fatalf("turn 6's upstream request:\n got %s\nwant %s", got, want)
	}
	if m := up.Messages[10]; m.text() != conversation.NoteNoReply || up.Messages[9].text() != "第五问" || up.Messages[11].text() != "第六问" {
		t.Errorf("the killed turn in turn 6's request: %+v %+v %+v", up.Messages[9], m, up.Messages[11])
	}

	msgs := cb.init("p").Messages
	var got []string
	for _, m := range msgs {
		if m.Role == "assistant" {
			got = append(got, "a:"+decodeAssistant(t, m).Text)
		} else if m.Role == "tool" {
			got = append(got, "t:"+decodeTool(t, m).ToolCallID)
		} else {
			got = append(got, "u:"+m.Content)
		}
	}
	want := []string{"u:写个故事", "a:" + reply(1), "t:call_ask", "u:题材：玄幻", "a:" + reply(2), "u:第三问", "a:" + reply(3),
		"u:第四问", "a:" + reply(4), "u:第五问", "u:第六问", "a:" + reply(6)}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("the history:\n got %q\nwant %q", got, want)
	}
}

// TestParkedAcrossInstances: a call that waits for the user's approval
// is parked in the Redis the instances share (CONTRACT.md §13): the
// instance that asked is killed, and the other takes the answer and
// goes on, running the tool and the next round.
func TestParkedAcrossInstances(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Caddy processes")
	}
	redisURL := storetest.StartRedis(t)
	u := newRecordingUpstream(t, func(n int, b upstreamBody, w http.ResponseWriter, r *http.Request) {
		sseHead(w)
		if last := b.Messages[len(b.Messages)-1]; last.Role == "tool" {
			writeFlush(w, roleChunk, content("天气："+last.text()), finishChunks)
			return
		}
		writeFlush(w, roleChunk, content("我查一下。"),
			chunk(`{"tool_calls":[{"index":0,"id":"call_w","type":"function","function":{"name":"get_weather","arguments":"{\"city\":\"Paris\"}"}}]}`)+
				`data: {"id":"chatcmpl-1","object":"chat.completion.chunk","created":1,"model":"up-model","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`+"\n\n"+
				"data: [DONE]\n\n")
	})
	route := strings.Replace(convRoute(u.hostPort(), "", "store redis "+redisURL, "lease 1s"), "\t\t\ttool ask_user\n",
		"\t\t\ttool ask_user\n\t\t\ttools {\n\t\t\t\tmcp demo {\n\t\t\t\t\tbuiltin demo\n\t\t\t\t\tapprove get_weather\n\t\t\t\t}\n\t\t\t}\n", 1)
	if !strings.Contains(route, "approve get_weather") {
		t.Fatal("the route has no tools block")
	}
	a := startInstanceRoute(t, route)
	b := startInstanceRoute(t, route)
	ca := newChatClient(t, a.base, "Bearer shared")
	cb := newChatClient(t, b.base, "Bearer shared")
	evs := ca.stream("p", "巴黎天气？")
	res := ""
	for _, e := range evs {
		if e.Name == "tool_result" {
			res = e.Data
		}
	}
	if !strings.Contains(res, `"status":"awaiting_user"`) || !strings.Contains(res, `"id":"call_w"`) {
		t.Fatalf("turn 1 on A: %+v", evs)
	}
	a.kill()
	status, evs := cb.toolResponse(`{"projectId":"p","toolCallId":"call_w","toolName":"get_weather","optionId":"approve"}`)
	if status != http.StatusOK {
		t.Fatalf("the answer on B: %d %+v", status, evs)
	}
	if got := tokens(t, evs); !strings.HasPrefix(got, "天气：Paris:") || lastEvent(evs) != "done" {
		t.Fatalf("the continuation on B: %q %+v", got, evs)
	}
	if status, evs := cb.toolResponse(`{"projectId":"p","toolCallId":"call_w","toolName":"get_weather","optionId":"approve"}`); status != http.StatusConflict {
		t.Errorf("answered twice: %d %+v", status, evs)
	}
	var roles []string
	for _, m := range cb.init("p").Messages {
		roles = append(roles, m.Role)
	}
	if got := strings.Join(roles, " "); got != "user assistant tool tool assistant" {
		t.Errorf("the history: %s", got)
	}
}
