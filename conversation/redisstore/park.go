package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmstream/llmstream/conversation"
)

// Parked rounds (conversation.ParkStore) are hashes,
// <prefix>parked:{<scope>:<name>}, with the round (d), when it expires in
// Unix milliseconds (e) and whether it was answered (a). Redis expires the
// key ParkGrace after the round does. Take is one script that reads the
// hash, checks it against Redis's own clock (TIME, the same for every
// instance) and marks it answered: two instances answering at once resume
// the round once.

func (s *Store) parkKey(k conversation.ParkKey) string {
	return s.prefix + "parked:{" + k.Scope + ":" + k.Name + "}"
}

// The parked rounds' scripts. KEYS[1] is the hash. They return
// {state, data}: 0 nothing parked, 1 answered, 2 expired, 3 parked.
var (
	peekScript = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'a', 'e', 'd')
if not h[2] then return {0, ''} end
if h[1] then return {1, ''} end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if now > tonumber(h[2]) then return {2, ''} end
if ARGV[1] == 'take' then
	redis.call('HSET', KEYS[1], 'a', '1')
	redis.call('HDEL', KEYS[1], 'd')
end
return {3, h[3]}`)
)

// Park stores the round, expiring ParkGrace after expires.
func (s *Store) Park(ctx context.Context, k conversation.ParkKey, data []byte, expires time.Time) error {
	key := s.parkKey(k)
	_, err := s.client.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Del(ctx, key)
		p.HSet(ctx, key, "e", expires.UnixMilli(), "d", data)
		p.PExpireAt(ctx, key, expires.Add(conversation.ParkGrace))
		return nil
	})
	return wrap(err)
}

// Peek returns the round.
func (s *Store) Peek(ctx context.Context, k conversation.ParkKey) ([]byte, error) {
	return s.peekOrTake(ctx, k, "peek")
}

// Take returns the round and marks it answered, in one script.
func (s *Store) Take(ctx context.Context, k conversation.ParkKey) ([]byte, error) {
	return s.peekOrTake(ctx, k, "take")
}

func (s *Store) peekOrTake(ctx context.Context, k conversation.ParkKey, op string) ([]byte, error) {
	v, err := peekScript.Run(ctx, s.client, []string{s.parkKey(k)}, op).Slice()
	if err != nil {
		return nil, wrap(err)
	}
	if len(v) != 2 {
		return nil, wrap(errors.New("unexpected script reply"))
	}
	state, _ := v[0].(int64)
	switch state {
	case 1:
		return nil, conversation.ErrAnswered
	case 2:
		return nil, conversation.ErrExpired
	case 3:
		data, _ := v[1].(string)
		return []byte(data), nil
	}
	return nil, conversation.ErrNotParked
}

// Drop deletes the round.
func (s *Store) Drop(ctx context.Context, k conversation.ParkKey) error {
	return wrap(s.client.Del(ctx, s.parkKey(k)).Err())
}

var _ conversation.ParkStore = (*Store)(nil)
