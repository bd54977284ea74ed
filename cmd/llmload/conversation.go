package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// conversations holds -conversations skillpet conversations at once, each
// its own user and project sending -turns turns in a row, and then checks
// each history (GET …/init/{projectId}): every turn the client saw
// complete is there, whole (its user message, then the assistant's answer
// as the client read it), in order, and nothing is there twice. A turn
// that failed may be there or not (CONTRACT §9: a failed turn is stored as
// far as it went, or not at all, but never half of one user message).
func (l *load) conversations(ctx context.Context) {
	rt := &l.o.routes[0]
	base := strings.TrimSuffix(rt.url, "/stream")
	run := strconv.FormatInt(time.Now().UnixNano()%1e9, 36)
	var wg sync.WaitGroup
	var n int64
	var nmu sync.Mutex
	for i := range l.o.convs {
		wg.Go(func() {
			if l.o.ramp > 0 {
				time.Sleep(l.o.ramp * time.Duration(i) / time.Duration(l.o.convs))
			}
			user := fmt.Sprintf("Bearer load-%s-%d", run, i)
			project := fmt.Sprintf("load-%s-%d", run, i)
			h := http.Header{"Authorization": {user}}
			type turn struct {
				message string
				r       result
			}
			var turns []turn
			for k := range l.o.turns {
				if ctx.Err() != nil {
					break
				}
				msg := fmt.Sprintf("turn %d of conversation %d", k+1, i)
				body, _ := json.Marshal(map[string]string{"projectId": project, "message": msg})
				nmu.Lock()
				n++
				num := n
				nmu.Unlock()
				l.begin()
				r := l.stream(ctx, rt, num, body, h)
				l.end(r)
				turns = append(turns, turn{msg, r})
				if r.outcome != "ok" {
					// A person tries again a moment later, not at once.
					select {
					case <-time.After(time.Second):
					case <-ctx.Done():
					}
				}
			}
			hist, err := history(ctx, l.client, base+"/init/"+project, user)
			var problems []string
			if err != nil {
				problems = append(problems, err.Error())
			}
			// Walk the history with the turns: each completed turn's
			// user message and answer, in order.
			j := 0
			for _, t := range turns {
				at := -1
				for k := j; k < len(hist); k++ {
					if hist[k].Role == "user" && hist[k].Content == t.message {
						at = k
						break
					}
				}
				if t.r.outcome != "ok" {
					if at >= 0 {
						j = at + 1
					}
					continue
				}
				switch {
				case at < 0:
					problems = append(problems, fmt.Sprintf("completed %q is not in the history", t.message))
				case at+1 >= len(hist) || hist[at+1].Role != "assistant":
					problems = append(problems, fmt.Sprintf("completed %q has no answer in the history: %s", t.message, roles(hist)))
				case storedText(hist[at+1].Content) != t.r.answer:
					problems = append(problems, fmt.Sprintf("completed %q: the stored answer (%d bytes) is not what the client read (%d bytes)",
						t.message, len(hist[at+1].Content), len(t.r.answer)))
				default:
					j = at + 2
				}
			}
			seen := map[string]bool{}
			for _, m := range hist {
				if m.Role == "user" {
					if seen[m.Content] {
						problems = append(problems, fmt.Sprintf("%q is in the history twice", m.Content))
					}
					seen[m.Content] = true
				}
			}
			if len(problems) > 0 {
				l.mu.Lock()
				for _, p := range problems {
					l.convErr = append(l.convErr, project+": "+p)
				}
				l.mu.Unlock()
			}
		})
	}
	wg.Wait()
}

// historyMessage is a message of specs/002 §2.2's init history.
type historyMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// history reads a conversation's stored messages, retrying while the store
// is down (a Redis restart may still be under way when the turns end).
func history(ctx context.Context, client *http.Client, url, auth string) ([]historyMessage, error) {
	var last error
	for try := 0; try < 30; try++ {
		if try > 0 {
			select {
			case <-time.After(time.Second):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return nil, err
		}
		req.Header.Set("Authorization", auth)
		resp, err := client.Do(req)
		if err != nil {
			last = err
			continue
		}
		var d struct {
			Messages []historyMessage `json:"messages"`
		}
		err = json.NewDecoder(resp.Body).Decode(&d)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			last = fmt.Errorf("init: %s", resp.Status)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		return d.Messages, nil
	}
	return nil, fmt.Errorf("init never answered: %w", last)
}

// storedText is the answer text of a stored assistant message: the text
// of specs/002 §4's public assistant record, or the content as it is.
func storedText(content string) string {
	var rec struct {
		T    string  `json:"_t"`
		Text *string `json:"text"`
	}
	if json.Unmarshal([]byte(content), &rec) == nil && rec.Text != nil {
		return *rec.Text
	}
	return content
}

// roles sums up a history for a report: its roles in order.
func roles(hist []historyMessage) string {
	var b strings.Builder
	for _, m := range hist {
		if m.Role == "user" {
			b.WriteString(strings.TrimPrefix(m.Content, "turn ")[:1] + ":")
		}
		b.WriteString(m.Role[:1] + " ")
	}
	return b.String()
}
