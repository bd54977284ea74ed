// Package filestore is the embedded conversation store: one append-only
// file per conversation, which survives restarts and needs no setup
// (CONTRACT.md §9: the default store, under Caddy's data directory).
//
// Layout: <dir>/<scope digest>/<conversation digest>.jsonl, directories
// 0700 and files 0600 (conversations are private). Each line is one
// append: a JSON array of the records it added, ended by a newline.
//
// Crash behaviour: an append is one write of one line, then fsync (and an
// fsync of the directory when it created the file), so an append that
// returned survives a crash or a power loss. A crash during an append
// leaves at most that line torn: readers skip a last line with no
// newline, and the next append cuts it off before writing, so every
// append is all or nothing. Clear removes the file (an atomic unlink) and
// syncs its directory.
//
// The lock that serialises writes lives in this process, shared by every
// Store on the same directory (a config reload makes a new one while the
// old one's streams finish): one Caddy per directory. Several Caddy
// instances that share conversations use the Redis store.
package filestore

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/llmstream/llmstream/conversation"
)

// Store keeps conversations in files under a directory.
type Store struct {
	dir string
	ttl time.Duration
}

// held holds the paths of the conversations locked in this process.
var held = struct {
	sync.Mutex
	paths map[string]bool
}{paths: map[string]bool{}}

// New returns a Store under dir, which it creates (0700) if needed.
// Conversations not written for ttl are gone (0: kept forever).
func New(dir string, ttl time.Duration) (*Store, error) {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("conversation store: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("conversation store: %w", err)
	}
	return &Store{dir: dir, ttl: ttl}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

func (s *Store) path(k conversation.Key) string {
	return filepath.Join(s.dir, k.Scope, k.Conversation+".jsonl")
}

// expired reports whether a file last written at mod is past the TTL: the
// file's modification time is its last append, so no clock of ours is
// needed and a restart keeps the expiry.
func (s *Store) expired(mod time.Time) bool {
	return s.ttl > 0 && time.Since(mod) > s.ttl
}

// Load returns the conversation's records.
func (s *Store) Load(ctx context.Context, k conversation.Key) ([]conversation.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(s.path(k))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("conversation store: %w", err)
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && s.expired(st.ModTime()) {
		return nil, nil
	}
	var recs []conversation.Record
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err == io.EOF {
			// A last line without its newline is an append still being
			// written, or one a crash tore: not part of the history.
			return recs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("conversation store: %w", err)
		}
		batch, ok := decodeLine(line)
		if ok {
			recs = append(recs, batch...)
		}
	}
}

// decodeLine decodes one append. A line that does not decode is skipped
// whole: only a torn last line can be malformed, and it is cut off by the
// next append.
func decodeLine(line []byte) ([]conversation.Record, bool) {
	var raws []json.RawMessage
	if json.Unmarshal(line, &raws) != nil {
		return nil, false
	}
	recs := make([]conversation.Record, 0, len(raws))
	for _, raw := range raws {
		r, err := conversation.DecodeRecord(raw)
		if err != nil {
			return nil, false
		}
		recs = append(recs, r)
	}
	return recs, true
}

// Lock takes the conversation's lock in this process.
func (s *Store) Lock(ctx context.Context, k conversation.Key) (conversation.Lock, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := s.path(k)
	held.Lock()
	defer held.Unlock()
	if held.paths[p] {
		return nil, conversation.ErrBusy
	}
	held.paths[p] = true
	return &lock{s: s, key: k}, nil
}

// lock is a held conversation lock.
type lock struct {
	s        *Store
	key      conversation.Key
	mu       sync.Mutex
	released bool
}

var errReleased = errors.New("conversation store: the lock was released")

// Append writes recs as one line.
func (l *lock) Append(ctx context.Context, recs ...conversation.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return errReleased
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	line := []byte{'['}
	for i, r := range recs {
		if i > 0 {
			line = append(line, ',')
		}
		var err error
		if line, err = conversation.AppendRecord(line, r); err != nil {
			return err
		}
	}
	line = append(line, "]\n"...)
	if err := l.s.appendLine(l.key, line); err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	return nil
}

// appendLine appends one line to the conversation's file, after cutting
// off a torn last line, or everything when the conversation expired.
func (s *Store) appendLine(k conversation.Key, line []byte) error {
	p := s.path(k)
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	_, statErr := os.Stat(p)
	created := errors.Is(statErr, fs.ErrNotExist)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	switch {
	case st.Size() > 0 && s.expired(st.ModTime()):
		err = f.Truncate(0)
	case st.Size() > 0:
		err = cutTornLine(f, st.Size())
	}
	if err != nil {
		return err
	}
	if _, err := f.Write(line); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if created {
		return syncDir(dir)
	}
	return nil
}

// cutTornLine truncates f after its last newline, if its last byte is not
// one: a crash tore the append that wrote it.
func cutTornLine(f *os.File, size int64) error {
	var buf [4096]byte
	end := size
	for end > 0 {
		n := int64(len(buf))
		if n > end {
			n = end
		}
		if _, err := f.ReadAt(buf[:n], end-n); err != nil {
			return err
		}
		if end == size && buf[n-1] == '\n' {
			return nil // whole
		}
		if i := bytes.LastIndexByte(buf[:n], '\n'); i >= 0 {
			return f.Truncate(end - n + int64(i) + 1)
		}
		end -= n
	}
	return f.Truncate(0)
}

// syncDir makes a directory entry change (a new or removed file) durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return err
	}
	return nil
}

// Replace rewrites the conversation's file with rec in place of the
// record of its id: a new file, synced, renamed over the old one, so that
// a crash leaves the old file or the new one.
func (l *lock) Replace(ctx context.Context, rec conversation.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return errReleased
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := l.s.path(l.key)
	old, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return conversation.ErrNoRecord
	}
	if err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	var out []byte
	found := false
	for _, line := range bytes.SplitAfter(old, []byte("\n")) {
		if len(line) == 0 || line[len(line)-1] != '\n' {
			continue // a torn last line: dropped, as the next append would
		}
		batch, ok := decodeLine(line)
		if !ok {
			continue
		}
		changed := false
		for i := range batch {
			if batch[i].ID == rec.ID {
				batch[i], changed, found = rec, true, true
			}
		}
		if !changed {
			out = append(out, line...)
			continue
		}
		nl := []byte{'['}
		for i, r := range batch {
			if i > 0 {
				nl = append(nl, ',')
			}
			if nl, err = conversation.AppendRecord(nl, r); err != nil {
				return err
			}
		}
		out = append(append(out, nl...), "]\n"...)
	}
	if !found {
		return conversation.ErrNoRecord
	}
	dir := filepath.Dir(p)
	tmp, err := os.CreateTemp(dir, ".conv-*")
	if err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.Write(out)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), p)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	return nil
}

// Clear removes the conversation's file.
func (l *lock) Clear(ctx context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return errReleased
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	p := l.s.path(l.key)
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("conversation store: %w", err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return fmt.Errorf("conversation store: %w", err)
	}
	return nil
}

// Release gives the lock back.
func (l *lock) Release(context.Context) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return nil
	}
	l.released = true
	held.Lock()
	delete(held.paths, l.s.path(l.key))
	held.Unlock()
	return nil
}

var _ conversation.Store = (*Store)(nil)
