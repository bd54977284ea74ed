package redisstore

import (
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/conversation/storetest"
)

var ctx = context.Background()

var prefixes atomic.Int64

// open returns a Store on the test's Redis with keys of their own.
func open(t *testing.T, url string, ttl, lease time.Duration) (*Store, *redis.Client) {
	t.Helper()
	opt, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opt)
	t.Cleanup(func() { _ = c.Close() })
	return New(c, "test"+strconv.FormatInt(prefixes.Add(1), 10)+":", ttl, lease), c
}

func TestConformance(t *testing.T) {
	url := storetest.StartRedis(t)
	storetest.Run(t, func(t *testing.T) conversation.Store {
		s, _ := open(t, url, 0, 0)
		return s
	})
}

// TestFencing: a holder whose lease is gone cannot write, whoever holds
// the lock now.
func TestFencing(t *testing.T) {
	s, c := open(t, storetest.StartRedis(t), 0, 0)
	k := conversation.NewKey("s", "g", "p")
	l1, err := s.Lock(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	defer l1.Release(ctx)
	c.Del(ctx, s.lockKey(k)) // as if the lease ran out
	l2, err := s.Lock(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := l1.Append(ctx, storetest.Rec("stale")); !errors.Is(err, conversation.ErrLockLost) {
		t.Fatalf("the old holder's Append: %v, want ErrLockLost", err)
	}
	if err := l1.Clear(ctx); !errors.Is(err, conversation.ErrLockLost) {
		t.Fatalf("the old holder's Clear: %v, want ErrLockLost", err)
	}
	if err := l2.Append(ctx, storetest.Rec("new")); err != nil {
		t.Fatal(err)
	}
	// The old holder's Release leaves the new holder's lock alone.
	_ = l1.Release(ctx)
	if _, err := s.Lock(ctx, k); !errors.Is(err, conversation.ErrBusy) {
		t.Fatalf("after the old holder's Release: %v, want ErrBusy", err)
	}
	got, _ := s.Load(ctx, k)
	if err := storetest.Equal(got, []conversation.Record{storetest.Rec("new")}); err != nil {
		t.Fatal(err)
	}
	_ = l2.Release(ctx)
}

// TestLeaseRenewedAndExpires: a holder keeps its lock past the lease
// while it lives; a holder that stops (its process killed) loses it
// after one lease.
func TestLeaseRenewedAndExpires(t *testing.T) {
	const lease = 600 * time.Millisecond
	s, _ := open(t, storetest.StartRedis(t), 0, lease)
	k := conversation.NewKey("s", "g", "p")
	lk, err := s.Lock(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	l := lk.(*lock)
	time.Sleep(3 * lease)
	if _, err := s.Lock(ctx, k); !errors.Is(err, conversation.ErrBusy) {
		t.Fatalf("after three leases of renewals: %v, want ErrBusy", err)
	}
	if err := l.Append(ctx, storetest.Rec("1")); err != nil {
		t.Fatal(err)
	}
	// The holder dies: no more renewals, no release.
	close(l.stop)
	<-l.done
	deadline := time.Now().Add(10 * lease)
	for {
		l2, err := s.Lock(ctx, k)
		if err == nil {
			_ = l2.Release(ctx)
			break
		}
		if !errors.Is(err, conversation.ErrBusy) || time.Now().After(deadline) {
			t.Fatalf("the dead holder's lock: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func TestTTL(t *testing.T) {
	s, c := open(t, storetest.StartRedis(t), time.Hour, 0)
	k := conversation.NewKey("s", "g", "p")
	l, _ := s.Lock(ctx, k)
	defer l.Release(ctx)
	if err := l.Append(ctx, storetest.Rec("1")); err != nil {
		t.Fatal(err)
	}
	ttl := c.PTTL(ctx, s.listKey(k)).Val()
	if ttl <= 59*time.Minute || ttl > time.Hour {
		t.Fatalf("the list's TTL is %v, want about an hour", ttl)
	}
	s0, c0 := open(t, storetest.StartRedis(t), 0, 0)
	l0, _ := s0.Lock(ctx, k)
	defer l0.Release(ctx)
	_ = l0.Append(ctx, storetest.Rec("1"))
	if ttl := c0.PTTL(ctx, s0.listKey(k)).Val(); ttl != -1 {
		t.Fatalf("without a TTL the list expires in %v", ttl)
	}
}

// TestDown: a Redis that does not answer is an error of its own (not
// ErrBusy), before anything is written, and names the store.
func TestDown(t *testing.T) {
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := ln.Addr().String()
	_ = ln.Close()
	s, err := Open("redis://"+addr+"/0", "x:", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	k := conversation.NewKey("s", "g", "p")
	_, err = s.Load(ctx, k)
	if err == nil || !strings.Contains(err.Error(), "conversation store (redis)") {
		t.Fatalf("Load: %v", err)
	}
	if _, err := s.Lock(ctx, k); err == nil || errors.Is(err, conversation.ErrBusy) {
		t.Fatalf("Lock: %v", err)
	}
}

func TestOpenRefusesABadURL(t *testing.T) {
	if _, err := Open("http://secret@host", "x:", 0, 0); err == nil || strings.Contains(err.Error(), "secret") {
		t.Fatalf("Open of a bad URL: %v", err)
	}
}

func TestParkConformance(t *testing.T) {
	url := storetest.StartRedis(t)
	storetest.RunPark(t, func(t *testing.T) conversation.ParkStore {
		s, _ := open(t, url, 0, 0)
		return s
	})
}

// TestParkedExpiresInRedis: Redis itself forgets a parked round
// ParkGrace after it expires.
func TestParkedExpiresInRedis(t *testing.T) {
	url := storetest.StartRedis(t)
	s, c := open(t, url, 0, 0)
	k := conversation.NewParkKey("s", "apr_1")
	exp := time.Now().Add(time.Minute)
	if err := s.Park(ctx, k, []byte("x"), exp); err != nil {
		t.Fatal(err)
	}
	ttl, err := c.PTTL(ctx, s.parkKey(k)).Result()
	if err != nil || ttl < conversation.ParkGrace || ttl > conversation.ParkGrace+2*time.Minute {
		t.Fatalf("PTTL %v, %v; want about %v", ttl, err, conversation.ParkGrace+time.Minute)
	}
}

func BenchmarkPark(b *testing.B) {
	url := storetest.StartRedis(b)
	opt, _ := redis.ParseURL(url)
	c := redis.NewClient(opt)
	defer c.Close()
	storetest.BenchmarkPark(b, New(c, "bench:", 0, 0))
}
