package conversation

import (
	"context"
	"errors"
	"time"
)

// Parked rounds (CONTRACT.md §13): a round of the agent loop whose calls
// wait for the user (an approval, a choice, a form) is kept until the
// user's answer resumes it, in a later request that may reach another
// Caddy instance sharing the store, or the same one after a restart. The
// stores that keep conversations keep parked rounds too, scoped the same
// way: a parked round is keyed by the digest of its scope, so a request
// of another scope cannot even find it.
//
// A parked round can be taken once: Take marks it answered in the same
// atomic step that returns it, so that two answers racing on two
// instances resume it once. It is kept, answered or not, until ParkGrace
// after it expires, so that a late answer is told "answered" or
// "expired" rather than "unknown"; after that it is gone.

// ParkGrace is how long a parked round is kept after it expires (or was
// answered before that), to answer late requests clearly.
const ParkGrace = 24 * time.Hour

// ParkKey names a parked round in a store.
type ParkKey struct {
	// Scope is the digest of the scope value, as in Key.
	Scope string
	// Name is the round's digest: a conversation's (its last turn's
	// parked round, ConversationPark) or an id's (NewParkKey).
	Name string
}

// ConversationPark returns the key of the parked round of conversation k:
// a conversation has at most one, its last turn's.
func ConversationPark(k Key) ParkKey {
	return ParkKey{Scope: k.Scope, Name: "c" + digest("llmstream parked conversation", k.Conversation)}
}

// NewParkKey returns the key of the parked round id, of scope: a route
// without conversations names its parked rounds by an id it gave the
// client (an AI SDK approvalId, a Responses approval request id).
func NewParkKey(scope, id string) ParkKey {
	return ParkKey{Scope: digest("llmstream scope", scope), Name: "p" + digest("llmstream parked", id)}
}

// String returns "<scope>/<name>", for tests.
func (k ParkKey) String() string { return k.Scope + "/" + k.Name }

// ParkStore keeps parked rounds. The file store and the Redis store
// implement it beside Store.
type ParkStore interface {
	// Park keeps data under k until expires, replacing what k held.
	Park(ctx context.Context, k ParkKey, data []byte, expires time.Time) error
	// Peek returns what k holds without taking it, or the error Take
	// would give.
	Peek(ctx context.Context, k ParkKey) ([]byte, error)
	// Take returns what k holds and marks it answered, atomically. It
	// fails with ErrAnswered once taken, ErrExpired after it expired, and
	// ErrNotParked for a key that holds nothing (never parked, dropped,
	// or gone ParkGrace after it expired).
	Take(ctx context.Context, k ParkKey) ([]byte, error)
	// Drop forgets k: a new turn of its conversation supersedes it.
	Drop(ctx context.Context, k ParkKey) error
}

// The errors of ParkStore.
var (
	ErrNotParked = errors.New("conversation: no call waits for an answer here")
	ErrAnswered  = errors.New("conversation: the waiting call was already answered")
	ErrExpired   = errors.New("conversation: the waiting call expired")
)
