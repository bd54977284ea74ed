// Package redisstore keeps conversations in Redis (or Valkey, which speaks
// the same protocol), for several Caddy instances that serve one set of
// conversations (CONTRACT.md §9: store redis <url>).
//
// A conversation is a list, <prefix>{<scope>:<conversation>}, one element
// per record, written only with RPUSH: an append is one command and is
// atomic, and no write reads the list first, so there is no
// read-modify-write race. The lock is a key beside it,
// <prefix>{<scope>:<conversation>}:lock, taken with SET NX PX (a lease
// with a random token), renewed while its holder streams, and released by
// a script that deletes it only if it still holds the token. Appends and
// clears run as scripts that check the token first (fencing): a holder
// whose lease expired (Redis was unreachable for longer than the lease,
// or its process stopped) can no longer write, whoever holds the lock now.
// The braces make both keys one hash slot, as scripts need.
//
// With a TTL every append sets the list's expiry again: a conversation
// lives TTL after its last turn.
package redisstore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmstream/llmstream/conversation"
)

// DefaultLease is the lock's lease when none is given: renewed every
// third of it, so a holder keeps it through two failed renewals.
const DefaultLease = 30 * time.Second

// Store keeps conversations in Redis.
type Store struct {
	client redis.UniversalClient
	owned  bool // Open made the client: Close closes it
	prefix string
	ttl    time.Duration
	lease  time.Duration
}

// New returns a Store on client whose keys start with prefix.
// Conversations expire ttl after their last append (0: never); a lock not
// renewed for lease is free again (0: DefaultLease).
func New(client redis.UniversalClient, prefix string, ttl, lease time.Duration) *Store {
	if lease <= 0 {
		lease = DefaultLease
	}
	return &Store{client: client, prefix: prefix, ttl: ttl, lease: lease}
}

// Open connects to the Redis at url (redis://[[user]:password@]host:port/db,
// rediss:// for TLS, unix:///path.sock) and returns a Store on it, as New.
// It does not dial: a Redis that is down fails the first request, not
// the configuration. A dial is retried once, a command not at all past
// go-redis's own reconnect, so that a store that is down is a prompt
// error rather than a stalled request.
func Open(url, prefix string, ttl, lease time.Duration) (*Store, error) {
	opt, err := redis.ParseURL(url)
	if err != nil {
		// ParseURL's errors quote no password, but say nothing of the URL
		// either: the caller names the setting.
		return nil, fmt.Errorf("redis url: %w", err)
	}
	opt.MaxRetries = 1
	opt.DialerRetries = 2
	s := New(redis.NewClient(opt), prefix, ttl, lease)
	s.owned = true
	return s, nil
}

// Close closes the client if Open made it.
func (s *Store) Close() error {
	if s.owned {
		return s.client.Close()
	}
	return nil
}

func (s *Store) listKey(k conversation.Key) string {
	return s.prefix + "{" + k.Scope + ":" + k.Conversation + "}"
}

func (s *Store) lockKey(k conversation.Key) string { return s.listKey(k) + ":lock" }

// wrap names the store in an error that is not the caller's.
func wrap(err error) error {
	if err == nil || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("conversation store (redis): %w", err)
}

// Load returns the conversation's records. An element that does not
// decode (not written by llmstream) is skipped.
func (s *Store) Load(ctx context.Context, k conversation.Key) ([]conversation.Record, error) {
	elems, err := s.client.LRange(ctx, s.listKey(k), 0, -1).Result()
	if err != nil {
		return nil, wrap(err)
	}
	recs := make([]conversation.Record, 0, len(elems))
	for _, e := range elems {
		if r, err := conversation.DecodeRecord([]byte(e)); err == nil {
			recs = append(recs, r)
		}
	}
	return recs, nil
}

// The scripts. KEYS[1] is the list, KEYS[2] the lock; ARGV[1] the token.
var (
	appendScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[1], unpack(ARGV, 3))
if tonumber(ARGV[2]) > 0 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 1`)
	clearScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
return 1`)
	// replaceScript finds the record by the start of its JSON
	// ({"id":"<id>", AppendRecord writes the id first) and sets it.
	replaceScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
local prefix = ARGV[2]
local elems = redis.call('LRANGE', KEYS[1], 0, -1)
for i, e in ipairs(elems) do
	if string.sub(e, 1, #prefix) == prefix then
		redis.call('LSET', KEYS[1], i - 1, ARGV[3])
		return 1
	end
end
return 2`)
	renewScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return 0 end
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return 1`)
	releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end
return 1`)
)

// Lock takes the conversation's lock: SET NX PX with a random token.
func (s *Store) Lock(ctx context.Context, k conversation.Key) (conversation.Lock, error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token := hex.EncodeToString(b[:])
	err := s.client.SetArgs(ctx, s.lockKey(k), token, redis.SetArgs{Mode: "NX", TTL: s.lease}).Err()
	if errors.Is(err, redis.Nil) {
		return nil, conversation.ErrBusy
	}
	if err != nil {
		return nil, wrap(err)
	}
	l := &lock{s: s, keys: []string{s.listKey(k), s.lockKey(k)}, token: token, stop: make(chan struct{}), done: make(chan struct{})}
	go l.renew()
	return l, nil
}

// lock is a held lease.
type lock struct {
	s     *Store
	keys  []string // the list and the lock
	token string
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
}

// renew extends the lease every third of it until Release. A renewal that
// finds the token gone stops: the lease was lost, and the fenced writes
// will say so.
func (l *lock) renew() {
	defer close(l.done)
	t := time.NewTicker(l.s.lease / 3)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
			ctx, cancel := context.WithTimeout(context.Background(), l.s.lease/3)
			n, err := renewScript.Run(ctx, l.s.client, l.keys, l.token, l.s.lease.Milliseconds()).Int()
			cancel()
			if err == nil && n == 0 {
				return
			}
		}
	}
}

var errReleased = errors.New("conversation store (redis): the lock was released")

func (l *lock) released() bool {
	select {
	case <-l.stop:
		return true
	default:
		return false
	}
}

// Append pushes recs in one fenced RPUSH.
func (l *lock) Append(ctx context.Context, recs ...conversation.Record) error {
	if l.released() {
		return errReleased
	}
	args := make([]any, 0, 2+len(recs))
	args = append(args, l.token, l.s.ttl.Milliseconds())
	for _, r := range recs {
		b, err := conversation.AppendRecord(nil, r)
		if err != nil {
			return err
		}
		args = append(args, b)
	}
	n, err := appendScript.Run(ctx, l.s.client, l.keys, args...).Int()
	if err != nil {
		return wrap(err)
	}
	if n == 0 {
		return conversation.ErrLockLost
	}
	return nil
}

// Replace sets the record of rec's id, fenced.
func (l *lock) Replace(ctx context.Context, rec conversation.Record) error {
	if l.released() {
		return errReleased
	}
	b, err := conversation.AppendRecord(nil, rec)
	if err != nil {
		return err
	}
	prefix, err := conversation.AppendRecord(nil, conversation.Record{ID: rec.ID})
	if err != nil {
		return err
	}
	// {"id":"<id>", with the comma that ends the id.
	prefix = prefix[:bytes.IndexByte(prefix, ',')+1]
	n, err := replaceScript.Run(ctx, l.s.client, l.keys, l.token, prefix, b).Int()
	switch {
	case err != nil:
		return wrap(err)
	case n == 0:
		return conversation.ErrLockLost
	case n == 2:
		return conversation.ErrNoRecord
	}
	return nil
}

// Clear deletes the list, fenced.
func (l *lock) Clear(ctx context.Context) error {
	if l.released() {
		return errReleased
	}
	n, err := clearScript.Run(ctx, l.s.client, l.keys, l.token).Int()
	if err != nil {
		return wrap(err)
	}
	if n == 0 {
		return conversation.ErrLockLost
	}
	return nil
}

// Release stops the renewals and deletes the lock if it is still ours.
func (l *lock) Release(ctx context.Context) error {
	var err error
	l.once.Do(func() {
		close(l.stop)
		<-l.done
		err = wrap(releaseScript.Run(ctx, l.s.client, l.keys, l.token).Err())
	})
	return err
}

var _ conversation.Store = (*Store)(nil)
