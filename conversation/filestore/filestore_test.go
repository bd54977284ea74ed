package filestore

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/llmstream/llmstream/conversation"
	"github.com/llmstream/llmstream/conversation/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) conversation.Store {
		s, err := New(filepath.Join(t.TempDir(), "conv"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

var ctx = context.Background()

// TestTornAppend writes what a crash mid-append leaves (a last line
// without its newline) and checks that readers skip it and the next
// append cuts it off: every append is all or nothing.
func TestTornAppend(t *testing.T) {
	for _, torn := range []string{`[{"id":"id_x","role":"user","con`, `[`, `[{"id":"id_x","role":"user","content":"x"}]`} {
		t.Run(torn, func(t *testing.T) {
			s, _ := New(t.TempDir(), 0)
			k := conversation.NewKey("s", "g", "p")
			l, _ := s.Lock(ctx, k)
			defer l.Release(ctx)
			if err := l.Append(ctx, storetest.Rec("1"), storetest.Rec("2")); err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(s.path(k), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = f.WriteString(torn)
			_ = f.Close()
			want := []conversation.Record{storetest.Rec("1"), storetest.Rec("2")}
			got, err := s.Load(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			if err := storetest.Equal(got, want); err != nil {
				t.Fatalf("with a torn last line: %v", err)
			}
			if err := l.Append(ctx, storetest.Rec("3")); err != nil {
				t.Fatal(err)
			}
			got, _ = s.Load(ctx, k)
			if err := storetest.Equal(got, append(want, storetest.Rec("3"))); err != nil {
				t.Fatalf("after the next append: %v", err)
			}
		})
	}
}

// TestCorruptLine: a malformed whole line (which llmstream never writes)
// is skipped; the rest of the history stays readable.
func TestCorruptLine(t *testing.T) {
	s, _ := New(t.TempDir(), 0)
	k := conversation.NewKey("s", "g", "p")
	l, _ := s.Lock(ctx, k)
	defer l.Release(ctx)
	_ = l.Append(ctx, storetest.Rec("1"))
	f, _ := os.OpenFile(s.path(k), os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString("garbage\n[{\"id\":\"\",\"role\":\"user\"}]\n")
	_ = f.Close()
	_ = l.Append(ctx, storetest.Rec("2"))
	got, err := s.Load(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if err := storetest.Equal(got, []conversation.Record{storetest.Rec("1"), storetest.Rec("2")}); err != nil {
		t.Fatal(err)
	}
}

func TestTTL(t *testing.T) {
	s, _ := New(t.TempDir(), time.Hour)
	k := conversation.NewKey("s", "g", "p")
	l, _ := s.Lock(ctx, k)
	defer l.Release(ctx)
	_ = l.Append(ctx, storetest.Rec("old"))
	if got, _ := s.Load(ctx, k); len(got) != 1 {
		t.Fatalf("%d records before the TTL", len(got))
	}
	old := time.Now().Add(-2 * time.Hour)
	if err := os.Chtimes(s.path(k), old, old); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Load(ctx, k); len(got) != 0 {
		t.Fatalf("%d records after the TTL", len(got))
	}
	_ = l.Append(ctx, storetest.Rec("new"))
	got, _ := s.Load(ctx, k)
	if err := storetest.Equal(got, []conversation.Record{storetest.Rec("new")}); err != nil {
		t.Fatalf("an expired conversation starts anew: %v", err)
	}
}

// TestPrivate: conversation files are for the Caddy user only.
func TestPrivate(t *testing.T) {
	s, _ := New(filepath.Join(t.TempDir(), "c"), 0)
	k := conversation.NewKey("s", "g", "p")
	l, _ := s.Lock(ctx, k)
	_ = l.Append(ctx, storetest.Rec("1"))
	_ = l.Release(ctx)
	for p, want := range map[string]os.FileMode{s.Dir(): 0o700, filepath.Dir(s.path(k)): 0o700, s.path(k): 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, st.Mode().Perm(), want)
		}
	}
}

// TestLockSharedByStoresOnOneDir: a config reload makes a new Store on the
// same directory while the old one's streams run; the lock holds across
// them.
func TestLockSharedByStoresOnOneDir(t *testing.T) {
	dir := t.TempDir()
	a, _ := New(dir, 0)
	b, _ := New(filepath.Join(dir, "..", filepath.Base(dir)), 0)
	k := conversation.NewKey("s", "g", "p")
	l, err := a.Lock(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.Lock(ctx, k); err != conversation.ErrBusy {
		t.Fatalf("the other Store's Lock: %v, want ErrBusy", err)
	}
	_ = l.Release(ctx)
	l2, err := b.Lock(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	_ = l2.Release(ctx)
}

func TestParkConformance(t *testing.T) {
	storetest.RunPark(t, func(t *testing.T) conversation.ParkStore {
		s, err := New(filepath.Join(t.TempDir(), "conv"), 0)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// TestParkedPrivate: a parked round's file is readable by Caddy's user
// only, as conversations are.
func TestParkedPrivate(t *testing.T) {
	s, _ := New(t.TempDir(), 0)
	k := conversation.NewParkKey("s", "apr_1")
	if err := s.Park(ctx, k, []byte("x"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(s.parkPath(k))
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v, %v", st.Mode(), err)
	}
}

func BenchmarkPark(b *testing.B) {
	s, err := New(b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	storetest.BenchmarkPark(b, s)
}

// TestParkedSwept: a parked round's file past its grace is removed when
// another round of its scope is parked; a recent one stays.
func TestParkedSwept(t *testing.T) {
	s, _ := New(t.TempDir(), 0)
	old, recent := conversation.NewParkKey("s", "old"), conversation.NewParkKey("s", "recent")
	if err := s.Park(ctx, old, []byte("x"), time.Now().Add(-conversation.ParkGrace-time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Park(ctx, recent, []byte("y"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	long := time.Now().Add(-conversation.ParkGrace - 2*time.Hour)
	if err := os.Chtimes(s.parkPath(old), long, long); err != nil {
		t.Fatal(err)
	}
	delete(swept, s.parkDir(old))
	if err := s.Park(ctx, conversation.NewParkKey("s", "new"), []byte("z"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(s.parkPath(old)); !os.IsNotExist(err) {
		t.Errorf("the old file is still there: %v", err)
	}
	if _, err := os.Stat(s.parkPath(recent)); err != nil {
		t.Errorf("the recent file is gone: %v", err)
	}
}
