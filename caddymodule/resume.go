package caddymodule

import (
	"context"
	"net/http"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/modules/caddyhttp"
	"go.uber.org/zap"

	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/request"
)

// The answers that resume a parked round (CONTRACT.md §13, park.go):
//
//   - skillpet: POST …/tool-response {projectId, toolCallId, toolName,
//     optionId} answers an approval or a choice (specs/002 §2.4); a form
//     (ask_user) is answered by the next POST …/stream, whose message is
//     the answers (§3.4);
//   - aisdk: the request useChat sends after addToolApprovalResponse,
//     whose last assistant message holds the approvals.
//
// Each takes the parked record (once: a second answer is refused), checks
// the answer against it, and streams the continuation: the answered calls
// run on (or are declined), their results go to the model with the round's
// others, and the loop goes on from the round's request.

// resumed is a parked round a request resumes.
type resumed struct {
	rec     *parkedRecord
	answers map[string]agent.Answer
}

// parkRefusal answers a request before its stream: a JSON error.
type parkRefusal struct {
	status        int
	code, message string
}

// serveToolResponse answers POST …/tool-response on a conversation route:
// the user picked an option of a call that waits (an approval, a choice),
// and the continuation streams like /stream's turn.
func (h *Handler) serveToolResponse(w http.ResponseWriter, r *http.Request, next caddyhttp.Handler) error {
	c := h.conv
	rid := requestID(r)
	body, rerr := h.readBody(r)
	if rerr != nil {
		c.answer(w, rid, rerr.Status, request.CodeMissingParams, rerr.Message)
		return nil
	}
	tr, rerr := request.ParseToolResponse(body)
	if rerr != nil {
		c.answer(w, rid, rerr.Status, rerr.Code, rerr.Message)
		return nil
	}
	scope := c.scope(r)
	if scope == "" {
		c.noScope(w, rid)
		return nil
	}
	if h.parks == nil || h.parks.store == nil || !h.parks.conv {
		c.answer(w, rid, http.StatusNotFound, "NOT_WAITING", "this route runs no tools that wait for an answer")
		return nil
	}
	key := conversation.NewKey(scope, c.cs.AgentID, tr.ProjectID)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
	defer cancel()
	lock, err := c.store.Lock(ctx, key)
	if err != nil {
		c.storeFailed(w, rid, "CHAT_FAILED", err)
		return nil
	}
	t := &turn{c: c, key: key, rid: rid, lock: lock}
	res, ref := h.takeToolResponse(ctx, t, tr)
	if ref != nil {
		t.release()
		c.answer(w, rid, ref.status, ref.code, ref.message)
		return nil
	}
	defer t.end()
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	ch := &chat{start: time.Now(), rid: rid, repl: repl, body: res.rec.Body, turn: t, resume: res,
		info: request.Info{Stream: true, Facts: request.SkillpetFacts{ConversationID: firstNonEmpty(tr.ConversationID, tr.ProjectID),
			NoThinking: !tr.EnableThinking || !c.cs.ThinkingEnabled}}}
	ch.tools = h.offerTools(r.Context(), repl, tr.EnableSearch)
	ch.park = h.newParking(r, t)
	ch.files = h.newFiles(r, ch.tools)
	if ch.check, rerr = h.validation(ch.body, repl); rerr != nil {
		c.answer(w, rid, rerr.Status, rerr.Code, rerr.Message)
		return nil
	}
	setBody(r, ch.body)
	return h.stream(w, r, ch, next)
}

// takeToolResponse checks a /tool-response answer against the
// conversation's parked round and takes it.
func (h *Handler) takeToolResponse(ctx context.Context, t *turn, tr request.ToolResponse) (*resumed, *parkRefusal) {
	pk := conversation.ConversationPark(t.key)
	data, err := h.parks.store.Peek(ctx, pk)
	if err != nil {
		return nil, refuse(err)
	}
	rec, err := h.parks.decodeRecord(data)
	if err != nil {
		return nil, refuse(err)
	}
	call := rec.waitingCall(tr.ToolCallID)
	switch {
	case call == nil:
		return nil, &parkRefusal{http.StatusNotFound, "NOT_WAITING", "no tool call " + tr.ToolCallID + " waits for an answer in this conversation"}
	case call.Name != tr.ToolName:
		return nil, &parkRefusal{http.StatusBadRequest, "TOOL_MISMATCH", "tool call " + tr.ToolCallID + " is a call of " + call.Name + ", not " + tr.ToolName}
	case call.Park.Await.Kind == transform.AwaitForm:
		return nil, &parkRefusal{http.StatusBadRequest, "FORM_AWAITS", "this tool call waits for a form: send the answers as the next message to …/stream"}
	case !agent.HasOption(call.Park.Await, tr.OptionID):
		return nil, &parkRefusal{http.StatusBadRequest, "INVALID_OPTION", "optionId " + tr.OptionID + " is not one of the call's options"}
	case !toolserver.Holds(call.Park):
		return nil, &parkRefusal{http.StatusConflict, codeHeldElsewhere, msgHeldElsewhere}
	}
	history, err := t.c.store.Load(ctx, t.key)
	if err != nil {
		return nil, refuse(err)
	}
	if !lastAsked(history, tr.ToolCallID) {
		// The conversation went on after the call asked: its answer
		// would fork it.
		_ = h.parks.store.Drop(ctx, pk)
		return nil, &parkRefusal{http.StatusConflict, "SUPERSEDED", "the conversation went on after this tool call asked; answer in a new message"}
	}
	if _, err := h.parks.store.Take(ctx, pk); err != nil {
		return nil, refuse(err)
	}
	return &resumed{rec: rec, answers: map[string]agent.Answer{tr.ToolCallID: {OptionID: tr.OptionID}}}, nil
}

// refuse is the parkRefusal of a store error.
func refuse(err error) *parkRefusal {
	status, code, msg := parkErrorAnswer(err)
	return &parkRefusal{status, code, msg}
}

// lastAsked reports whether the conversation's last turn is the one that
// made the call id: its last records are an assistant record with the
// call, then tool records (the turns that resumed others of its calls add
// tool records too).
func lastAsked(history []conversation.Record, id string) bool {
	for i := len(history) - 1; i >= 0; i-- {
		switch history[i].Role {
		case conversation.RoleTool:
			continue
		case conversation.RoleAssistant:
			return conversation.HasCall(history[i].Content, id)
		}
		return false
	}
	return false
}

// resumeForm checks whether a /stream message answers a form the
// conversation's parked round waits on (an elicitation shown as ask_user)
// and takes the round if so. A parked round the message does not answer
// is dropped: the conversation goes on without it.
func (h *Handler) resumeForm(ctx context.Context, t *turn, history []conversation.Record, message string) *resumed {
	p := h.parks
	if p == nil || p.store == nil || !p.conv {
		return nil
	}
	pk := conversation.ConversationPark(t.key)
	data, err := p.store.Peek(ctx, pk)
	if err != nil {
		return nil
	}
	rec, err := p.decodeRecord(data)
	if err != nil {
		return nil
	}
	answers := map[string]agent.Answer{}
	for _, c := range rec.Round.Calls {
		if c.Park != nil && c.Result == nil && c.Park.Await.Kind == transform.AwaitForm && lastAsked(history, c.ID) && toolserver.Holds(c.Park) {
			answers[c.ID] = agent.Answer{Text: message}
		}
	}
	if len(answers) == 0 {
		_ = p.store.Drop(ctx, pk)
		return nil
	}
	if _, err := p.store.Take(ctx, pk); err != nil {
		return nil
	}
	return &resumed{rec: rec, answers: answers}
}

// resumeApprovals takes the parked round the approvals of an AI SDK or a
// Responses request answer: they name it by their approval ids, under
// the request's park scope.
func (h *Handler) resumeApprovals(r *http.Request, approvals []request.Approval) (*resumed, *parkRefusal) {
	p := h.parks
	if p == nil || p.store == nil || !p.ids {
		return nil, &parkRefusal{http.StatusBadRequest, "NOT_WAITING", "this route runs no tools that wait for an approval"}
	}
	id, _, ok := parseApprovalID(approvals[0].ID)
	if !ok {
		return nil, &parkRefusal{http.StatusNotFound, "NOT_WAITING", "approval " + approvals[0].ID + " is not one this route asked for"}
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), storeTimeout)
	defer cancel()
	pk := conversation.NewParkKey(p.parkScope(r), id)
	data, err := p.store.Peek(ctx, pk)
	if err != nil {
		return nil, refuse(err)
	}
	rec, err := p.decodeRecord(data)
	if err != nil {
		return nil, refuse(err)
	}
	answers := map[string]agent.Answer{}
	for _, a := range approvals {
		pid, index, ok := parseApprovalID(a.ID)
		if !ok || pid != id {
			continue
		}
		for _, c := range rec.Round.Calls {
			// A Responses mcp_approval_response names the approval only:
			// its id names the call (parseApprovalID).
			if c.Index == index && (c.ID == a.ToolCallID || a.ToolCallID == "") && c.Park != nil && c.Result == nil && c.Park.Await.Kind == transform.AwaitApproval {
				opt := transform.OptionApprove
				if !a.Approved {
					opt = transform.OptionDeny
				}
				answers[c.ID] = agent.Answer{OptionID: opt, Reason: a.Reason}
			}
		}
	}
	if len(answers) == 0 {
		return nil, &parkRefusal{http.StatusNotFound, "NOT_WAITING", "no tool call of this conversation waits for these approvals"}
	}
	if _, err := p.store.Take(ctx, pk); err != nil {
		return nil, refuse(err)
	}
	return &resumed{rec: rec, answers: answers}, nil
}

// logResume notes a resumed round at debug level: ids and counts only.
func (h *Handler) logResume(rid string, res *resumed) {
	if res == nil {
		return
	}
	if c := h.logger.Check(zap.DebugLevel, "parked round resumed"); c != nil {
		c.Write(zap.String("request_id", rid), zap.Int("round", res.rec.Round.Round), zap.Int("answers", len(res.answers)))
	}
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}
