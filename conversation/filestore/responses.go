package filestore

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"

	"github.com/llmstream/llmstream/conversation"
)

// Stored responses (CONTRACT.md §14) live beside the conversations:
// <dir>/<scope digest>/responses/<id digest>.resp, 0600. A file is an
// 8-byte big-endian expiry (Unix milliseconds, 0: none) and the data,
// written to a temporary file, fsynced and renamed over the name, so a
// reader sees the whole response or none. An expired file is removed when
// it is read, and by SweepResponses.

// responsePath returns the file of response k.
func (s *Store) responsePath(k conversation.ResponseKey) string {
	return filepath.Join(s.dir, k.Scope, "responses", k.ID+".resp")
}

// PutResponse writes a response's file.
func (s *Store) PutResponse(ctx context.Context, k conversation.ResponseKey, data []byte, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var head [8]byte
	if ttl > 0 {
		binary.BigEndian.PutUint64(head[:], uint64(time.Now().Add(ttl).UnixMilli()))
	}
	if err := writeAtomic(s.responsePath(k), head[:], data); err != nil {
		return fmt.Errorf("response store: %w", err)
	}
	return nil
}

// GetResponse reads a response's file.
func (s *Store) GetResponse(ctx context.Context, k conversation.ResponseKey) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p := s.responsePath(k)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, conversation.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("response store: %w", err)
	}
	if len(b) < 8 {
		return nil, conversation.ErrNotFound // not written by PutResponse
	}
	if exp := binary.BigEndian.Uint64(b[:8]); exp != 0 && time.Now().UnixMilli() > int64(exp) {
		_ = os.Remove(p)
		return nil, conversation.ErrNotFound
	}
	return b[8:], nil
}

// DeleteResponse removes a response's file.
func (s *Store) DeleteResponse(ctx context.Context, k conversation.ResponseKey) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if _, err := s.GetResponse(ctx, k); errors.Is(err, conversation.ErrNotFound) {
		return false, nil
	}
	p := s.responsePath(k)
	if err := os.Remove(p); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, fmt.Errorf("response store: %w", err)
	}
	if err := syncDir(filepath.Dir(p)); err != nil {
		return true, fmt.Errorf("response store: %w", err)
	}
	return true, nil
}

// respName matches the files PutResponse writes.
var respName = regexp.MustCompile(`^[0-9a-f]{64}\.resp$`)

// SweepResponses removes the files of the responses past their ttl, and
// returns how many. A response nobody reads again is otherwise never
// removed; the Caddy layer sweeps when the route is provisioned.
func (s *Store) SweepResponses(ctx context.Context) (int, error) {
	now := time.Now().UnixMilli()
	n := 0
	scopes, err := os.ReadDir(s.dir)
	if err != nil {
		return 0, fmt.Errorf("response store: %w", err)
	}
	for _, sc := range scopes {
		if !sc.IsDir() {
			continue
		}
		dir := filepath.Join(s.dir, sc.Name(), "responses")
		files, err := os.ReadDir(dir)
		if err != nil {
			continue
		}
		for _, f := range files {
			if err := ctx.Err(); err != nil {
				return n, err
			}
			if !respName.MatchString(f.Name()) {
				continue
			}
			p := filepath.Join(dir, f.Name())
			var head [8]byte
			fh, err := os.Open(p)
			if err != nil {
				continue
			}
			_, err = fh.ReadAt(head[:], 0)
			_ = fh.Close()
			if exp := binary.BigEndian.Uint64(head[:]); err == nil && exp != 0 && now > int64(exp) {
				if os.Remove(p) == nil {
					n++
				}
			}
		}
	}
	return n, nil
}

// Secret returns <dir>/secret-<name>, making it the first time: created
// with O_EXCL, so that two processes racing agree on the first one written.
func (s *Store) Secret(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !regexp.MustCompile(`^[a-z0-9_-]{1,32}$`).MatchString(name) {
		return nil, fmt.Errorf("response store: secret name %q", name)
	}
	p := filepath.Join(s.dir, "secret-"+name)
	for range 3 {
		b, err := os.ReadFile(p)
		if err == nil && len(b) == conversation.SecretSize {
			return b, nil
		}
		if err == nil {
			// A secret half written by a process that died: an empty or
			// short file is never used; the tmp+rename below replaces it
			// only when the file is unusable.
			_ = os.Remove(p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("response store: %w", err)
		}
		secret := make([]byte, conversation.SecretSize)
		_, _ = rand.Read(secret)
		if err := createExclusive(p, secret); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("response store: %w", err)
		}
	}
	return nil, fmt.Errorf("response store: secret %s could not be read", name)
}

// createExclusive writes data to a new file at p, failing with
// fs.ErrExist if there is one: the data goes to a temporary file first and
// is linked into place, so the name never holds a partial secret.
func createExclusive(p string, data []byte) error {
	tmp, err := writeTemp(filepath.Dir(p), nil, data)
	if err != nil {
		return err
	}
	defer os.Remove(tmp)
	if err := os.Link(tmp, p); err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// writeAtomic replaces p with head and data: a temporary file in the same
// directory, fsynced, renamed over p, the directory fsynced.
func writeAtomic(p string, head, data []byte) error {
	dir := filepath.Dir(p)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	tmp, err := writeTemp(dir, head, data)
	if err != nil {
		return err
	}
	if err := os.Rename(tmp, p); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

// writeTemp writes head and data to a new temporary file in dir, fsynced,
// and returns its name.
func writeTemp(dir string, head, data []byte) (string, error) {
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(bytes.Join([][]byte{head, data}, nil))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(name, 0o600)
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}
