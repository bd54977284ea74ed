package conversation

import (
	"context"
	"errors"
	"time"
)

// Store keeps conversations: the embedded file store (filestore) and Redis
// (redisstore) implement it. Every method is safe for concurrent use,
// from any number of processes sharing the store when the implementation
// says so.
//
// A conversation is written only under its Lock, which one holder at a
// time has: two streams on one conversation never interleave, and the
// second is refused (ErrBusy) rather than queued. Reading needs no lock and
// sees the records of every Append that returned, in order.
type Store interface {
	// Load returns the conversation's records, oldest first; none for a
	// conversation never written, cleared or expired.
	Load(ctx context.Context, key Key) ([]Record, error)
	// Lock takes the conversation's lock, or fails with ErrBusy while
	// another holder has it.
	Lock(ctx context.Context, key Key) (Lock, error)

	// PutResponse keeps a stored Responses API response (CONTRACT.md §14)
	// under key for ttl (0: until deleted), replacing one kept there. A
	// response is written once, when it ends, so it needs no lock; the
	// write is all or nothing.
	PutResponse(ctx context.Context, key ResponseKey, data []byte, ttl time.Duration) error
	// GetResponse returns what PutResponse kept, or ErrNotFound (never
	// kept, deleted, or past its ttl).
	GetResponse(ctx context.Context, key ResponseKey) ([]byte, error)
	// DeleteResponse deletes a kept response and reports whether there was
	// one.
	DeleteResponse(ctx context.Context, key ResponseKey) (bool, error)
	// Secret returns the store's secret called name: 32 random bytes made
	// the first time any user of the store asks, then the same bytes for
	// every process sharing the store (the compaction key, which every
	// Caddy sharing a Redis store must agree on).
	Secret(ctx context.Context, name string) ([]byte, error)
}

// ResponseKey names one stored response. Both parts are hex SHA-256
// digests, as in Key: the scope (whose responses; the same digest as
// Key.Scope) and the response id, which a client chooses when it asks.
type ResponseKey struct {
	Scope string
	ID    string
}

// NewResponseKey returns the key of response id of scope.
func NewResponseKey(scope, id string) ResponseKey {
	return ResponseKey{Scope: digest("llmstream scope", scope), ID: digest("llmstream response", id)}
}

// ErrNotFound is the error of GetResponse for a response the store does
// not have.
var ErrNotFound = errors.New("conversation: no such stored response")

// SecretSize is the size of a store's secrets.
const SecretSize = 32

// Lock is the right to write one conversation, until Release.
type Lock interface {
	// Append adds recs at the end of the conversation, all or none. It
	// fails with ErrLockLost if the lock expired meanwhile (another holder
	// may have it now), writing nothing.
	Append(ctx context.Context, recs ...Record) error
	// Clear deletes the conversation; ErrLockLost as for Append.
	Clear(ctx context.Context) error
	// Replace replaces the record whose ID is rec's (an image block the
	// user made a choice in, specs/002 §3.7), or fails with ErrNoRecord;
	// ErrLockLost as for Append.
	Replace(ctx context.Context, rec Record) error
	// Release gives the lock back. It is safe to call more than once.
	Release(ctx context.Context) error
}

// ErrBusy is the error of Store.Lock while another stream holds the
// conversation.
var ErrBusy = errors.New("conversation: another reply to this conversation is in progress")

// ErrNoRecord is the error of Lock.Replace for an id the conversation
// does not have.
var ErrNoRecord = errors.New("conversation: no record with that id")

// ErrLockLost is the error of a write whose lock expired: the store was
// unreachable longer than the lease, and another holder may write now.
var ErrLockLost = errors.New("conversation: the conversation's lock expired")
