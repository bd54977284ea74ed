package caddymodule

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/llmstream/llmstream/conversation"
)

// flakyLock fails its first appends with err, then stores.
type flakyLock struct {
	fails  int
	err    error
	tries  int
	stored []conversation.Record
}

func (l *flakyLock) Append(_ context.Context, recs ...conversation.Record) error {
	l.tries++
	if l.tries <= l.fails {
		return l.err
	}
	l.stored = append(l.stored, recs...)
	return nil
}
func (l *flakyLock) Clear(context.Context) error   { return nil }
func (l *flakyLock) Release(context.Context) error { return nil }
func (l *flakyLock) Replace(context.Context, conversation.Record) error {
	return conversation.ErrNoRecord
}

// TestAppendRetrying: a reply whose store is down for a moment (a Redis
// restarting) is stored once it is back, before the client's terminal
// event; a lock that expired is not tried again, and a store that stays
// down gives up when the time is up.
func TestAppendRetrying(t *testing.T) {
	down := errors.New("dial tcp: connection refused")
	recs := []conversation.Record{{ID: "a", Role: "assistant", Content: "hi"}}
	cases := []struct {
		name      string
		lock      *flakyLock
		timeout   time.Duration
		wantErr   error
		wantTries int
	}{
		{"down for three tries", &flakyLock{fails: 3, err: down}, 5 * time.Second, nil, 4},
		{"lock lost", &flakyLock{fails: 1, err: conversation.ErrLockLost}, 5 * time.Second, conversation.ErrLockLost, 1},
		{"down for good", &flakyLock{fails: 1 << 30, err: down}, 300 * time.Millisecond, down, -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), tc.timeout)
			defer cancel()
			err := appendRetrying(ctx, tc.lock, recs)
			if !errors.Is(err, tc.wantErr) && err != tc.wantErr {
				t.Fatalf("error %v, want %v", err, tc.wantErr)
			}
			if tc.wantTries >= 0 && tc.lock.tries != tc.wantTries {
				t.Errorf("%d tries, want %d", tc.lock.tries, tc.wantTries)
			}
			if tc.wantErr == nil && len(tc.lock.stored) != 1 {
				t.Errorf("stored %v", tc.lock.stored)
			}
		})
	}
}
