package llmmock

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/caddyserver/caddy/v2"
	"github.com/caddyserver/caddy/v2/caddyconfig/caddyfile"
)

// TestFaults checks what each fault does to the requests it picks, and
// that it picks them by count: of every 4 requests the 4th (the fault
// runs rely on a fixed share of failed streams).
func TestFaults(t *testing.T) {
	const reply = "0123456789abcdefghij" // 20 bytes, in 4-byte deltas
	cases := []struct {
		fault Fault
		// check looks at the picked request's answer; err is what
		// ServeHTTP returned or panicked with.
		check func(t *testing.T, rec *httptest.ResponseRecorder, panicked any, took time.Duration)
	}{
		{Fault{Kind: FaultStatus, Status: 529}, func(t *testing.T, rec *httptest.ResponseRecorder, _ any, _ time.Duration) {
			if rec.Code != 529 || !strings.Contains(rec.Body.String(), `"error"`) || rec.Header().Get("Retry-After") == "" {
				t.Errorf("status fault: %d %q", rec.Code, rec.Body.String())
			}
		}},
		{Fault{Kind: FaultReset, After: 8}, func(t *testing.T, rec *httptest.ResponseRecorder, panicked any, _ time.Duration) {
			body := rec.Body.String()
			if panicked != http.ErrAbortHandler || !strings.Contains(body, `"4567"`) || strings.Contains(body, "89ab") ||
				strings.Contains(body, "finish_reason\":\"stop") {
				t.Errorf("reset fault: panic %v, body\n%s", panicked, body)
			}
		}},
		{Fault{Kind: FaultGarbage}, func(t *testing.T, rec *httptest.ResponseRecorder, _ any, _ time.Duration) {
			body := rec.Body.String()
			i, j := strings.Index(body, "\xff\xfe"), strings.Index(body, `"cdef"`)
			if i < 0 || j < i || !strings.Contains(body, "[DONE]") {
				t.Errorf("garbage fault: not mid-reply:\n%q", body)
			}
		}},
		{Fault{Kind: FaultStall, Delay: caddy.Duration(60 * time.Millisecond)}, func(t *testing.T, rec *httptest.ResponseRecorder, _ any, took time.Duration) {
			if took < 60*time.Millisecond || !strings.Contains(rec.Body.String(), "[DONE]") {
				t.Errorf("stall fault: took %v\n%s", took, rec.Body.String())
			}
		}},
		{Fault{Kind: FaultSlowStart, Delay: caddy.Duration(60 * time.Millisecond)}, func(t *testing.T, rec *httptest.ResponseRecorder, _ any, took time.Duration) {
			if took < 60*time.Millisecond || rec.Code != 200 || !strings.Contains(rec.Body.String(), "[DONE]") {
				t.Errorf("slow_start fault: took %v, %d", took, rec.Code)
			}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.fault.Kind, func(t *testing.T) {
			zero := caddy.Duration(0)
			f := tc.fault
			f.Every = 4
			m := &Mock{ReplyTexts: []string{reply}, ChunkSize: 4, Interval: &zero, Faults: []Fault{f}}
			if err := m.Provision(caddy.Context{}); err != nil {
				t.Fatal(err)
			}
			for n := 1; n <= 8; n++ {
				rec := httptest.NewRecorder()
				req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
					strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`))
				start := time.Now()
				var panicked any
				func() {
					defer func() { panicked = recover() }()
					_ = m.ServeHTTP(rec, req, nil)
				}()
				took := time.Since(start)
				if n%4 == 0 {
					tc.check(t, rec, panicked, took)
					continue
				}
				if panicked != nil || rec.Code != 200 || !strings.Contains(rec.Body.String(), "[DONE]") ||
					strings.Contains(rec.Body.String(), "\xff") {
					t.Errorf("request %d is not one of the fault's but failed: %v %d", n, panicked, rec.Code)
				}
			}
		})
	}
}

// TestFaultBurst: every 10 burst 3 fails requests 8, 9, 10, 18, 19, 20.
func TestFaultBurst(t *testing.T) {
	f := Fault{Kind: FaultStatus, Every: 10, Burst: 3}
	if err := f.check(); err != nil {
		t.Fatal(err)
	}
	var got []uint64
	for n := uint64(1); n <= 20; n++ {
		if f.hits(n) {
			got = append(got, n)
		}
	}
	if want := []uint64{8, 9, 10, 18, 19, 20}; !slicesEqual(got, want) {
		t.Errorf("burst hits %v, want %v", got, want)
	}
}

func slicesEqual(a, b []uint64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStallUntilClientLeaves: a stall without a delay holds the reply
// until the client leaves, and then stops quietly.
func TestStallUntilClientLeaves(t *testing.T) {
	zero := caddy.Duration(0)
	m := &Mock{ReplyTexts: []string{"0123456789"}, ChunkSize: 2, Interval: &zero, Faults: []Fault{{Kind: FaultStall}}}
	if err := m.Provision(caddy.Context{}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	rec := httptest.NewRecorder()
	req := httptest.NewRequest(http.MethodPost, "/v1/chat/completions",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}],"stream":true}`)).WithContext(ctx)
	if err := m.ServeHTTP(rec, req, nil); err != nil {
		t.Fatal(err)
	}
	if body := rec.Body.String(); !strings.Contains(body, `"45"`) || strings.Contains(body, `"67"`) || strings.Contains(body, "[DONE]") {
		t.Errorf("stalled reply:\n%s", body)
	}
}

// TestFaultCaddyfile reads the fault directive and refuses what makes no
// sense.
func TestFaultCaddyfile(t *testing.T) {
	m := new(Mock)
	err := m.UnmarshalCaddyfile(caddyfile.NewTestDispenser("llm_mock {\n\tfault reset every 10 after 200\n\tfault status every 100 burst 20 status 529\n\tfault slow_start delay 2s\n}"))
	if err != nil {
		t.Fatal(err)
	}
	want := []Fault{{Kind: "reset", Every: 10, Burst: 1, After: 200}, {Kind: "status", Every: 100, Burst: 20, Status: 529},
		{Kind: "slow_start", Every: 1, Burst: 1, Delay: caddy.Duration(2 * time.Second)}}
	if len(m.Faults) != len(want) {
		t.Fatalf("faults %+v", m.Faults)
	}
	for i := range want {
		if m.Faults[i] != want[i] {
			t.Errorf("fault %d = %+v, want %+v", i, m.Faults[i], want[i])
		}
	}
	for input, msg := range map[string]string{
		"fault":                        "missing kind",
		"fault melt":                   "unknown kind",
		"fault reset every":            "every needs a value",
		"fault reset often 3":          "unknown setting",
		"fault reset every x":          "invalid syntax",
		"fault status every 2 burst 3": "burst 3 is more than every 2",
		"fault status status 200":      "not an error status",
		"fault slow_start":             "a delay is required",
	} {
		err := new(Mock).UnmarshalCaddyfile(caddyfile.NewTestDispenser("llm_mock {\n\t" + input + "\n}"))
		if err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%q: error %v, want %q", input, err, msg)
		}
	}
}
