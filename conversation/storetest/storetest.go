// Package storetest checks conversation.Store implementations against the
// contract the Caddy glue relies on (Run), and starts a throwaway
// redis-server for the tests that need one (StartRedis). It is imported by
// tests only.
package storetest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmstream/llmstream/conversation"
)

// Run runs the conformance tests on stores that open returns, a fresh,
// empty store each call.
func Run(t *testing.T, open func(t *testing.T) conversation.Store) {
	t.Run("empty", func(t *testing.T) { empty(t, open(t)) })
	t.Run("append and load", func(t *testing.T) { appendLoad(t, open(t)) })
	t.Run("one holder", func(t *testing.T) { oneHolder(t, open(t)) })
	t.Run("released", func(t *testing.T) { released(t, open(t)) })
	t.Run("clear", func(t *testing.T) { clear(t, open(t)) })
	t.Run("isolation", func(t *testing.T) { isolation(t, open(t)) })
	t.Run("concurrent conversations", func(t *testing.T) { concurrentConversations(t, open(t)) })
	t.Run("contention", func(t *testing.T) { contention(t, open(t)) })
	t.Run("responses", func(t *testing.T) { responses(t, open(t)) })
	t.Run("response ttl", func(t *testing.T) { responseTTL(t, open(t)) })
	t.Run("secret", func(t *testing.T) { secret(t, open(t), open) })
}

// responses checks the stored responses: kept whole under their key,
// replaced by a second put, one scope never reading or deleting
// another's, deleted once.
func responses(t *testing.T, s conversation.Store) {
	a, b := conversation.NewResponseKey("alice", "resp_1"), conversation.NewResponseKey("bob", "resp_1")
	if _, err := s.GetResponse(ctx, a); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("a new store: %v, want ErrNotFound", err)
	}
	data := []byte(`{"id":"resp_1","text":"é\n\u0000<&>"}` + "\x00\xff")
	if err := s.PutResponse(ctx, a, data, 0); err != nil {
		t.Fatal(err)
	}
	if got, err := s.GetResponse(ctx, a); err != nil || string(got) != string(data) {
		t.Fatalf("Get: %q, %v", got, err)
	}
	if _, err := s.GetResponse(ctx, b); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("another scope read it: %v", err)
	}
	if ok, err := s.DeleteResponse(ctx, b); ok || err != nil {
		t.Fatalf("another scope deleted it: %v %v", ok, err)
	}
	if err := s.PutResponse(ctx, a, []byte("v2"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.GetResponse(ctx, a); string(got) != "v2" {
		t.Fatalf("after a second put: %q", got)
	}
	if ok, err := s.DeleteResponse(ctx, a); !ok || err != nil {
		t.Fatalf("Delete: %v %v", ok, err)
	}
	if ok, _ := s.DeleteResponse(ctx, a); ok {
		t.Fatal("a second Delete found it")
	}
	if _, err := s.GetResponse(ctx, a); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("after Delete: %v", err)
	}
	// Many responses, concurrently, each under its own key.
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			k := conversation.NewResponseKey("alice", fmt.Sprintf("resp_c%d", i))
			if err := s.PutResponse(ctx, k, []byte(strconv.Itoa(i)), 0); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	for i := range 30 {
		got, err := s.GetResponse(ctx, conversation.NewResponseKey("alice", fmt.Sprintf("resp_c%d", i)))
		if err != nil || string(got) != strconv.Itoa(i) {
			t.Errorf("response %d: %q %v", i, got, err)
		}
	}
}

// responseTTL checks that a response is gone once its ttl passed (the
// wait is ten times the ttl: it only has to have passed).
func responseTTL(t *testing.T, s conversation.Store) {
	k := conversation.NewResponseKey("alice", "resp_ttl")
	if err := s.PutResponse(ctx, k, []byte("x"), 5*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if _, err := s.GetResponse(ctx, k); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("after its ttl: %v, want ErrNotFound", err)
	}
}

// secret checks a store's secrets: 32 bytes, the same on every call and
// for every user of the same store, different per name.
func secret(t *testing.T, s conversation.Store, open func(t *testing.T) conversation.Store) {
	a, err := s.Secret(ctx, "compaction")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := s.Secret(ctx, "compaction")
	other, _ := s.Secret(ctx, "other")
	if len(a) != conversation.SecretSize || string(a) != string(again) || string(a) == string(other) {
		t.Fatalf("secrets %x %x %x", a, again, other)
	}
	var wg sync.WaitGroup
	got := make([][]byte, 8)
	for i := range got {
		wg.Go(func() { got[i], _ = s.Secret(ctx, "raced") })
	}
	wg.Wait()
	for _, g := range got {
		if len(g) != conversation.SecretSize || string(g) != string(got[0]) {
			t.Fatalf("racing callers got different secrets: %x", got)
		}
	}
}

var ctx = context.Background()

// Rec returns a record whose fields all depend on name.
func Rec(name string) conversation.Record {
	r := conversation.Record{ID: "id_" + name, Role: conversation.RoleUser, Content: "text of " + name + " \"é\"\n<&>", Time: int64(len(name))}
	if len(name)%2 == 0 {
		r.Upstream = json.RawMessage(`[{"type":"text","text":` + strconv.Quote(name) + `}]`)
	}
	return r
}

// Equal reports the first difference between two record lists.
func Equal(got, want []conversation.Record) error {
	if len(got) != len(want) {
		return fmt.Errorf("%d records, want %d", len(got), len(want))
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.ID != w.ID || g.Role != w.Role || g.Content != w.Content || string(g.Upstream) != string(w.Upstream) || g.Time != w.Time {
			return fmt.Errorf("record %d = %+v, want %+v", i, g, w)
		}
	}
	return nil
}

func mustLoad(t *testing.T, s conversation.Store, k conversation.Key) []conversation.Record {
	t.Helper()
	recs, err := s.Load(ctx, k)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return recs
}

func mustLock(t *testing.T, s conversation.Store, k conversation.Key) conversation.Lock {
	t.Helper()
	l, err := s.Lock(ctx, k)
	if err != nil {
		t.Fatalf("Lock: %v", err)
	}
	return l
}

func empty(t *testing.T, s conversation.Store) {
	if recs := mustLoad(t, s, conversation.NewKey("a", "g", "p")); len(recs) != 0 {
		t.Fatalf("a new store has %d records", len(recs))
	}
}

func appendLoad(t *testing.T, s conversation.Store) {
	k := conversation.NewKey("a", "g", "p")
	l := mustLock(t, s, k)
	defer l.Release(ctx)
	want := []conversation.Record{Rec("u1")}
	if err := l.Append(ctx, want...); err != nil {
		t.Fatal(err)
	}
	// A reply is one append of several records.
	more := []conversation.Record{Rec("a1"), Rec("t1"), Rec("t22")}
	more[0].Role, more[1].Role, more[2].Role = conversation.RoleAssistant, conversation.RoleTool, conversation.RoleTool
	if err := l.Append(ctx, more...); err != nil {
		t.Fatal(err)
	}
	want = append(want, more...)
	if err := Equal(mustLoad(t, s, k), want); err != nil {
		t.Fatal(err)
	}
}

func oneHolder(t *testing.T, s conversation.Store) {
	k := conversation.NewKey("a", "g", "p")
	l := mustLock(t, s, k)
	if _, err := s.Lock(ctx, k); !errors.Is(err, conversation.ErrBusy) {
		t.Fatalf("a second Lock: %v, want ErrBusy", err)
	}
	// Reading needs no lock.
	if err := l.Append(ctx, Rec("x")); err != nil {
		t.Fatal(err)
	}
	if n := len(mustLoad(t, s, k)); n != 1 {
		t.Fatalf("%d records", n)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	l2 := mustLock(t, s, k)
	_ = l2.Release(ctx)
}

func released(t *testing.T, s conversation.Store) {
	k := conversation.NewKey("a", "g", "p")
	l := mustLock(t, s, k)
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("a second Release: %v", err)
	}
	if err := l.Append(ctx, Rec("x")); err == nil {
		t.Fatal("Append after Release succeeded")
	}
	if err := l.Clear(ctx); err == nil {
		t.Fatal("Clear after Release succeeded")
	}
	if n := len(mustLoad(t, s, k)); n != 0 {
		t.Fatalf("%d records written after Release", n)
	}
}

func clear(t *testing.T, s conversation.Store) {
	k := conversation.NewKey("a", "g", "p")
	l := mustLock(t, s, k)
	defer l.Release(ctx)
	if err := l.Clear(ctx); err != nil {
		t.Fatalf("clearing nothing: %v", err)
	}
	if err := l.Append(ctx, Rec("1"), Rec("2")); err != nil {
		t.Fatal(err)
	}
	if err := l.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	if n := len(mustLoad(t, s, k)); n != 0 {
		t.Fatalf("%d records after Clear", n)
	}
	if err := l.Append(ctx, Rec("3")); err != nil {
		t.Fatal(err)
	}
	if err := Equal(mustLoad(t, s, k), []conversation.Record{Rec("3")}); err != nil {
		t.Fatal(err)
	}
}

func isolation(t *testing.T, s conversation.Store) {
	keys := []conversation.Key{
		conversation.NewKey("alice", "g", "p1"),
		conversation.NewKey("bob", "g", "p1"),
		conversation.NewKey("alice", "g", "p2"),
		conversation.NewKey("alice", "h", "p1"),
	}
	for i, k := range keys {
		l := mustLock(t, s, k)
		if err := l.Append(ctx, Rec("k"+strconv.Itoa(i))); err != nil {
			t.Fatal(err)
		}
		_ = l.Release(ctx)
	}
	l := mustLock(t, s, keys[0])
	if err := l.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	_ = l.Release(ctx)
	for i, k := range keys {
		var want []conversation.Record
		if i > 0 {
			want = []conversation.Record{Rec("k" + strconv.Itoa(i))}
		}
		if err := Equal(mustLoad(t, s, k), want); err != nil {
			t.Errorf("key %d: %v", i, err)
		}
	}
}

func concurrentConversations(t *testing.T, s conversation.Store) {
	const convs, appends = 40, 15
	var wg sync.WaitGroup
	for c := range convs {
		wg.Go(func() {
			k := conversation.NewKey("s", "g", strconv.Itoa(c))
			l, err := s.Lock(ctx, k)
			if err != nil {
				t.Error(err)
				return
			}
			defer l.Release(ctx)
			for a := range appends {
				if err := l.Append(ctx, Rec(fmt.Sprintf("c%d-%d", c, a))); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	for c := range convs {
		var want []conversation.Record
		for a := range appends {
			want = append(want, Rec(fmt.Sprintf("c%d-%d", c, a)))
		}
		if err := Equal(mustLoad(t, s, conversation.NewKey("s", "g", strconv.Itoa(c))), want); err != nil {
			t.Errorf("conversation %d: %v", c, err)
		}
	}
}

// contention has writers race for one conversation's lock: never two
// holders at once, and every append of every holder kept, in order.
func contention(t *testing.T, s conversation.Store) {
	const writers, rounds = 6, 15
	k := conversation.NewKey("s", "g", "busy")
	var holders atomic.Int32
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for r := 0; r < rounds; {
				l, err := s.Lock(ctx, k)
				if errors.Is(err, conversation.ErrBusy) {
					time.Sleep(time.Millisecond) // the holder's turn
					continue
				}
				if err != nil {
					t.Error(err)
					return
				}
				if n := holders.Add(1); n != 1 {
					t.Errorf("%d holders at once", n)
				}
				// A turn: the user's record, then the reply's two.
				err1 := l.Append(ctx, Rec(fmt.Sprintf("w%d-%d-u", w, r)))
				err2 := l.Append(ctx, Rec(fmt.Sprintf("w%d-%d-a", w, r)), Rec(fmt.Sprintf("w%d-%d-t", w, r)))
				holders.Add(-1)
				if err := errors.Join(err1, err2, l.Release(ctx)); err != nil {
					t.Error(err)
					return
				}
				r++
			}
		})
	}
	wg.Wait()
	recs := mustLoad(t, s, k)
	if len(recs) != writers*rounds*3 {
		t.Fatalf("%d records, want %d", len(recs), writers*rounds*3)
	}
	next := make([]int, writers)
	for i := 0; i < len(recs); i += 3 {
		var w, r int
		if _, err := fmt.Sscanf(recs[i].ID, "id_w%d-%d-u", &w, &r); err != nil {
			t.Fatalf("record %d is %q, not a turn's first", i, recs[i].ID)
		}
		if r != next[w] {
			t.Fatalf("writer %d: round %d after %d", w, r, next[w]-1)
		}
		next[w]++
		want := []conversation.Record{Rec(fmt.Sprintf("w%d-%d-u", w, r)), Rec(fmt.Sprintf("w%d-%d-a", w, r)), Rec(fmt.Sprintf("w%d-%d-t", w, r))}
		if err := Equal(recs[i:i+3], want); err != nil {
			t.Fatalf("turn at %d interleaved: %v", i, err)
		}
	}
}
