package conversation

import (
	"context"
	"errors"
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
}

// Lock is the right to write one conversation, until Release.
type Lock interface {
	// Append adds recs at the end of the conversation, all or none. It
	// fails with ErrLockLost if the lock expired meanwhile (another holder
	// may have it now), writing nothing.
	Append(ctx context.Context, recs ...Record) error
	// Clear deletes the conversation; ErrLockLost as for Append.
	Clear(ctx context.Context) error
	// Release gives the lock back. It is safe to call more than once.
	Release(ctx context.Context) error
}

// ErrBusy is the error of Store.Lock while another stream holds the
// conversation.
var ErrBusy = errors.New("conversation: another reply to this conversation is in progress")

// ErrLockLost is the error of a write whose lock expired: the store was
// unreachable longer than the lease, and another holder may write now.
var ErrLockLost = errors.New("conversation: the conversation's lock expired")
