package caddymodule

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/tidwall/gjson"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/request"
)

// turn is one POST …/stream of a conversation route: it holds the
// conversation's lock from before the upstream request until the reply is
// stored (CONTRACT.md §9).
type turn struct {
	c       *conversationRoute
	key     conversation.Key
	rid     string
	lock    conversation.Lock
	capture *conversation.Capture
	ended   bool
	// resume is the parked round the turn's message answers (a form), nil
	// for a new turn (resume.go).
	resume *resumed
}

// beginTurn makes a conversation turn of a shaped skillpet request: it
// takes the conversation's lock, reads its history, stores the user's
// message and returns the upstream body with the history before that
// message. A request it refuses (the returned func answers it) never
// reaches the upstream and writes nothing: 403 without a scope, 409 while
// another reply to the conversation streams, 503 when the store is down.
// info's skillpet facts lose their reasoning when the route's thinking is
// off. Without a conversation on the route it returns body as it is and a
// nil turn.
func (h *Handler) beginTurn(r *http.Request, rid string, clientBody, body []byte, info *request.Info) (*turn, []byte, func(http.ResponseWriter)) {
	c := h.conv
	if c == nil {
		return nil, body, nil
	}
	if !c.cs.ThinkingEnabled {
		if req, ok := info.Facts.(request.SkillpetFacts); ok {
			req.NoThinking = true
			info.Facts = req
		}
	}
	// request_format skillpet checked both: non-empty strings.
	projectID := gjson.GetBytes(clientBody, "projectId").String()
	message := gjson.GetBytes(clientBody, "message").String()
	if len(projectID) > maxProjectID {
		return nil, nil, func(w http.ResponseWriter) {
			c.answer(w, rid, http.StatusBadRequest, request.CodeMissingParams, "projectId is longer than 256 bytes")
		}
	}
	scope := c.scope(r)
	if scope == "" {
		return nil, nil, func(w http.ResponseWriter) { c.noScope(w, rid) }
	}
	key := conversation.NewKey(scope, c.cs.AgentID, projectID)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
	defer cancel()
	fail := func(err error) func(http.ResponseWriter) {
		return func(w http.ResponseWriter) { c.storeFailed(w, rid, "CHAT_FAILED", err) }
	}
	lock, err := c.store.Lock(ctx, key)
	if err != nil {
		return nil, nil, fail(err)
	}
	t := &turn{c: c, key: key, rid: rid, lock: lock}
	history, err := c.store.Load(ctx, key)
	if err != nil {
		t.release()
		return nil, nil, fail(err)
	}
	// A message that answers a form a parked round waits on resumes it;
	// any other message leaves the parked round behind (resume.go).
	// "__continue__" (the component's autoSendAfterImageSelect, specs/002
	// §3.8) continues the turn with the user's choice of images: nobody
	// wrote it, so it is not stored, and the model is told to go on.
	cont := message == conversation.ContinueMessage
	if !cont {
		t.resume = h.resumeForm(ctx, t, history, message)
	}
	tm, err := conversation.FindTurnMessage(body)
	if err != nil { // request_format skillpet always makes one
		t.release()
		return nil, nil, fail(err)
	}
	userRec := tm.Record(newID("msg_"), message, nowMillis())
	if cont {
		userRec.Content, userRec.Upstream = conversation.NoteContinue, nil
	}
	msgs, _ := conversation.Messages(nil, history, userRec, c.cs.Budget)
	if cont {
		return t, tm.Replace(body, msgs), nil
	}
	if err := lock.Append(ctx, userRec); err != nil {
		t.release()
		return nil, nil, fail(err)
	}
	return t, tm.Replace(body, msgs), nil
}

// encoder wraps the stream's encoder so that the reply the client sees is
// stored when the stream ends (conversation.Capture). A nil turn returns
// inner: the route keeps no conversation.
func (t *turn) encoder(inner transform.Encoder, meta transform.Meta) transform.Encoder {
	if t == nil {
		return inner
	}
	t.capture = conversation.NewCapture(inner, meta.MessageID, func(r *conversation.Reply) { t.store(meta.MessageID, r) })
	return t.capture
}

// store appends the reply's records and releases the lock. It runs at the
// terminal event, before the client gets it, so that a client that sends
// its next message on done finds this turn stored and the conversation
// free; or at the end of a stream that had none (the client left).
func (t *turn) store(id string, r *conversation.Reply) {
	recs := r.Records(id, func() string { return newID("msg_") }, nowMillis())
	if len(recs) > 0 {
		ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
		defer cancel()
		if err := appendRetrying(ctx, t.lock, recs); err != nil {
			// The user's message is stored and the reply is not: the next
			// turn's request gives it conversation.NoteNoReply.
			lost := errors.Is(err, conversation.ErrLockLost)
			t.c.logger.Warn("conversation reply not stored", zap.String("request_id", t.rid), zap.Bool("lock_lost", lost), zap.Error(err))
		}
	}
	t.release()
}

// appendRetrying appends a reply's records, trying again while the store
// is unreachable (a Redis restarting: the load harness's fault runs found
// completed turns whose replies were lost to a restart of a second) until
// ctx ends. The client's terminal event waits meanwhile, so that a client
// that saw its turn complete finds it in the history. A lock that expired
// is not retried: another holder may write now.
func appendRetrying(ctx context.Context, lock conversation.Lock, recs []conversation.Record) error {
	wait := 50 * time.Millisecond
	for {
		err := lock.Append(ctx, recs...)
		if err == nil || errors.Is(err, conversation.ErrLockLost) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(wait):
		}
		wait = min(2*wait, time.Second)
	}
}

// release gives the conversation back, once.
func (t *turn) release() {
	if t.ended {
		return
	}
	t.ended = true
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	t.c.release(ctx, t.rid, t.lock)
}

// end runs when the request is over: a stream that wrote no terminal
// event (its client left) stores what was shown as interrupted.
func (t *turn) end() {
	if t == nil {
		return
	}
	if t.capture != nil {
		t.capture.Close()
	}
	t.release()
}
