package filestore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/llmstream/llmstream/conversation"
)

// Parked rounds (conversation.ParkStore) are files beside the scope's
// conversations: <dir>/<scope digest>/parked/<name>.json, 0600, each
// written whole to a temporary file, synced and renamed over the old one,
// so that a reader sees the old record or the new one, never half of
// either. Take's read and rewrite run under a lock of this process: one
// Caddy per directory, as for conversations. A file past its grace is
// removed when another round of its scope is parked.

// parkFile is a parked round's file.
type parkFile struct {
	// Answered is set once Take returned it.
	Answered bool `json:"answered,omitempty"`
	// Expires is when it expires, in Unix milliseconds.
	Expires int64 `json:"expires"`
	// Data is the round, until it is answered.
	Data []byte `json:"data,omitempty"`
}

// parkMu serialises the parked rounds' read-modify-writes in this process.
var parkMu sync.Mutex

func (s *Store) parkDir(k conversation.ParkKey) string {
	return filepath.Join(s.dir, k.Scope, "parked")
}

func (s *Store) parkPath(k conversation.ParkKey) string {
	return filepath.Join(s.parkDir(k), k.Name+".json")
}

// Park writes the round's file, and removes the scope's files past their
// grace.
func (s *Store) Park(ctx context.Context, k conversation.ParkKey, data []byte, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	parkMu.Lock()
	defer parkMu.Unlock()
	s.sweepParked(k)
	return s.writePark(k, parkFile{Expires: expires.UnixMilli(), Data: data})
}

// Peek reads the round's file.
func (s *Store) Peek(ctx context.Context, k conversation.ParkKey) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	parkMu.Lock()
	defer parkMu.Unlock()
	f, err := s.readPark(k)
	if err != nil {
		return nil, err
	}
	return f.Data, nil
}

// Take reads the round's file and rewrites it answered.
func (s *Store) Take(ctx context.Context, k conversation.ParkKey) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	parkMu.Lock()
	defer parkMu.Unlock()
	f, err := s.readPark(k)
	if err != nil {
		return nil, err
	}
	if err := s.writePark(k, parkFile{Answered: true, Expires: f.Expires}); err != nil {
		return nil, err
	}
	return f.Data, nil
}

// Drop removes the round's file.
func (s *Store) Drop(ctx context.Context, k conversation.ParkKey) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	parkMu.Lock()
	defer parkMu.Unlock()
	if err := os.Remove(s.parkPath(k)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("conversation store: %w", err)
	}
	return nil
}

// readPark reads a round's file and says what state it is in.
func (s *Store) readPark(k conversation.ParkKey) (parkFile, error) {
	b, err := os.ReadFile(s.parkPath(k))
	if errors.Is(err, fs.ErrNotExist) {
		return parkFile{}, conversation.ErrNotParked
	}
	if err != nil {
		return parkFile{}, fmt.Errorf("conversation store: %w", err)
	}
	var f parkFile
	if json.Unmarshal(b, &f) != nil {
		return parkFile{}, conversation.ErrNotParked
	}
	now := time.Now().UnixMilli()
	switch {
	case now > f.Expires+conversation.ParkGrace.Milliseconds():
		return parkFile{}, conversation.ErrNotParked
	case f.Answered:
		return parkFile{}, conversation.ErrAnswered
	case now > f.Expires:
		return parkFile{}, conversation.ErrExpired
	}
	return f, nil
}

// writePark replaces a round's file: a temporary file, synced, renamed.
func (s *Store) writePark(k conversation.ParkKey, f parkFile) error {
	b, err := json.Marshal(f)
	if err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	dir := s.parkDir(k)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	tmp, err := os.CreateTemp(dir, ".park-*")
	if err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, a no-op
	_, err = tmp.Write(b)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), s.parkPath(k))
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	return nil
}

// swept is when each scope's parked directory was last swept.
var swept = map[string]time.Time{}

// sweepInterval is how often a scope's parked directory is swept.
const sweepInterval = time.Minute

// sweepParked removes the files of k's scope past their grace, at most
// once a minute per scope. Only files not written for ParkGrace are read:
// a round expires after it was written, so a newer file cannot be past
// its grace.
func (s *Store) sweepParked(k conversation.ParkKey) {
	dir := s.parkDir(k)
	if time.Since(swept[dir]) < sweepInterval {
		return
	}
	swept[dir] = time.Now()
	if len(swept) > 1<<16 { // the map itself stays small
		clear(swept)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	now := time.Now()
	cutoff := now.Add(-conversation.ParkGrace).UnixMilli()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".json") {
			continue
		}
		if info, err := e.Info(); err != nil || now.Sub(info.ModTime()) < conversation.ParkGrace {
			continue
		}
		p := filepath.Join(dir, e.Name())
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		var f parkFile
		if json.Unmarshal(b, &f) != nil || f.Expires < cutoff {
			_ = os.Remove(p)
		}
	}
}

var _ conversation.ParkStore = (*Store)(nil)
