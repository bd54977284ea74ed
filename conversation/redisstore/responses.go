package redisstore

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmstream/llmstream/conversation"
)

// Stored responses (CONTRACT.md §14) are strings,
// <prefix>resp:{<scope>}:<id>, written with one SET (PX ttl when there is
// one): Redis expires them, and every instance sharing the server reads
// them. The store's secrets are <prefix>secret:<name>, set once with SET
// NX, so that every instance uses the first one written.

func (s *Store) responseKey(k conversation.ResponseKey) string {
	return s.prefix + "resp:{" + k.Scope + "}:" + k.ID
}

// PutResponse sets the response's key.
func (s *Store) PutResponse(ctx context.Context, k conversation.ResponseKey, data []byte, ttl time.Duration) error {
	return wrap(s.client.Set(ctx, s.responseKey(k), data, max(ttl, 0)).Err())
}

// GetResponse gets the response's key.
func (s *Store) GetResponse(ctx context.Context, k conversation.ResponseKey) ([]byte, error) {
	b, err := s.client.Get(ctx, s.responseKey(k)).Bytes()
	if errors.Is(err, redis.Nil) {
		return nil, conversation.ErrNotFound
	}
	return b, wrap(err)
}

// DeleteResponse deletes the response's key.
func (s *Store) DeleteResponse(ctx context.Context, k conversation.ResponseKey) (bool, error) {
	n, err := s.client.Del(ctx, s.responseKey(k)).Result()
	return n > 0, wrap(err)
}

// Secret returns the shared secret, setting it if no instance did.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	key := s.prefix + "secret:" + name
	secret := make([]byte, conversation.SecretSize)
	_, _ = rand.Read(secret)
	if err := s.client.SetArgs(ctx, key, secret, redis.SetArgs{Mode: "NX"}).Err(); err != nil && !errors.Is(err, redis.Nil) {
		return nil, wrap(err)
	}
	b, err := s.client.Get(ctx, key).Bytes()
	if err != nil {
		return nil, wrap(err)
	}
	if len(b) != conversation.SecretSize {
		return nil, wrap(errors.New("secret " + name + " is not " + "32 bytes"))
	}
	return b, nil
}
