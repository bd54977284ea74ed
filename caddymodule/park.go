package caddymodule

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/caddyserver/caddy/v2"

	"github.com/llmstream/llmstream/config"
	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/conversation/filestore"
	"github.com/llmstream/llmstream/conversation/redisstore"
	"github.com/llmstream/llmstream/toolserver"
	"github.com/llmstream/llmstream/transform/agent"
	"github.com/llmstream/llmstream/transform/pipeline"
)

// Calls that wait for the user (CONTRACT.md §13): when a round ends with
// calls waiting (a tool the route marks approve, a server's elicitation),
// the round is parked: its record (the round's upstream request and the
// state of its calls, pipeline.RoundState) goes to the store, and the turn
// ends showing the questions. The user's answer, in a later request
// (skillpet POST …/tool-response, or a /stream message that answers a
// form; the approvals an AI SDK page sends back), takes the record and
// resumes the round on its own stream (resume.go).
//
// Where: a conversation route parks in its conversation's store, one
// parked round per conversation (its last turn's), under the
// conversation's scope. Another route parks in the park block's store,
// each round under an id the client is given (the AI SDK approvalId is
// "apr_<id>_<call index>"), under the park block's scope.

// parkRoute is a route's park settings, provisioned.
type parkRoute struct {
	store conversation.ParkStore
	// scope is the placeholder of whose waiting calls (routes without a
	// conversation block; a conversation route uses its conversation's).
	scope string
	ttl   time.Duration
	conv  bool
	// asks are the questions of servers the route's client can show;
	// approvals says it can answer a tool marked approve; ids says the
	// client names a waiting call by an id the gateway gives it.
	asks      toolserver.AskMode
	approvals bool
	ids       bool
	// route names the route in its records: a record is answered on the
	// route that parked it.
	route   string
	poolKey string // a Redis client's key in redisStores; "" for files
}

// recordVersion is the version of parkedRecord's layout.
const recordVersion = 1

// parkedRecord is what a parked round keeps in the store.
type parkedRecord struct {
	V     int    `json:"v"`
	Route string `json:"route"`
	// ID is the park id (aisdk approval ids are made of it).
	ID string `json:"id"`
	// Body is the round's upstream request: the resumed round's next
	// request is it with the round's messages appended.
	Body  json.RawMessage     `json:"body"`
	Round pipeline.RoundState `json:"round"`
}

// provisionPark sets up where the route keeps waiting calls; nothing
// without a tools block.
func (h *Handler) provisionPark() error {
	ts := h.settings.ToolServers
	if ts == nil {
		return nil
	}
	if h.conv != nil {
		for _, a := range ts.Agents {
			h.conv.agents = append(h.conv.agents, agentInfo{ID: a.ID, Name: a.DisplayName(), AvatarURL: a.Avatar})
		}
		for _, m := range ts.MCP {
			h.conv.search = h.conv.search || len(m.Search) > 0
			h.conv.images = h.conv.images || len(m.Images) > 0
		}
	}
	p := &parkRoute{ttl: ts.ParkTTL()}
	sum := sha256.New()
	fmt.Fprintf(sum, "%s\x00", h.proto.Name)
	for _, m := range ts.MCP {
		fmt.Fprintf(sum, "%s\x00", m.Name)
	}
	switch {
	case h.conv != nil:
		// skillpet with a conversation: approvals and choices through
		// /tool-response, forms through /stream.
		p.conv = true
		p.asks, p.approvals = toolserver.AskChoice|toolserver.AskForm, true
		p.store, _ = h.conv.store.(conversation.ParkStore)
		fmt.Fprintf(sum, "%s\x00", h.conv.cs.AgentID)
	case h.proto.Name == "aisdk":
		// useChat answers yes/no approvals (tool-approval-request).
		p.approvals, p.ids = true, true
	case h.proto.Name == "responses" && h.settings.RequestFormat == "responses":
		// A Responses client answers an mcp_approval_request with an
		// mcp_approval_response, as for OpenAI's hosted MCP tool.
		p.approvals, p.ids = true, true
	}
	p.route = hex.EncodeToString(sum.Sum(nil)[:12])
	if !p.conv && p.approvals {
		if err := p.openStore(ts.Park); err != nil {
			return err
		}
	}
	if p.store == nil {
		p.asks, p.approvals = 0, false
	}
	h.parks = p
	return nil
}

// openStore opens the park block's store for a route without
// conversations.
func (p *parkRoute) openStore(cfg *config.Park) error {
	if cfg == nil {
		cfg = &config.Park{}
	}
	p.scope = cfg.Scope
	if p.scope == "" {
		p.scope = config.DefaultScope
	}
	if cfg.Store == config.StoreRedis {
		u := caddy.NewReplacer().ReplaceKnown(cfg.RedisURL, "")
		prefix := cfg.KeyPrefix
		if prefix == "" {
			prefix = config.DefaultKeyPrefix
		}
		key := strings.Join([]string{u, prefix, "0", config.DefaultLease.String()}, "\x00")
		v, _, err := redisStores.LoadOrNew(key, func() (caddy.Destructor, error) {
			s, err := redisstore.Open(u, prefix, 0, config.DefaultLease)
			return pooledRedis{s}, err
		})
		if err != nil {
			return err
		}
		p.store, p.poolKey = v.(pooledRedis).Store, key
		return nil
	}
	dir := cfg.Dir
	if dir == "" {
		dir = filepath.Join(caddy.AppDataDir(), config.DefaultParkDir)
	}
	s, err := filestore.New(dir, 0)
	if err != nil {
		return err
	}
	p.store = s
	return nil
}

// close lets go of the park block's Redis client.
func (p *parkRoute) close() error {
	if p == nil || p.poolKey == "" {
		return nil
	}
	_, err := redisStores.Delete(p.poolKey)
	return err
}

// parkScope returns the request's park scope value (routes without a
// conversation block): hashed into the key, never stored or logged.
func (p *parkRoute) parkScope(r *http.Request) string {
	repl, _ := r.Context().Value(caddy.ReplacerCtxKey).(*caddy.Replacer)
	if repl == nil {
		repl = caddy.NewReplacer()
	}
	return repl.ReplaceAll(p.scope, "")
}

// parking is what a stream needs to park a round: its key, and the id its
// approvals carry.
type parking struct {
	p   *parkRoute
	key conversation.ParkKey
	id  string
}

// newParking readies a stream to park its rounds: a conversation turn
// under its conversation's key, another under a new id in the request's
// scope. nil when the route parks nothing.
func (h *Handler) newParking(r *http.Request, t *turn) *parking {
	p := h.parks
	if p == nil || p.store == nil || !p.approvals && p.asks == 0 {
		return nil
	}
	if p.conv {
		if t == nil {
			return nil
		}
		return &parking{p: p, key: conversation.ConversationPark(t.key), id: newID("")}
	}
	id := newID("")
	return &parking{p: p, key: conversation.NewParkKey(p.parkScope(r), id), id: id}
}

// approvalID is the id an AI SDK client answers call index of the
// parked round with: "apr_<park id>_<index>".
func (pk *parking) approvalID(index int) string {
	return "apr_" + pk.id + "_" + strconv.Itoa(index)
}

// parseApprovalID splits an approval id into its park id and call index.
func parseApprovalID(s string) (id string, index int, ok bool) {
	rest, ok := strings.CutPrefix(s, "apr_")
	if !ok {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '_')
	if i <= 0 {
		return "", 0, false
	}
	n, err := strconv.Atoi(rest[i+1:])
	if err != nil || n < 0 {
		return "", 0, false
	}
	return rest[:i], n, true
}

// shown readies a park for the client: the approval id its client answers
// with, where the client names calls so.
func (pk *parking) shown(park *agent.Park, index int) {
	if pk.p.ids {
		park.Await.ID = pk.approvalID(index)
	}
}

// save stores the parked round. body is the round's upstream request.
func (pk *parking) save(body []byte, st pipeline.RoundState) error {
	rec := parkedRecord{V: recordVersion, Route: pk.p.route, ID: pk.id, Body: body, Round: st}
	data, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	return pk.p.store.Park(ctx, pk.key, data, time.Now().Add(pk.p.ttl))
}

// decodeRecord reads a parked round's record; a record of another route
// or layout is not this route's to resume.
func (p *parkRoute) decodeRecord(data []byte) (*parkedRecord, error) {
	var rec parkedRecord
	if err := json.Unmarshal(data, &rec); err != nil || rec.V != recordVersion || rec.Route != p.route || !json.Valid(rec.Body) {
		return nil, conversation.ErrNotParked
	}
	return &rec, nil
}

// waitingCall returns the round's call id that waits for the user, nil
// when there is none.
func (rec *parkedRecord) waitingCall(id string) *pipeline.CallState {
	for i := range rec.Round.Calls {
		if c := &rec.Round.Calls[i]; c.ID == id && c.Park != nil && c.Result == nil {
			return c
		}
	}
	return nil
}

// parkErrorAnswer is the answer to a request whose waiting call cannot be
// resumed: status, code and message, for the client's error body.
func parkErrorAnswer(err error) (int, string, string) {
	switch {
	case errors.Is(err, conversation.ErrAnswered):
		return http.StatusConflict, "ALREADY_ANSWERED", "this tool call was already answered; an answer is taken once"
	case errors.Is(err, conversation.ErrExpired):
		return http.StatusGone, "EXPIRED", "this tool call waited too long for an answer (the route's park ttl); ask again"
	case errors.Is(err, conversation.ErrNotParked):
		return http.StatusNotFound, "NOT_WAITING", "no tool call waits for this answer here (it never asked, it belongs to another user, or it is long gone)"
	}
	return http.StatusServiceUnavailable, "STORE_UNAVAILABLE", msgStoreDown
}

// errHeldElsewhere is a waiting call held open by another process.
const (
	codeHeldElsewhere = "HELD_ELSEWHERE"
	msgHeldElsewhere  = "this tool call is held open by its tool server in another Caddy process (or one since restarted): " +
		"an MCP server of revision 2025-11-25 asks while it holds the call, so only the process that holds it can take the answer"
)

// awaitDenied is the result of a call that needs the user's approval on a
// route whose client cannot give it.
func awaitDenied(label string) agent.Result {
	return agent.ErrorResult("This tool needs the user's approval before it runs (" + label +
		"), and this route cannot ask for it: it was not run. Answer without it.")
}
