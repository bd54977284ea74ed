package storetest

import (
	"errors"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/llmstream/llmstream/conversation"
)

// RunPark runs the conformance tests of parked rounds (CONTRACT.md §13,
// conversation.ParkStore) on stores that open returns, fresh and empty.
func RunPark(t *testing.T, open func(t *testing.T) conversation.ParkStore) {
	t.Run("park, peek, take once", func(t *testing.T) { parkTakeOnce(t, open(t)) })
	t.Run("expired", func(t *testing.T) { parkExpired(t, open(t)) })
	t.Run("scopes and names apart", func(t *testing.T) { parkIsolation(t, open(t)) })
	t.Run("replaced and dropped", func(t *testing.T) { parkReplaced(t, open(t)) })
	t.Run("racing answers", func(t *testing.T) { parkRace(t, open(t)) })
}

var parkKey = conversation.ConversationPark(conversation.NewKey("scope", "agent", "p1"))

func mustPark(t *testing.T, s conversation.ParkStore, k conversation.ParkKey, data string, expires time.Time) {
	t.Helper()
	if err := s.Park(ctx, k, []byte(data), expires); err != nil {
		t.Fatal(err)
	}
}

func wantParked(t *testing.T, got []byte, err error, want string) {
	t.Helper()
	if err != nil || string(got) != want {
		t.Fatalf("got %q, %v; want %q", got, err, want)
	}
}

func wantErr(t *testing.T, err, want error) {
	t.Helper()
	if !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}

// parkTakeOnce: a round is there until taken, and taken once.
func parkTakeOnce(t *testing.T, s conversation.ParkStore) {
	_, err := s.Peek(ctx, parkKey)
	wantErr(t, err, conversation.ErrNotParked)
	data := `{"round":1,"é":"\u0000<&>"}` + string([]byte{0, 0xff})
	mustPark(t, s, parkKey, data, time.Now().Add(time.Hour))
	got, err := s.Peek(ctx, parkKey)
	wantParked(t, got, err, data)
	got, err = s.Peek(ctx, parkKey) // peeking takes nothing
	wantParked(t, got, err, data)
	got, err = s.Take(ctx, parkKey)
	wantParked(t, got, err, data)
	_, err = s.Take(ctx, parkKey)
	wantErr(t, err, conversation.ErrAnswered)
	_, err = s.Peek(ctx, parkKey)
	wantErr(t, err, conversation.ErrAnswered)
}

// parkExpired: past its expiry a round is expired, not taken; long past
// it, it is gone.
func parkExpired(t *testing.T, s conversation.ParkStore) {
	mustPark(t, s, parkKey, "x", time.Now().Add(-time.Second))
	_, err := s.Take(ctx, parkKey)
	wantErr(t, err, conversation.ErrExpired)
	_, err = s.Peek(ctx, parkKey)
	wantErr(t, err, conversation.ErrExpired)
	gone := conversation.NewParkKey("scope", "old")
	mustPark(t, s, gone, "x", time.Now().Add(-conversation.ParkGrace-time.Minute))
	_, err = s.Take(ctx, gone)
	wantErr(t, err, conversation.ErrNotParked)
}

// parkIsolation: another scope, conversation or id finds nothing.
func parkIsolation(t *testing.T, s conversation.ParkStore) {
	exp := time.Now().Add(time.Hour)
	mustPark(t, s, parkKey, "mine", exp)
	mustPark(t, s, conversation.NewParkKey("scope", "apr_1"), "id", exp)
	for _, k := range []conversation.ParkKey{
		conversation.ConversationPark(conversation.NewKey("other scope", "agent", "p1")),
		conversation.ConversationPark(conversation.NewKey("scope", "agent", "p2")),
		conversation.ConversationPark(conversation.NewKey("scope", "other agent", "p1")),
		conversation.NewParkKey("other scope", "apr_1"),
		conversation.NewParkKey("scope", "apr_2"),
	} {
		_, err := s.Take(ctx, k)
		wantErr(t, err, conversation.ErrNotParked)
	}
	got, err := s.Take(ctx, parkKey)
	wantParked(t, got, err, "mine")
	got, err = s.Take(ctx, conversation.NewParkKey("scope", "apr_1"))
	wantParked(t, got, err, "id")
}

// parkReplaced: parking again replaces (even an answered round: the
// conversation's next waiting round), dropping forgets.
func parkReplaced(t *testing.T, s conversation.ParkStore) {
	exp := time.Now().Add(time.Hour)
	mustPark(t, s, parkKey, "one", exp)
	mustPark(t, s, parkKey, "two", exp)
	got, err := s.Take(ctx, parkKey)
	wantParked(t, got, err, "two")
	mustPark(t, s, parkKey, "three", exp)
	got, err = s.Peek(ctx, parkKey)
	wantParked(t, got, err, "three")
	if err := s.Drop(ctx, parkKey); err != nil {
		t.Fatal(err)
	}
	_, err = s.Take(ctx, parkKey)
	wantErr(t, err, conversation.ErrNotParked)
	if err := s.Drop(ctx, parkKey); err != nil {
		t.Fatalf("dropping nothing: %v", err)
	}
}

// parkRace: of answers racing for one round, exactly one gets it.
func parkRace(t *testing.T, s conversation.ParkStore) {
	for round := range 5 {
		data := "round " + strconv.Itoa(round)
		mustPark(t, s, parkKey, data, time.Now().Add(time.Hour))
		var won, answered atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				got, err := s.Take(ctx, parkKey)
				switch {
				case err == nil && string(got) == data:
					won.Add(1)
				case errors.Is(err, conversation.ErrAnswered):
					answered.Add(1)
				default:
					t.Errorf("Take: %q, %v", got, err)
				}
			}()
		}
		wg.Wait()
		if won.Load() != 1 || answered.Load() != 7 {
			t.Fatalf("%d answers took the round, %d were told it was answered; want 1 and 7", won.Load(), answered.Load())
		}
	}
}

// BenchmarkPark measures the store operations of one parked round: Park
// when the round ends waiting, Peek and Take when the answer comes.
func BenchmarkPark(b *testing.B, s conversation.ParkStore) {
	data := make([]byte, 8<<10) // a round's record with a modest request body
	for i := range data {
		data[i] = 'a' + byte(i%26)
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		k := conversation.NewParkKey("bench", strconv.Itoa(i))
		if err := s.Park(ctx, k, data, time.Now().Add(time.Hour)); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Peek(ctx, k); err != nil {
			b.Fatal(err)
		}
		if _, err := s.Take(ctx, k); err != nil {
			b.Fatal(err)
		}
	}
}
