// Package storetest is the conformance suite every idempotency.Store runs:
// the memory store's tests, redisstore's and pgstore's call Run with a
// fresh store (its own key prefix or table) per test, so the three are held
// to the same outcomes — one side effect for 100 concurrent duplicates, 422
// on a payload mismatch, the documented outcome of a handler that crashes
// after its side effect, fencing of a lease that was taken over.
package storetest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/recoil-go/recoil"
	"github.com/recoil-go/recoil/idempotency"
	"github.com/recoil-go/recoil/recoilhttp"
)

// NewStore returns a store for one test, empty and apart from every other
// test's (a table or a key prefix of its own), and cleans it up with
// t.Cleanup.
type NewStore func(t *testing.T) idempotency.Store

// Run runs the suite against stores made by newStore.
func Run(t *testing.T, newStore NewStore) {
	tests := []struct {
		name string
		run  func(*testing.T, idempotency.Store)
	}{
		{"lifecycle", lifecycle},
		{"scopes", scopes},
		{"lease taken over", leaseTakenOver},
		{"100 concurrent duplicates", concurrentDuplicates},
		{"payload mismatch", mismatch},
		{"crash after the side effect", crashAfterEffect},
		{"5xx releases the key", releaseOn5xx},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, newStore(t))
		})
	}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

func lifecycle(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	b, err := s.Begin(c, "client-1", "k1", "fp", time.Minute)
	if err != nil || b.State != idempotency.StateNew || b.Token == "" {
		t.Fatalf("Begin on a free key = %+v, %v; want new with a token", b, err)
	}
	tok := b.Token
	if b, err = s.Begin(c, "client-1", "k1", "fp", time.Minute); err != nil || b.State != idempotency.StateRunning || b.RetryIn <= 0 || b.RetryIn > time.Minute {
		t.Fatalf("Begin on a held key = %+v, %v; want running, its lease's remainder in RetryIn", b, err)
	}
	if b, err = s.Begin(c, "client-1", "k1", "other", time.Minute); err != nil || b.State != idempotency.StateMismatch {
		t.Fatalf("Begin with another fingerprint = %+v, %v; want mismatch", b, err)
	}
	if err := s.Complete(c, "client-1", "k1", "not-the-token", &idempotency.Response{Status: 200}); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Complete with a wrong token = %v, want ErrLeaseLost", err)
	}
	want := &idempotency.Response{Status: 201, Header: http.Header{"Content-Type": {"application/json"}, "X-Two": {"a", "b"}}, Body: []byte(`{"id":"ch_1"}` + "\x00\xff")}
	if err := s.Complete(c, "client-1", "k1", tok, want); err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if err := s.Complete(c, "client-1", "k1", tok, &idempotency.Response{Status: 500}); err != nil {
		t.Fatalf("Complete again under the same token = %v, want nil (and no change)", err)
	}
	b, err = s.Begin(c, "client-1", "k1", "fp", time.Minute)
	if err != nil || b.State != idempotency.StateDone {
		t.Fatalf("Begin on a finished key = %+v, %v; want done", b, err)
	}
	if !sameResponse(b.Response, want) {
		t.Fatalf("stored response = %+v, want %+v exactly", b.Response, want)
	}
	if b, err = s.Begin(c, "client-1", "k1", "other", time.Minute); err != nil || b.State != idempotency.StateMismatch {
		t.Fatalf("Begin on a finished key with another fingerprint = %+v, %v; want mismatch", b, err)
	}
	// Release frees a key for the next request.
	b, _ = s.Begin(c, "client-1", "k2", "fp", time.Minute)
	if err := s.Release(c, "client-1", "k2", "not-the-token"); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Release with a wrong token = %v, want ErrLeaseLost", err)
	}
	if err := s.Release(c, "client-1", "k2", b.Token); err != nil {
		t.Fatalf("Release: %v", err)
	}
	if b, err = s.Begin(c, "client-1", "k2", "fp2", time.Minute); err != nil || b.State != idempotency.StateNew {
		t.Fatalf("Begin after Release = %+v, %v; want new (any fingerprint)", b, err)
	}
}

func sameResponse(a, b *idempotency.Response) bool {
	if a == nil || b == nil || a.Status != b.Status || !bytes.Equal(a.Body, b.Body) || len(a.Header) != len(b.Header) {
		return false
	}
	for k, v := range b.Header {
		if strings.Join(a.Header[k], "\x00") != strings.Join(v, "\x00") {
			return false
		}
	}
	return true
}

func scopes(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	for _, scope := range []string{"a", "b", ""} {
		if b, err := s.Begin(c, scope, "same", "fp", time.Minute); err != nil || b.State != idempotency.StateNew {
			t.Fatalf("Begin(scope %q) = %+v, %v; want new: scopes are apart", scope, b, err)
		}
	}
}

// eventually polls cond every 10 ms until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(timeout)
	for !cond() {
		select {
		case <-deadline:
			t.Fatalf("after %v: %s", timeout, what)
		case <-tick.C:
		}
	}
}

func leaseTakenOver(t *testing.T, s idempotency.Store) {
	c := ctx(t)
	first, err := s.Begin(c, "", "k", "fp", 200*time.Millisecond)
	if err != nil || first.State != idempotency.StateNew {
		t.Fatalf("Begin = %+v, %v", first, err)
	}
	var second idempotency.Begun
	eventually(t, 5*time.Second, "the key was never taken over after its lease", func() bool {
		second, err = s.Begin(c, "", "k", "fp", time.Minute)
		return err == nil && second.State == idempotency.StateNew
	})
	if second.Token == first.Token {
		t.Fatal("the new holder got the old token")
	}
	if err := s.Complete(c, "", "k", first.Token, &idempotency.Response{Status: 200, Body: []byte("stale")}); !errors.Is(err, idempotency.ErrLeaseLost) {
		t.Fatalf("Complete by the holder whose lease was taken over = %v, want ErrLeaseLost", err)
	}
	if err := s.Complete(c, "", "k", second.Token, &idempotency.Response{Status: 200, Body: []byte("fresh")}); err != nil {
		t.Fatalf("Complete by the new holder: %v", err)
	}
	if b, _ := s.Begin(c, "", "k", "fp", time.Minute); b.State != idempotency.StateDone || string(b.Response.Body) != "fresh" {
		t.Fatalf("stored = %+v, want the new holder's response", b)
	}
}

// charges is a handler that performs a counted side effect per request
// and answers 201 with the charge's number.
type charges struct {
	n    atomic.Int64
	hold time.Duration // how long the work takes after the effect
}

func (h *charges) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := h.n.Add(1)
	if h.hold > 0 {
		t := time.NewTimer(h.hold) // the work's own duration, not a wait for a condition
		<-t.C
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Charge", strconv.FormatInt(n, 10))
	w.WriteHeader(http.StatusCreated)
	fmt.Fprintf(w, `{"id":"ch_%d","request":%q}`, n, body)
}

func serve(t *testing.T, s idempotency.Store, lease time.Duration, h http.Handler) *httptest.Server {
	m, err := idempotency.NewMiddleware(h, idempotency.Config{Store: s, Lease: lease, Required: true})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return srv
}

// got is one response, read whole.
type got struct {
	status int
	header http.Header
	body   string
}

func post(t *testing.T, c *http.Client, url, key, body string) (got, error) {
	req, err := http.NewRequestWithContext(ctx(t), http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return got{}, err
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", `"`+key+`"`)
	}
	resp, err := c.Do(req)
	if err != nil {
		return got{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return got{resp.StatusCode, resp.Header, string(b)}, err
}

func concurrentDuplicates(t *testing.T, s idempotency.Store) {
	h := &charges{hold: 50 * time.Millisecond}
	srv := serve(t, s, 10*time.Second, h)
	// Each duplicate retries through recoil's Transport, which waits out
	// the 409's Retry-After and asks again under the same key.
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	tr := &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{MaxAttempts: 10, Budget: recoil.NoBudget}}
	client := &http.Client{Transport: tr}
	const n = 100
	var wg sync.WaitGroup
	start := make(chan struct{})
	results := make([]got, n)
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = post(t, client, srv.URL+"/v1/charges", "dup-1", `{"amount":100}`)
		})
	}
	close(start)
	wg.Wait()
	if got := h.n.Load(); got != 1 {
		t.Errorf("side effects = %d, want exactly 1", got)
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatalf("duplicate %d: %v", i, errs[i])
		}
		r := results[i]
		if r.status != http.StatusCreated || r.body != results[0].body || r.header.Get("X-Charge") != "1" || r.header.Get("Content-Type") != "application/json" {
			t.Fatalf("duplicate %d = %d %v %s; want the same 201 as the first, %s", i, r.status, r.header, r.body, results[0].body)
		}
	}
}

func mismatch(t *testing.T, s idempotency.Store) {
	h := &charges{}
	srv := serve(t, s, 10*time.Second, h)
	c := srv.Client()
	if r, err := post(t, c, srv.URL+"/v1/charges", "m-1", `{"amount":100}`); err != nil || r.status != http.StatusCreated {
		t.Fatalf("first = %+v, %v", r, err)
	}
	for _, tt := range []struct{ path, body string }{{"/v1/charges", `{"amount":999}`}, {"/v1/refunds", `{"amount":100}`}} {
		r, err := post(t, c, srv.URL+tt.path, "m-1", tt.body)
		if err != nil || r.status != http.StatusUnprocessableEntity || r.header.Get("Content-Type") != "application/problem+json" || !strings.Contains(r.body, "idempotency_key_reused") {
			t.Fatalf("POST %s %s under the same key = %+v, %v; want 422 problem+json", tt.path, tt.body, r, err)
		}
	}
	if h.n.Load() != 1 {
		t.Fatalf("side effects = %d, want 1", h.n.Load())
	}
}

// crashAfterEffect: the handler performs its side effect and dies before
// answering (a panic; the process dying is the same to the store: nothing
// is stored, nothing released). The documented outcome: a retry within
// the lease gets 409 with Retry-After; once the lease runs out a retry
// runs the handler again — the effect is at least once — and every retry
// after that replays the second run's response.
func crashAfterEffect(t *testing.T, s idempotency.Store) {
	var effects atomic.Int64
	crash := atomic.Bool{}
	crash.Store(true)
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := effects.Add(1)
		if crash.Load() {
			panic(http.ErrAbortHandler) // dies after the effect
		}
		fmt.Fprintf(w, "charged %d", n)
	})
	const lease = 500 * time.Millisecond
	srv := serve(t, s, lease, h)
	c := srv.Client()
	began := time.Now()
	if _, err := post(t, c, srv.URL, "crash-1", "x"); err == nil {
		t.Fatal("the crashed request got a response")
	}
	crash.Store(false)
	r, err := post(t, c, srv.URL, "crash-1", "x")
	if time.Since(began) < lease && (err != nil || r.status != http.StatusConflict || r.header.Get("Retry-After") == "") {
		t.Fatalf("retry within the lease = %+v, %v; want 409 with Retry-After", r, err)
	}
	eventually(t, 10*time.Second, "no retry ran after the lease ran out", func() bool {
		r, err = post(t, c, srv.URL, "crash-1", "x")
		return err == nil && r.status != http.StatusConflict
	})
	if r.status != http.StatusOK || r.body != "charged 2" || effects.Load() != 2 {
		t.Fatalf("after the lease = %d %q, effects %d; want the handler run again (at least once: 2 effects)", r.status, r.body, effects.Load())
	}
	if r, err = post(t, c, srv.URL, "crash-1", "x"); err != nil || r.body != "charged 2" || effects.Load() != 2 {
		t.Fatalf("a later retry = %+v, %v, effects %d; want the replay", r, err, effects.Load())
	}
}

func releaseOn5xx(t *testing.T, s idempotency.Store) {
	var calls atomic.Int64
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			http.Error(w, "dependency down, nothing done", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusCreated)
	})
	srv := serve(t, s, 10*time.Second, h)
	c := srv.Client()
	for i, want := range []int{503, 201, 201} {
		if r, err := post(t, c, srv.URL, "r-1", "x"); err != nil || r.status != want {
			t.Fatalf("request %d = %+v, %v; want %d", i+1, r, err, want)
		}
	}
	if calls.Load() != 2 {
		t.Fatalf("handler calls = %d, want 2 (the 503 released the key; the 201 was stored)", calls.Load())
	}
}

// Interrupted runs 40 logical requests, each with a key of its own and
// retried by recoil's Transport, against a Middleware on s whose handler
// performs one counted side effect per run and takes 100 ms; once 10
// effects have happened, with others in flight, it calls interrupt (which
// restarts the store, or kills its connections, and returns once the
// store is back) with the server's URL. Then it checks what must hold
// whatever the interruption hit: no key's effect happened twice; every
// request ended with its key's one response or a problem+json error
// (never a second, different success); and a repeat of every key that
// succeeded replays that response without running the handler.
func Interrupted(t *testing.T, s idempotency.Store, interrupt func(t *testing.T, url string)) {
	var mu sync.Mutex
	effects := map[string]int{}
	total := 0
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, _ := idempotency.ClaimFrom(r.Context())
		mu.Lock()
		effects[c.Key]++
		total++
		n := total
		mu.Unlock()
		tm := time.NewTimer(100 * time.Millisecond) // the work's own duration
		<-tm.C
		w.Header().Set("X-Charge", strconv.Itoa(n))
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, "charge %d for %s", n, c.Key)
	})
	m, err := idempotency.NewMiddleware(h, idempotency.Config{Store: s, Lease: 30 * time.Second, Required: true})
	if err != nil {
		t.Fatal(err)
	}
	// Count the errors the server answered with while the store was
	// interrupted: the Transport retries them, so the final outcomes alone
	// would not show them.
	var served sync.Map // code → *atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		m.ServeHTTP(rec, r)
		if rec.Code >= 500 {
			var p struct{ Code string }
			_ = json.Unmarshal(rec.Body.Bytes(), &p)
			n, _ := served.LoadOrStore(strconv.Itoa(rec.Code)+" "+p.Code, new(atomic.Int64))
			n.(*atomic.Int64).Add(1)
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	}))
	t.Cleanup(srv.Close)
	base := &http.Transport{}
	t.Cleanup(base.CloseIdleConnections)
	client := &http.Client{Transport: &recoilhttp.Transport{Base: base, Policy: &recoil.Policy{MaxAttempts: 8, Budget: recoil.NoBudget}}}

	const n = 40
	results := make([]got, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Spread over 400 ms, so that requests are at every stage when
			// the interruption comes.
			tm := time.NewTimer(time.Duration(i) * 10 * time.Millisecond)
			<-tm.C
			results[i], errs[i] = post(t, client, srv.URL, "int-"+strconv.Itoa(i), "x")
		})
	}
	eventually(t, 20*time.Second, "10 side effects never happened", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return total >= 10
	})
	interrupt(t, srv.URL)
	wg.Wait()

	ok, failed := 0, 0
	for i := range n {
		key := "int-" + strconv.Itoa(i)
		mu.Lock()
		e := effects[key]
		mu.Unlock()
		if e > 1 {
			t.Errorf("key %s: side effect ran %d times", key, e)
		}
		if errs[i] != nil {
			t.Errorf("key %s: %v (want a response: the store's failures are answered, not dropped)", key, errs[i])
			continue
		}
		r := results[i]
		switch {
		case r.status == http.StatusCreated:
			ok++
			if e != 1 || !strings.HasSuffix(r.body, " for "+key) {
				t.Errorf("key %s: 201 %q with %d effects", key, r.body, e)
			}
			again, err := post(t, srv.Client(), srv.URL, key, "x")
			if err != nil || again.status != r.status || again.body != r.body {
				t.Errorf("key %s: repeat = %+v, %v; want the replay of %q", key, again, err, r.body)
			}
		case r.status >= 400 && r.header.Get("Content-Type") == "application/problem+json":
			failed++
			var p struct{ Code string }
			_ = json.Unmarshal([]byte(r.body), &p)
			t.Logf("key %s: %d %s (%d effects)", key, r.status, p.Code, e)
		default:
			t.Errorf("key %s: %d %q: neither the key's response nor a problem", key, r.status, r.body)
		}
	}
	mu.Lock()
	t.Logf("%d requests: %d succeeded, %d ended with a problem+json error; %d side effects in all", n, ok, failed, total)
	mu.Unlock()
	served.Range(func(k, v any) bool {
		t.Logf("answered %s ×%d while the store was interrupted (each retried by the Transport)", k, v.(*atomic.Int64).Load())
		return true
	})
	if ok == 0 {
		t.Error("no request succeeded: the store never came back")
	}
}

// ExpectUnavailable posts under a fresh key to url, whose store is down,
// and fails t unless the answer is 503 problem+json with Retry-After: the
// clear error a request gets while the store cannot be reached.
func ExpectUnavailable(t *testing.T, url string) {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(c, http.MethodPost, url, strings.NewReader("x"))
	req.Header.Set("Idempotency-Key", `"while-down"`)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("POST while the store is down: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Content-Type") != "application/problem+json" || resp.Header.Get("Retry-After") == "" {
		t.Fatalf("POST while the store is down = %d %v; want 503 problem+json with Retry-After", resp.StatusCode, resp.Header)
	}
}
